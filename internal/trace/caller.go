package trace

import (
	"path"
	"regexp"
	"runtime"
	"strings"
)

// Caller names the client-go function that called a tap: the first
// function up the call stack that accept takes (nil: any the trace can
// link, see Linkable), by the name the trace links ("cache.(*RealFIFO).Add",
// "workqueue.(*Typed[T]).Add"; a closure counts as the function it is
// in), or "". copied is true when it is the course's copy of a
// client-go function (internal/cachecopy's ProcessDeltas counts as
// cache.processDeltas).
func Caller(accept func(name string) bool) (name string, copied bool) {
	if accept == nil {
		accept = Linkable
	}
	pc := make([]uintptr, 64)
	frames := runtime.CallersFrames(pc[:runtime.Callers(2, pc)])
	for {
		f, more := frames.Next()
		name, copied := linkName(f.Function)
		if name != "" && accept(name) {
			return name, copied
		}
		if !more {
			return "", false
		}
	}
}

// Linkable reports whether the trace can link the function named name
// to its source (a key of sources).
func Linkable(name string) bool { return Source(name) != "" }

// closure matches the suffix that names a function literal: ".func1",
// ".func2.1".
var closure = regexp.MustCompile(`(\.func\d+)(\.\d+)*$`)

// linkName is the name a frame's function has in the trace, or "".
func linkName(function string) (name string, copied bool) {
	function = closure.ReplaceAllString(function, "")
	for _, pkg := range []string{"k8s.io/client-go/tools/cache.", "k8s.io/client-go/util/workqueue.", "k8s.io/client-go/rest.", "k8s.io/apimachinery/pkg/watch."} {
		if rest, ok := strings.CutPrefix(function, pkg); ok {
			// A generic type's methods: (*Typed[...]).Add on the stack.
			return path.Base(strings.TrimSuffix(pkg, ".")) + "." + strings.ReplaceAll(rest, "[...]", "[T]"), false
		}
	}
	if strings.Contains(function, "/internal/cachecopy.") {
		rest := function[strings.LastIndex(function, "cachecopy.")+len("cachecopy."):]
		if rest != "" {
			return "cache." + strings.ToLower(rest[:1]) + rest[1:], true
		}
	}
	return "", false
}

// RecordTransform records an object a Transform is given (see
// TransformEvent); text names the object.
func RecordTransform(obj any, text string) {
	if !On() {
		return
	}
	if e, ok := TransformEvent(text); ok {
		Record(e, obj)
	}
}

// TransformEvent is a Transform call as the trace shows it, in the lane
// of its caller, which only the call stack tells: the FIFO, which
// transforms each object as it queues its delta (the_real_fifo.go's
// addToItems_locked, addReplaceToItemsLocked, called by its Add,
// Update, Delete and Replace), or the reflector's watch-list, whose
// temporary store transforms each object of the initial events
// (reflector.go's watchList hands it the FIFO's Transformer). ok is
// false for a call from anywhere else. text names the object.
func TransformEvent(text string) (e Event, ok bool) {
	fn, _ := Caller(func(name string) bool {
		return Linkable(name) && (name == "cache.(*Reflector).watchList" ||
			strings.HasPrefix(name, "cache.(*RealFIFO).") || strings.HasPrefix(name, "cache.(*DeltaFIFO)."))
	})
	_, method, _ := strings.Cut(fn, ").")
	e = Event{Lane: FIFO, Func: fn, Text: text + " → Transform"}
	switch method {
	case "Add", "Update", "Delete", "Replace":
		e.Verb = map[string]string{"Add": "Added", "Update": "Updated", "Delete": "Deleted", "Replace": "Replaced"}[method]
	case "watchList":
		e.Lane, e.Verb, e.Text = Reflector, "watch-list", e.Text+" into its temporary store"
	default:
		return Event{}, false
	}
	return e, true
}
