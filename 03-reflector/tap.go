package main

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/clock"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/informer-walkthrough/informer-walkthrough/internal/apiserver"
	"github.com/informer-walkthrough/informer-walkthrough/internal/cluster"
	"github.com/informer-walkthrough/informer-walkthrough/internal/show"
)

// The window on the reflector's two inputs: its ListerWatcher and its
// clock. Both wrap what they tap and change nothing the reflector does;
// they only report what passes.

// tap is the ListWatch with a window on it: each watch request the
// server refuses, and each event it streams, is reported to lines before
// the reflector receives it.
type tap struct {
	*cache.ListWatch
	lines   *show.Lines    // set by pipeline.start
	streams sync.WaitGroup // the goroutines forwarding tapped streams
}

// WatchWithContext is the method the reflector calls (it prefers the
// context-taking forms; ListWatch.Watch is deprecated).
func (t *tap) WatchWithContext(ctx context.Context,
	opts metav1.ListOptions) (watch.Interface, error) {
	w, err := t.ListWatch.WatchWithContext(ctx, opts)
	if err != nil {
		t.lines.Send(describeWatchError(err))
		return nil, err
	}
	t.lines.Send("(new stream)")
	tw := &tappedWatch{in: w, out: make(chan watch.Event), stopped: make(chan struct{})}
	initial := opts.SendInitialEvents != nil && *opts.SendInitialEvents
	t.streams.Add(1)
	go func() {
		defer t.streams.Done()
		tw.forward(t.reporter(initial))
	}()
	return tw, nil
}

// reporter returns what reports each event of one stream. The initial
// events of a watch-list are reported sorted, once they have all come:
// the reflector gathers them in a map, so client-go does not define the
// order in which they reach the store.
func (t *tap) reporter(initial bool) func(watch.Event) {
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

func (w *tappedWatch) forward(report func(watch.Event)) {
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
	}
}

// tappedClock is a fake clock for the reflector that also says when the
// reflector uses it for one of two things:
//   - NewTimer arms the resync timer: that is the only timer a reflector
//     makes with NewTimer (reflector.go resyncChan). Step 7 waits for
//     it, then steps the clock, instead of sleeping for the resync period.
//   - After is how the reflector waits its backoff before a re-watch
//     after a 429 or a refused connection (reflector.go watch and
//     watchList). Step 5 learns how long, and steps the clock by exactly
//     that.
//
// On a real cluster nothing steps the clock for a backoff (step 5 is
// skipped there), so After waits real time: a 429 from the server's flow
// control, which the chapter cannot rule out, backs off the 10 ms the
// reflector asks for instead of stalling it until the chapter's time
// limit.
type tappedClock struct {
	*clocktesting.FakeClock
	armed     chan struct{}
	after     chan time.Duration
	realAfter bool // After waits real time (a real cluster)
}

func newTappedClock(c *cluster.Cluster) *tappedClock {
	return &tappedClock{
		FakeClock: clocktesting.NewFakeClock(apiserver.FixedTime),
		armed:     make(chan struct{}, 1),
		after:     make(chan time.Duration, 1),
		realAfter: !c.Embedded(),
	}
}

func (clk *tappedClock) NewTimer(d time.Duration) clock.Timer {
	t := clk.FakeClock.NewTimer(d)
	select {
	case clk.armed <- struct{}{}:
	default: // already signalled
	}
	return t
}

func (clk *tappedClock) After(d time.Duration) <-chan time.Time {
	if clk.realAfter {
		return clock.RealClock{}.After(d)
	}
	ch := clk.FakeClock.After(d) // the waiter exists before we tell
	select {
	case clk.after <- d:
	default: // an earlier wait not yet collected
	}
	return ch
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
// waits.
func (clk *tappedClock) awaitAfter(ctx context.Context) (time.Duration, error) {
	select {
	case d := <-clk.after:
		return d, nil
	case <-ctx.Done():
		return 0, fmt.Errorf("waiting for the reflector's backoff: %w", ctx.Err())
	}
}
