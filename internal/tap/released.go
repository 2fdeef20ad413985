package tap

import "github.com/informer-walkthrough/informer-walkthrough/internal/trace"

// HoldReporting is Hold for a step that must know when a held call goes
// on, not only that it is held: each call it holds records Released as
// the step lets it go (Release or Open), right before its tap returns.
// A handler's call then ends where the informer sees it end, so a step
// can say what happened while a handler was inside a call (10's
// RemoveEventHandler and ShutDownEventHandler).
func (r *Recorder) HoldReporting(n int, match func(Event) bool) *Gate {
	return r.hold(&Gate{match: match, left: n, tokens: make(chan struct{}, n),
		open: make(chan struct{}), reportRelease: true})
}

// Released is a held call the step let go, recorded as its tap goes on.
// A call still held when the recorder's context ends records nothing.
type Released struct{ Event }

// Trace is the call on its lane, marked released, named as Held names
// it.
func (r Released) Trace() (trace.Event, any) {
	e, _ := Held(r).Trace()
	e.Verb = "released"
	return e, nil
}
