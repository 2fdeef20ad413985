package tap

import (
	"context"
	"time"

	"k8s.io/client-go/tools/leaderelection"

	"github.com/informer-walkthrough/informer-walkthrough/internal/trace"
)

// LeaderCallbacks returns cb, each callback recording its call as a
// LeaderCall: OnStartedLeading before it runs (what the new leader does
// comes after it), OnStoppedLeading and OnNewLeader once they returned.
// A LeaderElector calls them as leaderelection.go says: OnStartedLeading
// on a goroutine of its own, OnStoppedLeading as Run returns (after it
// released the Lease, with ReleaseOnCancel), OnNewLeader on a goroutine
// of its own each time it sees the Lease's holder change.
func LeaderCallbacks(cb leaderelection.LeaderCallbacks, rec *Recorder) leaderelection.LeaderCallbacks {
	return leaderelection.LeaderCallbacks{
		OnStartedLeading: func(ctx context.Context) {
			rec.record(LeaderCall{Method: "OnStartedLeading", At: time.Now()})
			if cb.OnStartedLeading != nil {
				cb.OnStartedLeading(ctx)
			}
		},
		OnStoppedLeading: func() {
			if cb.OnStoppedLeading != nil {
				cb.OnStoppedLeading()
			}
			rec.record(LeaderCall{Method: "OnStoppedLeading", At: time.Now()})
		},
		OnNewLeader: func(identity string) {
			if cb.OnNewLeader != nil {
				cb.OnNewLeader(identity)
			}
			rec.record(LeaderCall{Method: "OnNewLeader", Identity: identity, At: time.Now()})
		},
	}
}

// LeaderCall is one call of a leader elector's callbacks.
type LeaderCall struct {
	Method   string // OnStartedLeading, OnStoppedLeading or OnNewLeader
	Identity string // OnNewLeader's: who leads now
	At       time.Time
}

func (c LeaderCall) String() string {
	if c.Method == "OnNewLeader" {
		return "OnNewLeader(" + c.Identity + ")"
	}
	return c.Method + "()"
}

// Trace is the call on the workers' lane: leading is what lets a
// replica's worker work.
func (c LeaderCall) Trace() (trace.Event, any) {
	return trace.Event{Lane: trace.Workers, Verb: c.Method, Text: c.Identity}, nil
}
