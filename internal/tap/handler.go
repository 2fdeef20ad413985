package tap

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/informer-walkthrough/informer-walkthrough/internal/show"
	"github.com/informer-walkthrough/informer-walkthrough/internal/trace"
)

// Handler is a cache.ResourceEventHandler that records each call the
// informer makes, then passes it on to Next (if set): a chapter's
// reporting handler is a Handler with no Next.
type Handler struct {
	Rec  *Recorder
	Name string                     // names the handler's calls, if a step has several
	Next cache.ResourceEventHandler // the handler observed, if any
	// Store, if set, is read at each call: what it holds then is
	// recorded with the call (HandlerCall.Stored).
	Store cache.Store
}

var _ cache.ResourceEventHandler = Handler{}

// HandlerCall is one call of a ResourceEventHandler, recorded once the
// handler returned.
type HandlerCall struct {
	Handler       string // Handler.Name
	Method        string // OnAdd, OnUpdate or OnDelete
	Obj           any    // the object; OnUpdate's new one; OnDelete's may be a tombstone
	Old           any    // OnUpdate's old object
	InInitialList bool   // OnAdd's second argument
	// Stored is what Handler.Store held at the call: name=resourceVersion,
	// sorted.
	Stored []string
	// Caller is the client-go function that called the handler (see
	// trace.Caller); Copied says it was the course's copy of it
	// (internal/cachecopy).
	Caller string
	Copied bool
}

func (h Handler) OnAdd(obj any, isInInitialList bool) {
	if h.Next != nil {
		h.Next.OnAdd(obj, isInInitialList)
	}
	h.record(HandlerCall{Method: "OnAdd", Obj: obj, InInitialList: isInInitialList})
}

func (h Handler) OnUpdate(oldObj, newObj any) {
	if h.Next != nil {
		h.Next.OnUpdate(oldObj, newObj)
	}
	h.record(HandlerCall{Method: "OnUpdate", Obj: newObj, Old: oldObj})
}

// OnDelete may be given a cache.DeletedFinalStateUnknown: a delete the
// informer learnt of from a relist. It is recorded as it came.
func (h Handler) OnDelete(obj any) {
	if h.Next != nil {
		h.Next.OnDelete(obj)
	}
	h.record(HandlerCall{Method: "OnDelete", Obj: obj})
}

func (h Handler) record(c HandlerCall) {
	c.Handler = h.Name
	c.Caller, c.Copied = trace.Caller(nil)
	if h.Store != nil {
		for _, obj := range h.Store.List() {
			if m, err := meta.Accessor(obj); err == nil {
				c.Stored = append(c.Stored, m.GetName()+"="+m.GetResourceVersion())
			}
		}
		slices.Sort(c.Stored)
	}
	h.Rec.record(c)
}

// Same reports whether OnUpdate was handed one object twice, as a
// resync hands it: OnUpdate(obj, obj).
func (c HandlerCall) Same() bool { return c.Method == "OnUpdate" && c.Old == c.Obj }

// Tombstone reports whether OnDelete was handed a
// DeletedFinalStateUnknown.
func (c HandlerCall) Tombstone() bool {
	_, ok := c.Obj.(cache.DeletedFinalStateUnknown)
	return ok
}

// String is the call as the chapters print it: the method, then the
// object; for OnUpdate the old and the new resourceVersion.
func (c HandlerCall) String() string {
	s := fmt.Sprintf("%-9s %s", c.Method, c.text())
	if c.Handler != "" {
		s = fmt.Sprintf("%-4s  %s", c.Handler, s)
	}
	if c.Stored != nil {
		s += "  store: " + strings.Join(c.Stored, " ")
	}
	return s
}

// text is the call's arguments, as String and the trace show them.
func (c HandlerCall) text() string {
	switch c.Method {
	case "OnAdd":
		return fmt.Sprintf("%s  isInInitialList=%t", show.Describe(c.Obj), c.InInitialList)
	case "OnUpdate":
		s := fmt.Sprintf("%s -> rv=%s", show.Describe(c.Old), resourceVersion(c.Obj))
		if _, err := meta.Accessor(c.Obj); err != nil { // no resourceVersion: 02's Pod
			s = fmt.Sprintf("%s -> %s", show.Describe(c.Old), show.Describe(c.Obj))
		}
		if c.Same() {
			s += "  (old == new)"
		}
		return s
	}
	return show.Describe(c.Obj)
}

// Trace is the call on the handlers lane, under the client-go function
// that made it. An OnUpdate(obj, obj) from an informer is a resync,
// which a timer repeats: marked Timed.
func (c HandlerCall) Trace() (trace.Event, any) {
	text := c.text()
	if c.Handler != "" {
		text = c.Handler + ": " + text
	}
	if c.Copied {
		text += " (called by the course's copy, internal/cachecopy)"
	}
	obj := c.Obj
	if c.Tombstone() {
		obj = nil // the tombstone's text names what it holds
	}
	return trace.Event{Lane: trace.Handlers, Verb: c.Method, Text: text, Func: c.Caller,
		Timed: c.Same() && !c.Copied}, obj
}

func resourceVersion(obj any) string {
	if m, err := meta.Accessor(obj); err == nil {
		return m.GetResourceVersion()
	}
	return "?"
}

// TypedHandler is Handler for the type-safe handlers new in v0.37: a
// cache.TypedResourceEventHandler[T] (an informer's
// AddTypedEventHandler takes one). It records the same HandlerCall; a
// DeletedObject whose final state is unknown is recorded as the
// DeletedFinalStateUnknown it carries, as an untyped handler gets it.
type TypedHandler[T cache.Object] struct {
	Rec   *Recorder
	Name  string
	Next  cache.TypedResourceEventHandler[T] // the handler observed, if any
	Store cache.Store
}

var _ cache.TypedResourceEventHandler[*metav1.PartialObjectMetadata] = TypedHandler[*metav1.PartialObjectMetadata]{}

func (h TypedHandler[T]) OnAdd(obj T, isInInitialList bool) {
	if h.Next != nil {
		h.Next.OnAdd(obj, isInInitialList)
	}
	h.untyped().record(HandlerCall{Method: "OnAdd", Obj: obj, InInitialList: isInInitialList})
}

func (h TypedHandler[T]) OnUpdate(oldObj, newObj T) {
	if h.Next != nil {
		h.Next.OnUpdate(oldObj, newObj)
	}
	h.untyped().record(HandlerCall{Method: "OnUpdate", Obj: newObj, Old: oldObj})
}

func (h TypedHandler[T]) OnDelete(d cache.DeletedObject[T]) {
	if h.Next != nil {
		h.Next.OnDelete(d)
	}
	var obj any = d.OptionalObj
	if d.FinalStateUnknown != nil {
		obj = *d.FinalStateUnknown
	}
	h.untyped().record(HandlerCall{Method: "OnDelete", Obj: obj})
}

func (h TypedHandler[T]) untyped() Handler { return Handler{Rec: h.Rec, Name: h.Name, Store: h.Store} }
