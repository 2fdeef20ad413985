package tap

import (
	"k8s.io/apimachinery/pkg/runtime"
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
		// A transform may edit its object in place (the informer owns
		// it until it is cached): keep what it was given.
		e := Transformed{Obj: obj}
		if o, ok := obj.(runtime.Object); ok {
			e.Obj = o.DeepCopyObject()
		}
		if trace.On() {
			// Only the call stack says who called: the FIFO, or a
			// watch-list's temporary store.
			e.trace, e.traced = trace.TransformEvent(show.Describe(obj))
		}
		out, err := obj, error(nil)
		if next != nil {
			out, err = next(obj)
		}
		e.Out, e.Err = out, err
		rec.record(e)
		return out, err
	}
}

// Transformed is one call of a transform.
type Transformed struct {
	Obj    any // what it was given: a copy taken before the call
	Out    any // what it returned
	Err    error
	trace  trace.Event
	traced bool
}

// Trace is the call in the lane of its caller (trace.TransformEvent):
// the FIFO queueing the object, or the reflector's watch-list; with
// what the transform returned.
func (t Transformed) Trace() (trace.Event, any) {
	if !t.traced {
		return trace.Event{Lane: trace.FIFO, Verb: "Transform", Text: show.Describe(t.Obj)}, t.Out
	}
	return t.trace, t.Out
}
