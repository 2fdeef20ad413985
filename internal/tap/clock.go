package tap

import (
	"fmt"
	"sync"
	"time"

	"k8s.io/utils/clock"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/informer-walkthrough/informer-walkthrough/internal/trace"
)

// Clock is a clock for the code under test (a reflector's
// ReflectorOptions.Clock) that records each timer the code sets on it:
// each NewTimer and After, with its duration (a ClockCall), and each
// timer of NewTimer as it fires (TimerFired).
//
// Its time is a fake clock's, which a step moves (Step): a timer of
// NewTimer fires when the step has moved the clock past it. After is
// different, since code waits in it (a reflector's backoff before it
// watches again): an After a step holds (Rec.Hold) waits until the step
// releases it, then returns a channel that has fired, so the wait lasts
// exactly as long as the step needs; any other After waits real time,
// as a wait the step did not plan for (a backoff after a 429 it did not
// stage) would.
type Clock struct {
	*clocktesting.FakeClock
	Rec  *Recorder
	Lane trace.Lane // the lane of the code that uses the clock, on the trace
}

var _ clock.WithTicker = (*Clock)(nil)

// NewClock returns a Clock whose fake time starts at now.
func NewClock(rec *Recorder, now time.Time, lane trace.Lane) *Clock {
	return &Clock{FakeClock: clocktesting.NewFakeClock(now), Rec: rec, Lane: lane}
}

// ClockCall is a timer the code under test set: NewTimer or After, for
// D. Func is the client-go function that set it.
type ClockCall struct {
	Method string
	D      time.Duration
	Func   string
	lane   trace.Lane
}

// TimerFired is a timer of NewTimer that fired, before the code that
// set it is told.
type TimerFired struct {
	D    time.Duration
	Func string // the client-go function that set it
	lane trace.Lane
}

func (c *Clock) NewTimer(d time.Duration) clock.Timer {
	call := ClockCall{Method: "NewTimer", D: d, lane: c.Lane}
	call.Func, _ = trace.Caller(nil)
	t := &tappedTimer{Timer: c.FakeClock.NewTimer(d), c: make(chan time.Time, 1), clk: c, call: call}
	t.forward(call)
	c.Rec.record(call)
	return t
}

func (c *Clock) After(d time.Duration) <-chan time.Time {
	call := ClockCall{Method: "After", D: d, lane: c.Lane}
	call.Func, _ = trace.Caller(nil)
	c.Rec.emit(call)
	if c.Rec.holdAt(call) { // the wait was the hold: it is over
		fired := make(chan time.Time, 1)
		fired <- c.FakeClock.Now()
		return fired
	}
	return clock.RealClock{}.After(d)
}

// tappedTimer is a fake timer whose firing the clock records before it
// passes the time on, as the timer's own channel would (room for one).
type tappedTimer struct {
	clock.Timer
	c    chan time.Time
	clk  *Clock
	call ClockCall

	mu   sync.Mutex
	stop chan struct{} // ends the goroutine that forwards the fake timer's fire
}

func (t *tappedTimer) C() <-chan time.Time { return t.c }

// forward starts the goroutine that waits for the fake timer (set by
// call) to fire, records it, and passes the time on; it ends then, or
// when the timer is stopped or reset, or the recorder's context ends.
func (t *tappedTimer) forward(call ClockCall) {
	stop := make(chan struct{})
	t.mu.Lock()
	t.stop = stop
	t.mu.Unlock()
	go func() {
		select {
		case now := <-t.Timer.C():
			t.clk.Rec.emit(TimerFired{D: call.D, Func: call.Func, lane: call.lane})
			select {
			case t.c <- now:
			default: // an earlier fire not read yet, as a time.Timer drops it
			}
		case <-stop:
		case <-t.clk.Rec.done:
		}
	}()
}

// halt ends the forwarding goroutine, if it still runs.
func (t *tappedTimer) halt() {
	t.mu.Lock()
	defer t.mu.Unlock()
	select {
	case <-t.stop:
	default:
		close(t.stop)
	}
}

func (t *tappedTimer) Stop() bool {
	t.halt()
	return t.Timer.Stop()
}

func (t *tappedTimer) Reset(d time.Duration) bool {
	t.halt()
	active := t.Timer.Reset(d)
	call := t.call
	call.D = d
	t.forward(call)
	return active
}

// Trace is the timer on the lane of the code that set it. How many
// timers code sets depends on timing (a backoff per failed watch): on
// the trace, their counts vary.
func (c ClockCall) Trace() (trace.Event, any) {
	return trace.Event{Lane: c.lane, Verb: c.Method, Text: c.D.String(),
		Func: c.Func, Timed: true}, nil
}

// Trace is the fired timer on the lane of the code that set it.
func (f TimerFired) Trace() (trace.Event, any) {
	return trace.Event{Lane: f.lane, Verb: "fired", Text: fmt.Sprintf("its %s timer (NewTimer)", f.D),
		Func: f.Func, Timed: true}, nil
}
