package main

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/clock"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/informer-walkthrough/informer-walkthrough/internal/apiserver"
	"github.com/informer-walkthrough/informer-walkthrough/internal/show"
	"github.com/informer-walkthrough/informer-walkthrough/internal/trace"
)

// The window on the reflector's two inputs: its ListerWatcher and its
// clock. Both wrap what they tap and change nothing the reflector does;
// they only report what passes.

// tap is the ListWatch with a window on it: each watch request that is
// refused, each event a stream carries, and each stream that ends
// without the reflector stopping it, is reported to lines before the
// reflector learns of it.
type tap struct {
	*cache.ListWatch
	lines   *show.Lines    // set by pipeline.start
	streams sync.WaitGroup // the goroutines forwarding tapped streams
	expired atomic.Bool    // a 410 went to the reflector: its next watch-list is a relist
}

// WatchWithContext is the method the reflector calls (it prefers the
// context-taking forms; ListWatch.Watch is deprecated).
func (t *tap) WatchWithContext(ctx context.Context,
	opts metav1.ListOptions) (watch.Interface, error) {
	initial := opts.SendInitialEvents != nil && *opts.SendInitialEvents
	t.recordWatch(ctx, opts, initial) // observe.go
	w, err := t.ListWatch.WatchWithContext(ctx, opts)
	if err != nil {
		if trace.On() {
			recordReflector(ctx, "watch error", describeWatchError(err), "cache.(*Reflector).watch")
		}
		t.lines.Send(describeWatchError(err))
		return nil, err
	}
	t.lines.Send("(new stream)")
	tw := &tappedWatch{in: w, out: make(chan watch.Event), stopped: make(chan struct{})}
	t.streams.Add(1)
	go func() {
		defer t.streams.Done()
		tw.forward(t.reporter(ctx, initial), func() {
			recordReflector(ctx, "watch ended", "its stream ended (it did not stop it)", "cache.handleAnyWatch")
			t.lines.Send("(stream ended)")
		})
	}()
	return tw, nil
}

// ListWithContext is the LIST the reflector makes when it does not
// start with a watch-list (step 2).
func (t *tap) ListWithContext(ctx context.Context,
	opts metav1.ListOptions) (runtime.Object, error) {
	if trace.On() {
		recordReflector(ctx, "list", fmt.Sprintf("resourceVersion=%s limit=%d",
			opts.ResourceVersion, opts.Limit), "cache.(*Reflector).list")
	}
	return t.ListWatch.ListWithContext(ctx, opts)
}

// reporter returns what reports each event of one stream. The initial
// events of a watch-list are reported sorted, once they have all come:
// the reflector gathers them in a map, so client-go does not define the
// order in which they reach the store.
func (t *tap) reporter(ctx context.Context, initial bool) func(watch.Event) {
	var held []string
	return func(ev watch.Event) {
		switch {
		case initial && ev.Type == watch.Added:
			held = append(held, describeEvent(ev))
			return
		case initial: // the bookmark that ends them (or an error)
			slices.Sort(held)
			for _, line := range held {
				t.lines.Send(line)
			}
			initial = false
		}
		t.recordError(ctx, ev) // observe.go
		t.lines.Send(describeEvent(ev))
	}
}

// wait returns once every tapped stream has been stopped and drained.
func (t *tap) wait() { t.streams.Wait() }

// tappedWatch forwards a watch's events, reporting each one first.
type tappedWatch struct {
	in      watch.Interface
	out     chan watch.Event
	stopped chan struct{}
	once    sync.Once
}

func (w *tappedWatch) ResultChan() <-chan watch.Event { return w.out }

func (w *tappedWatch) Stop() {
	w.once.Do(func() {
		close(w.stopped)
		w.in.Stop()
	})
}

func (w *tappedWatch) forward(report func(watch.Event), ended func()) {
	defer close(w.out)
	for ev := range w.in.ResultChan() {
		select {
		case <-w.stopped:
			// The reflector stopped this watch and will not read ev
			// (often an ERROR the stream makes up as it is closed).
			return
		default:
		}
		report(ev)
		select {
		case w.out <- ev:
		case <-w.stopped:
			return
		}
		if ev.Type == watch.Error {
			// The reflector returns on an ERROR event and stops the
			// watch; whether the stream's own end reaches it first is
			// a race, so it is not reported.
			<-w.stopped
			return
		}
	}
	select {
	case <-w.stopped: // the reflector stopped it
	default:
		ended() // the stream ended under the reflector (steps 4 to 6)
	}
}

// tappedClock is a fake clock for the reflector that also says when the
// reflector uses it for one of two things:
//   - NewTimer arms the resync timer: that is the only timer a reflector
//     makes with NewTimer (reflector.go resyncChan). Step 6 waits for
//     it, once the relist is done; step 7 then steps the clock, instead
//     of sleeping for the resync period.
//   - After is how the reflector waits its backoff before it watches
//     again after a 429 or a refused connection (reflector.go watch and
//     watchList). Once step 5 has said that it expects such a wait
//     (expectBackoff), After waits on the fake clock and reports how
//     long; the step then moves the clock by exactly that.
//
// An After that no step expects waits real time: a 429 the chapter did
// not stage (on a real cluster, from the server's flow control, once the
// rest client has used up its Retry-After retries) backs off the 10 ms
// the reflector asks for, instead of stalling it until the chapter's
// time limit.
type tappedClock struct {
	*clocktesting.FakeClock
	armed  chan struct{}
	after  chan time.Duration
	mu     sync.Mutex
	expect bool // the next After waits on the fake clock
}

func newTappedClock() *tappedClock {
	return &tappedClock{
		FakeClock: clocktesting.NewFakeClock(apiserver.FixedTime),
		armed:     make(chan struct{}, 1),
		after:     make(chan time.Duration, 1),
	}
}

func (clk *tappedClock) NewTimer(d time.Duration) clock.Timer {
	t := newResyncTimer(clk.FakeClock.NewTimer(d), d) // observe.go
	select {
	case clk.armed <- struct{}{}:
	default: // already signalled
	}
	return t
}

func (clk *tappedClock) After(d time.Duration) <-chan time.Time {
	clk.mu.Lock()
	expected := clk.expect
	clk.expect = false
	clk.mu.Unlock()
	recordBackoff(d, expected) // observe.go
	if !expected {
		return clock.RealClock{}.After(d)
	}
	ch := clk.FakeClock.After(d) // the waiter exists before we tell
	clk.after <- d               // room for one: expectBackoff emptied it
	return ch
}

// expectBackoff makes the reflector's next After wait on the fake clock,
// for awaitAfter to report.
func (clk *tappedClock) expectBackoff() {
	clk.mu.Lock()
	defer clk.mu.Unlock()
	clk.expect = true
	select {
	case <-clk.after: // an earlier wait never collected
	default:
	}
}

// forgetArmed forgets that a resync timer was armed.
func (clk *tappedClock) forgetArmed() {
	select {
	case <-clk.armed:
	default:
	}
}

// awaitArmed returns once the reflector has armed a resync timer.
func (clk *tappedClock) awaitArmed(ctx context.Context) error {
	select {
	case <-clk.armed:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("waiting for the resync timer: %w", ctx.Err())
	}
}

// awaitAfter returns how long the reflector waits on the clock, once it
// waits (after expectBackoff).
func (clk *tappedClock) awaitAfter(ctx context.Context) (time.Duration, error) {
	select {
	case d := <-clk.after:
		return d, nil
	case <-ctx.Done():
		return 0, fmt.Errorf("waiting for the reflector's backoff: %w", ctx.Err())
	}
}
