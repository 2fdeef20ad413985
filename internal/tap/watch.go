package tap

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"

	"github.com/informer-walkthrough/informer-walkthrough/internal/show"
	"github.com/informer-walkthrough/informer-walkthrough/internal/trace"
)

// Watch is a watch.Interface that records each event it relays from
// the watch it wraps, as a WatchEvent, once its consumer (a reflector)
// has taken it from ResultChan.
type Watch struct {
	watch.Interface
	rec  *Recorder
	out  chan watch.Event
	stop chan struct{}
	once sync.Once
}

// NewWatch wraps w: its events come on the Watch's ResultChan, one at a
// time, each recorded once taken.
func NewWatch(w watch.Interface, rec *Recorder) *Watch {
	t := &Watch{Interface: w, rec: rec, out: make(chan watch.Event), stop: make(chan struct{})}
	go t.relay()
	return t
}

// relay hands on each event, unbuffered, so that "recorded" means "the
// consumer has it"; it ends when the wrapped watch ends or Stop is
// called.
func (t *Watch) relay() {
	defer close(t.out)
	for ev := range t.Interface.ResultChan() {
		select {
		case t.out <- ev:
			t.rec.record(WatchEvent(ev))
		case <-t.stop:
			return
		}
	}
}

func (t *Watch) ResultChan() <-chan watch.Event { return t.out }

// Stop stops the wrapped watch, and the relay with it.
func (t *Watch) Stop() {
	t.once.Do(func() { close(t.stop) })
	t.Interface.Stop()
}

// WatchEvent is one event a Watch relayed.
type WatchEvent watch.Event

// String is the event in short, as a sentence lists events:
// "ADDED pod/web-1" (the kind from the object's Go type).
func (e WatchEvent) String() string {
	return fmt.Sprintf("%s %s", e.Type, kindAndName(e.Object))
}

// Trace is the event on the reflector lane, where a reflector takes
// it from its watch (handleAnyWatch).
func (e WatchEvent) Trace() (trace.Event, any) {
	return trace.Event{Lane: trace.Reflector, Verb: string(e.Type),
		Text: kindAndName(e.Object) + " taken from the watch", Func: "cache.handleAnyWatch"}, e.Object
}

// kindAndName is "pod/web-1"; an object without metadata (a Status)
// by its Go type.
func kindAndName(obj runtime.Object) string {
	if _, ok := obj.(*metav1.Status); ok {
		return fmt.Sprintf("%T", obj)
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return fmt.Sprintf("%T", obj)
	}
	kind := reflect.Indirect(reflect.ValueOf(obj)).Type().Name()
	return strings.ToLower(kind) + "/" + m.GetName()
}

// WithWatchEvents returns t with each watch it opens wrapped in a
// Watch, so that the events a reflector takes are recorded too. It
// says of watch-list what t says.
func (t *ListerWatcher) WithWatchEvents() cache.ListerWatcher {
	return watchEvents{t}
}

type watchEvents struct{ *ListerWatcher }

func (t watchEvents) WatchWithContext(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
	w, err := t.ListerWatcher.WatchWithContext(ctx, o)
	if err != nil {
		return w, err
	}
	return NewWatch(w, t.Rec), nil
}

func (t watchEvents) Watch(o metav1.ListOptions) (watch.Interface, error) {
	return t.WatchWithContext(context.Background(), o)
}

// WatchEvents is the watch events the recorder gets, each as
// WatchEvent.String shows it, for show.Next and show.Sorted; what else
// it gets is skipped.
func (r *Recorder) WatchEvents() show.Source { return watchEventLines{r} }

type watchEventLines struct{ r *Recorder }

func (w watchEventLines) Await(ctx context.Context, n int) ([]string, error) {
	var got []string
	for len(got) < n {
		e, err := w.r.Next(ctx)
		if err != nil {
			return got, err
		}
		if ev, ok := e.(WatchEvent); ok {
			got = append(got, ev.String())
		}
	}
	return got, nil
}
