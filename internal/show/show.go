// Package show is what the chapters use to *show* client-go at work, and
// nothing of what they teach: a channel of lines that handlers and taps
// report on and a step awaits, and the request log as lines.
//
// A chapter's handlers run on client-go's goroutines, so they do not
// print: they Send a line, and the step that made the change Awaits the
// lines it expects and prints them in order. That is how the output stays
// the same on every run without a single sleep.
package show

import (
	"context"
	"fmt"
	"io"
	"slices"

	"github.com/informer-walkthrough/informer-walkthrough/internal/apiserver"
)

// Lines carries what handlers and taps report to the step that awaits it.
type Lines struct {
	done <-chan struct{}
	ch   chan string
}

// NewLines returns a Lines that stops accepting lines when ctx ends, so a
// handler that reports never keeps an informer from shutting down.
func NewLines(ctx context.Context) *Lines {
	return &Lines{done: ctx.Done(), ch: make(chan string, 1000)}
}

// Send reports one line. It blocks while the buffer is full and gives up
// once the context has ended.
func (l *Lines) Send(line string) {
	select {
	case <-l.done:
		return // stopping: what a stopping informer says is not the lesson
	default:
	}
	select {
	case l.ch <- line:
	case <-l.done:
	}
}

// Sendf is Send with fmt.Sprintf.
func (l *Lines) Sendf(format string, a ...any) { l.Send(fmt.Sprintf(format, a...)) }

// Await returns the next n lines, in the order they were sent, or an
// error that says what it was still waiting for when ctx ended.
func (l *Lines) Await(ctx context.Context, n int) ([]string, error) {
	got := make([]string, 0, n)
	for len(got) < n {
		select {
		case line := <-l.ch:
			got = append(got, line)
		case <-ctx.Done():
			return got, fmt.Errorf("waiting for line %d of %d (got %q): %w",
				len(got)+1, n, got, context.Cause(ctx))
		}
	}
	return got, nil
}

// AwaitSorted is Await, sorted: for lines whose order client-go does not
// promise (the objects of an initial list, or two handlers' calls).
func (l *Lines) AwaitSorted(ctx context.Context, n int) ([]string, error) {
	got, err := l.Await(ctx, n)
	slices.Sort(got)
	return got, err
}

// Drain returns the lines sent and not yet awaited, without waiting.
func (l *Lines) Drain() []string {
	var got []string
	for {
		select {
		case line := <-l.ch:
			got = append(got, line)
		default:
			return got
		}
	}
}

// Print writes each line after prefix (usually an indent).
func Print(out io.Writer, prefix string, lines []string) {
	for _, line := range lines {
		fmt.Fprintf(out, "%s%s\n", prefix, line)
	}
}

// Requests renders the request log (cluster.Requests) one line per
// request, as METHOD path?query, keeping only the requests keep accepts
// (all of them when keep is nil).
func Requests(reqs []apiserver.Request, keep func(apiserver.Request) bool) []string {
	var lines []string
	for _, r := range reqs {
		if keep == nil || keep(r) {
			lines = append(lines, r.String())
		}
	}
	return lines
}

// ListsAndWatches keeps the requests an informer makes: list and watch.
func ListsAndWatches(r apiserver.Request) bool {
	return r.Verb == "list" || r.Verb == "watch"
}
