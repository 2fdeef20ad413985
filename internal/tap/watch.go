package tap

import (
	"context"
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/informer-walkthrough/informer-walkthrough/internal/show"
	"github.com/informer-walkthrough/informer-walkthrough/internal/trace"
)

// Watch is a watch.Interface that relays the stream it wraps and
// records each event the stream carries, before its consumer (a
// reflector) gets it; and, if the stream ends while the consumer is
// still reading, that it ended.
//
// What a stream carries once its consumer stopped it is neither relayed
// nor recorded: the consumer no longer reads (and a stream that is
// closed under its reader often makes up an ERROR). What it carries
// once the context of the Watch call ended is relayed, not recorded: a
// reflector that stops cancels that context, which closes the stream
// under it (client-go then makes up an ERROR, "context canceled"), and
// whether the reflector reads it first is a race. Nor is the end of a
// stream that carried an ERROR: a reflector returns on an ERROR and
// stops the watch itself (reflector.go handleAnyWatch), so which comes
// first is a race, and the ERROR was the end.
type Watch struct {
	ctx     context.Context // the Watch call's
	in      watch.Interface
	rec     *Recorder
	out     chan watch.Event
	stopped chan struct{}
	once    sync.Once
}

var _ watch.Interface = (*Watch)(nil)

// NewWatch wraps w, the stream a Watch call made with ctx opened, and
// starts relaying its events; done, if not nil, is called once the
// relay has ended.
func NewWatch(ctx context.Context, w watch.Interface, rec *Recorder, done func()) *Watch {
	t := &Watch{ctx: ctx, in: w, rec: rec, out: make(chan watch.Event), stopped: make(chan struct{})}
	go func() {
		if done != nil {
			defer done()
		}
		t.relay()
	}()
	return t
}

// WatchEvent is one event a watch stream carried.
type WatchEvent struct{ watch.Event }

// WatchEnded is a watch stream that ended while its consumer still read
// it: an io.EOF, as when a server or a load balancer closes a watch.
type WatchEnded struct{}

func (w *Watch) ResultChan() <-chan watch.Event { return w.out }

func (w *Watch) Stop() {
	w.once.Do(func() {
		close(w.stopped)
		w.in.Stop()
	})
}

func (w *Watch) relay() {
	defer close(w.out)
	errored := false
	for ev := range w.in.ResultChan() {
		select {
		case <-w.stopped:
			return
		default:
		}
		if w.ctx.Err() == nil {
			w.rec.record(WatchEvent{ev})
		}
		errored = errored || ev.Type == watch.Error
		select {
		case w.out <- ev:
		case <-w.stopped:
			return
		}
	}
	select {
	case <-w.stopped: // the consumer stopped it
	default:
		if !errored && w.ctx.Err() == nil {
			w.rec.record(WatchEnded{})
		}
	}
}

// String is the event as show.Event shows it (an object it does not
// know, as show.Describe does), a bookmark that ends a watch-list's
// initial events marked so.
func (e WatchEvent) String() string {
	s := fmt.Sprintf("%-9s %s", e.Type, show.Describe(e.Object))
	switch e.Object.(type) {
	case *corev1.Pod, *metav1.Status:
		s = show.Event(e.Event)
	}
	if e.Type == watch.Bookmark && initialEventsEnd(e.Object) {
		s += "  " + metav1.InitialEventsAnnotationKey + "=true"
	}
	return s
}

// initialEventsEnd reports whether obj is annotated as the end of a
// watch-list's initial events.
func initialEventsEnd(obj any) bool {
	m, err := meta.Accessor(obj)
	return err == nil && m.GetAnnotations()[metav1.InitialEventsAnnotationKey] == "true"
}

// Trace is the event on the reflector lane, as the reflector receives
// it in handleAnyWatch.
func (e WatchEvent) Trace() (trace.Event, any) {
	te := trace.Event{Lane: trace.Reflector, Verb: string(e.Type), Func: "cache.handleAnyWatch"}
	switch obj := e.Object.(type) {
	case *metav1.Status:
		te.Text = fmt.Sprintf("%d %s: %s", obj.Code, obj.Reason, obj.Message)
		return te, nil
	}
	if e.Type == watch.Bookmark { // all a bookmark is sure to carry
		te.Text = "rv=" + resourceVersion(e.Object)
		if initialEventsEnd(e.Object) {
			te.Text += " " + metav1.InitialEventsAnnotationKey
		}
		return te, nil
	}
	te.Text = show.Describe(e.Object)
	return te, e.Object
}

func (WatchEnded) String() string { return "(stream ended)" }

// Trace is the end on the reflector lane: handleAnyWatch sees its
// channel closed.
func (WatchEnded) Trace() (trace.Event, any) {
	return trace.Event{Lane: trace.Reflector, Verb: "watch ended",
		Text: "its stream ended (it did not stop it)", Func: "cache.handleAnyWatch"}, nil
}
