package main

// What the chapter needs only to show its watches, not what it teaches:
// reading exactly the events a step caused (so nothing waits on a timer),
// one aligned line for each event, pod, response and wire frame, and the
// client that answers step 7's watch as kube-apiserver answers a watch
// from before its window.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/informer-walkthrough/informer-walkthrough/internal/cluster"
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
		fmt.Fprintln(out, " ", describeEvent(ev))
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

// describeEvent prints one event: its type, then what it carries.
func describeEvent(ev watch.Event) string {
	switch obj := ev.Object.(type) {
	case *corev1.Pod:
		if ev.Type == watch.Bookmark {
			return fmt.Sprintf("%-9s rv=%s", ev.Type, obj.ResourceVersion)
		}
		return fmt.Sprintf("%-9s %s", ev.Type, describe(obj))
	case *metav1.Status:
		return fmt.Sprintf("%-9s %d %s: %s", ev.Type, obj.Code, obj.Reason, obj.Message)
	default:
		return fmt.Sprintf("%-9s %T", ev.Type, obj)
	}
}

// describe prints a pod as name, phase, resourceVersion, and whether its
// deletion has begun.
func describe(p *corev1.Pod) string {
	s := fmt.Sprintf("pod/%-6s %-8s rv=%s", p.Name, p.Status.Phase, p.ResourceVersion)
	if p.DeletionTimestamp != nil {
		s += "  (deletionTimestamp set)"
	}
	return s
}

// printResponse prints the watch request, the start of its answer (the
// status and the content type), then the next n frames of its body,
// shortened.
func printResponse(out io.Writer, resp *http.Response, n int) error {
	u := resp.Request.URL
	fmt.Fprintf(out, "  GET %s?watch=true&resourceVersion=%s\n",
		u.Path, u.Query().Get("resourceVersion"))
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
		fmt.Fprintln(out, " ", shorten(frames.Text()))
	}
	return nil
}

// shorten keeps a frame's beginning up to the object's resourceVersion,
// dropping the uid (which differs on every cluster).
func shorten(frame string) string {
	end := strings.Index(frame, `"resourceVersion":`)
	if end < 0 {
		return frame
	}
	end += strings.IndexByte(frame[end+len(`"resourceVersion":"`):], '"') +
		len(`"resourceVersion":"`) + 1
	s := frame[:end]
	if i := strings.Index(s, `"uid":"`); i >= 0 {
		j := strings.IndexByte(s[i+len(`"uid":"`):], '"') + i + len(`"uid":"`) + 1
		s = s[:i] + `"uid":…` + s[j:]
	}
	return s + ",…}…}"
}

// expiringClient is a clientset whose transport answers every watch
// itself, without sending it, the way kube-apiserver's watch cache
// answers a watch from a resourceVersion older than its window: 200 OK,
// then one ERROR event whose object is a 410 Expired Status, "too old
// resource version: <asked> (<windowStart>)" (k8s.io/apiserver v0.37.2,
// pkg/storage/cacher/watch_cache_history.go#L236-L237, and cacher.go
// #L635-L641 for the ERROR event). It says so, once, on out.
func expiringClient(out io.Writer, c *cluster.Cluster, windowStart string) (kubernetes.Interface, error) {
	fmt.Fprintf(out, "  (this client answers the watch itself, as kube-apiserver does once its history starts after rv=%s)\n", windowStart)
	cfg := rest.CopyConfig(c.Config)
	cfg.Wrap(func(next http.RoundTripper) http.RoundTripper {
		return roundTripper(func(r *http.Request) (*http.Response, error) {
			if r.URL.Query().Get("watch") != "true" {
				return next.RoundTrip(r)
			}
			return expiredWatch(r, windowStart)
		})
	})
	return kubernetes.NewForConfig(cfg)
}

// expiredWatch is a watch response with one frame: an ERROR event
// carrying the Status of apierrors.NewResourceExpired.
func expiredWatch(r *http.Request, windowStart string) (*http.Response, error) {
	asked := r.URL.Query().Get("resourceVersion")
	st := apierrors.NewResourceExpired(fmt.Sprintf("too old resource version: %s (%s)", asked, windowStart)).Status()
	st.Kind, st.APIVersion = "Status", "v1"
	frame, err := json.Marshal(metav1.WatchEvent{Type: string(watch.Error), Object: runtime.RawExtension{Object: &st}})
	if err != nil {
		return nil, err
	}
	return &http.Response{
		Status:     "200 OK",
		StatusCode: http.StatusOK,
		Proto:      "HTTP/1.1",
		ProtoMajor: 1,
		ProtoMinor: 1,
		Header:     http.Header{"Content-Type": {"application/json"}},
		Body:       io.NopCloser(bytes.NewReader(append(frame, '\n'))),
		Request:    r,
	}, nil
}

// roundTripper is a function as an http.RoundTripper.
type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
