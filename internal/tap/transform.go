package tap

import (
	"k8s.io/client-go/tools/cache"

	"github.com/informer-walkthrough/informer-walkthrough/internal/show"
	"github.com/informer-walkthrough/informer-walkthrough/internal/trace"
)

// Transform returns a cache.TransformFunc (an informer's, or a
// factory's WithTransform) that calls next, if set, on each object the
// informer hands it, then records the call as a Transformed. The FIFO
// calls a transform as it queues an object, before the processing loop
// writes the cache: a step that holds a Transformed (Recorder.Hold)
// keeps that object, and every one queued after it, out of the cache
// meanwhile.
func Transform(rec *Recorder, next cache.TransformFunc) cache.TransformFunc {
	return func(obj any) (any, error) {
		out, err := obj, error(nil)
		if next != nil {
			out, err = next(obj)
		}
		e := Transformed{Obj: obj}
		if trace.On() {
			// Only the call stack says who called: the FIFO, or a
			// watch-list's temporary store.
			e.trace, e.traced = trace.TransformEvent(show.Describe(obj))
		}
		rec.record(e)
		return out, err
	}
}

// Transformed is one call of a transform: the object it was given.
type Transformed struct {
	Obj    any
	trace  trace.Event
	traced bool
}

// Trace is the call in the lane of its caller (trace.TransformEvent):
// the FIFO queueing the object, or the reflector's watch-list.
func (t Transformed) Trace() (trace.Event, any) {
	if !t.traced {
		return trace.Event{Lane: trace.FIFO, Verb: "Transform", Text: show.Describe(t.Obj)}, t.Obj
	}
	return t.trace, t.Obj
}
