package tap

import (
	"testing"
	"time"

	"github.com/informer-walkthrough/informer-walkthrough/internal/trace"
)

// TestClock: NewTimer is recorded, and fires when the step moves the
// fake clock past it, recorded before the time is passed on; a held
// After waits until the step releases it, then has fired; an After no
// step holds waits real time; a stopped timer's goroutine ends.
func TestClock(t *testing.T) {
	ctx := t.Context()
	rec := NewRecorder(ctx)
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clk := NewClock(rec, start, trace.Reflector)

	timer := clk.NewTimer(30 * time.Second)
	if e, err := rec.Next(ctx); err != nil || e != (ClockCall{Method: "NewTimer", D: 30 * time.Second, lane: trace.Reflector}) {
		t.Fatalf("NewTimer recorded %#v, %v", e, err)
	}
	clk.Step(30 * time.Second)
	select {
	case now := <-timer.C():
		if !now.Equal(start.Add(30 * time.Second)) {
			t.Errorf("the timer passed on %s", now)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the timer did not fire when the clock moved past it")
	}
	if e, err := rec.Next(ctx); err != nil || e.(TimerFired).D != 30*time.Second {
		t.Fatalf("recorded %#v, %v; want TimerFired", e, err)
	}

	gate := rec.Hold(1, func(e Event) bool { c, ok := e.(ClockCall); return ok && c.Method == "After" })
	returned := make(chan (<-chan time.Time), 1)
	go func() { returned <- clk.After(time.Hour) }()
	events, err := rec.Await(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	if held, ok := events[1].(Held); !ok || held.Event.(ClockCall).D != time.Hour {
		t.Fatalf("recorded %#v, want the After, then Held", events)
	}
	select {
	case <-returned:
		t.Fatal("a held After returned before the step released it")
	default:
	}
	gate.Release()
	select {
	case <-<-returned: // fired at once: the wait was the hold
	case <-time.After(5 * time.Second):
		t.Fatal("a released After did not fire")
	}

	select {
	case <-clk.After(time.Millisecond): // no step holds it: real time
	case <-time.After(5 * time.Second):
		t.Fatal("an After no step holds did not fire in real time")
	}

	stopped := clk.NewTimer(time.Minute)
	if !stopped.Stop() {
		t.Error("Stop of an active timer returned false")
	}
	clk.Step(time.Hour)
	select {
	case <-stopped.C():
		t.Error("a stopped timer fired")
	case <-time.After(10 * time.Millisecond):
	}
}
