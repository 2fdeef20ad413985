package main

// What the chapter needs only to show its watches, not what it teaches:
// reading exactly the events a step caused (so nothing waits on a timer),
// one aligned line for each event, pod, response and wire frame, and
// which requests step 7's client answers itself.

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"

	"k8s.io/apimachinery/pkg/watch"

	"github.com/informer-walkthrough/informer-walkthrough/internal/apiserver"
	"github.com/informer-walkthrough/informer-walkthrough/internal/show"
)

// printEvents receives the next n events of w and prints one line for
// each.
func printEvents(ctx context.Context, out io.Writer, w watch.Interface, n int) error {
	_, err := printLast(ctx, out, w, n)
	return err
}

// printLast is printEvents for a step that looks into what came last:
// it returns the last of the n events.
func printLast(ctx context.Context, out io.Writer, w watch.Interface, n int) (watch.Event, error) {
	events, err := receive(ctx, w, n)
	for _, ev := range events {
		fmt.Fprintln(out, " ", show.Event(ev))
	}
	if err != nil {
		return watch.Event{}, err
	}
	return events[n-1], nil
}

// receive reads n events from a watch, or fails if the stream ends or
// the context ends first.
func receive(ctx context.Context, w watch.Interface, n int) ([]watch.Event, error) {
	// !+receive
	var events []watch.Event
	for len(events) < n {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				return nil, fmt.Errorf("watch closed after %d of %d events",
					len(events), n)
			}
			events = append(events, ev)
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for watch event %d of %d: %w",
				len(events)+1, n, context.Cause(ctx))
		}
	}
	return events, nil
	// !-receive
}

// printResponse prints the watch request, the start of its answer (the
// status and the content type), then the next n frames of its body,
// shortened (show.Frame).
func printResponse(out io.Writer, resp *http.Response, n int) error {
	// The request, in the request log's form, as every chapter prints
	// its requests.
	req := apiserver.NewRequest(resp.Request)
	show.Print(out, "  ", show.Requests([]apiserver.Request{req}, nil))
	fmt.Fprintf(out, "  %s, Content-Type: %s\n",
		resp.Status, resp.Header.Get("Content-Type"))
	// One frame per line; a frame holds a whole object, which can be
	// larger than a Scanner's default 64 KiB line.
	frames := bufio.NewScanner(resp.Body)
	frames.Buffer(nil, 4<<20)
	for range n {
		if !frames.Scan() {
			return errors.Join(errors.New("watch stream ended early"), frames.Err())
		}
		fmt.Fprintln(out, " ", show.Frame(frames.Text()))
	}
	return nil
}

// isWatch picks the watch requests out of the request log's form.
func isWatch(r apiserver.Request) bool { return r.Verb == "watch" }
