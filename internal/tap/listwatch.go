package tap

import (
	"context"
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"

	"github.com/informer-walkthrough/informer-walkthrough/internal/trace"
)

// ListerWatcher is a cache.ListerWatcher (with context, as a v0.37
// reflector calls it) that records each List and Watch a reflector
// makes, once it returned.
type ListerWatcher struct {
	LW  cache.ListerWatcherWithContext
	Rec *Recorder
	// Streams, if set, has each stream a Watch opened recorded too:
	// the events it carries and its end (Watch). Wait returns once
	// every stream relayed so has ended.
	Streams bool
	streams sync.WaitGroup
	// watchListUnsupported is what the wrapped ListerWatcher says of
	// itself (IsWatchListSemanticsUnSupported).
	watchListUnsupported bool
}

// NewListerWatcher wraps lw. A ListerWatcher that opts out of
// watch-list (a fake clientset's does) still does, wrapped.
func NewListerWatcher(lw cache.ListerWatcher, rec *Recorder) *ListerWatcher {
	t := &ListerWatcher{LW: cache.ToListerWatcherWithContext(lw), Rec: rec}
	if u, ok := lw.(interface{ IsWatchListSemanticsUnSupported() bool }); ok {
		t.watchListUnsupported = u.IsWatchListSemanticsUnSupported()
	}
	return t
}

var (
	_ cache.ListerWatcher            = (*ListerWatcher)(nil)
	_ cache.ListerWatcherWithContext = (*ListerWatcher)(nil)
)

// ListWatchCall is one List or Watch a reflector made.
type ListWatchCall struct {
	Method  string // List or Watch
	Options metav1.ListOptions
	// ResourceVersion and Items are what a List returned.
	ResourceVersion string
	Items           int
	Err             error
}

func (t *ListerWatcher) ListWithContext(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
	list, err := t.LW.ListWithContext(ctx, o)
	c := ListWatchCall{Method: "List", Options: o, Err: err}
	if err == nil {
		if m, merr := meta.ListAccessor(list); merr == nil {
			c.ResourceVersion = m.GetResourceVersion()
		}
		c.Items = meta.LenList(list)
	}
	t.Rec.record(c)
	return list, err
}

func (t *ListerWatcher) WatchWithContext(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
	w, err := t.LW.WatchWithContext(ctx, o)
	t.Rec.record(ListWatchCall{Method: "Watch", Options: o, Err: err})
	if err != nil || !t.Streams {
		return w, err
	}
	t.streams.Add(1)
	return NewWatch(ctx, w, t.Rec, t.streams.Done), nil
}

// Wait returns once every stream relayed for Streams has ended: the
// consumer stopped it, or it ended on its own and was read to its end.
func (t *ListerWatcher) Wait() { t.streams.Wait() }

// List and Watch are the deprecated context-less methods that
// cache.ListerWatcher still requires; a v0.37 reflector does not call them.
func (t *ListerWatcher) List(o metav1.ListOptions) (runtime.Object, error) {
	return t.ListWithContext(context.Background(), o)
}

func (t *ListerWatcher) Watch(o metav1.ListOptions) (watch.Interface, error) {
	return t.WatchWithContext(context.Background(), o)
}

// IsWatchListSemanticsUnSupported passes on what the wrapped
// ListerWatcher says (listwatch.go's listWatcherWithWatchListSemanticsWrapper).
func (t *ListerWatcher) IsWatchListSemanticsUnSupported() bool { return t.watchListUnsupported }

// String is the call as the chapters print it.
func (c ListWatchCall) String() string {
	s := fmt.Sprintf("%s(resourceVersion=%q", c.Method, c.Options.ResourceVersion)
	if c.Options.SendInitialEvents != nil && *c.Options.SendInitialEvents {
		s += ", sendInitialEvents"
	}
	s += ")"
	switch {
	case c.Err != nil:
		s += " → " + c.Err.Error()
	case c.Method == "List":
		s += fmt.Sprintf(" → %d items, rv=%s", c.Items, c.ResourceVersion)
	}
	return s
}

// Trace is the call on the reflector lane, under the reflector's
// function that made it.
func (c ListWatchCall) Trace() (trace.Event, any) {
	fn := "cache.(*Reflector).list"
	if c.Method == "Watch" {
		fn, _ = trace.Caller(func(name string) bool {
			return name == "cache.(*Reflector).watch" || name == "cache.(*Reflector).watchList"
		})
	}
	return trace.Event{Lane: trace.Reflector, Verb: c.Method, Text: c.String(), Func: fn}, nil
}
