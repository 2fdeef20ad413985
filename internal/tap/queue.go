package tap

import (
	"fmt"
	"time"

	"k8s.io/client-go/util/workqueue"

	"github.com/informer-walkthrough/informer-walkthrough/internal/trace"
)

// Queue is a workqueue.TypedRateLimitingInterface[T] that records the
// calls a controller makes on it. It embeds the queue it wraps, so Len,
// ShuttingDown and NumRequeues are the queue's own.
//
// Each call is recorded where its effect is certain: an Add, a Get, a
// Forget, an AddRateLimited once the call returned (a burst of Adds is
// all in when the step sees the last); Done before the call, because
// Done can hand the key straight to another worker, whose Get must come
// after it.
type Queue[T comparable] struct {
	workqueue.TypedRateLimitingInterface[T]
	Rec *Recorder
}

var _ workqueue.TypedRateLimitingInterface[string] = Queue[string]{}

// QueueCall is one call on a workqueue.
type QueueCall struct {
	Method string // Add, Get, Done, Forget, AddRateLimited, AddAfter, ShutDown, ShutDownWithDrain
	Item   any    // the key; for a Get, the key it handed out
	// Requeues is NumRequeues(Item) after an AddRateLimited: the
	// failures the rate limiter counts for it.
	Requeues int
	Delay    time.Duration // AddAfter's
	Shutdown bool          // a Get that reported shutdown
}

func (q Queue[T]) Add(item T) {
	q.TypedRateLimitingInterface.Add(item)
	q.Rec.record(QueueCall{Method: "Add", Item: item})
}

// Get records what it handed out, once it has: a worker that Gets
// waits here until there is a key, or the queue shuts down.
func (q Queue[T]) Get() (T, bool) {
	item, shutdown := q.TypedRateLimitingInterface.Get()
	c := QueueCall{Method: "Get", Item: item, Shutdown: shutdown}
	if shutdown {
		c.Item = nil
	}
	q.Rec.record(c)
	return item, shutdown
}

func (q Queue[T]) Done(item T) {
	q.Rec.record(QueueCall{Method: "Done", Item: item})
	q.TypedRateLimitingInterface.Done(item)
}

func (q Queue[T]) Forget(item T) {
	q.TypedRateLimitingInterface.Forget(item)
	q.Rec.record(QueueCall{Method: "Forget", Item: item})
}

func (q Queue[T]) AddRateLimited(item T) {
	q.TypedRateLimitingInterface.AddRateLimited(item)
	q.Rec.record(QueueCall{Method: "AddRateLimited", Item: item,
		Requeues: q.TypedRateLimitingInterface.NumRequeues(item)})
}

func (q Queue[T]) AddAfter(item T, d time.Duration) {
	q.TypedRateLimitingInterface.AddAfter(item, d)
	q.Rec.record(QueueCall{Method: "AddAfter", Item: item, Delay: d})
}

func (q Queue[T]) ShutDown() {
	q.TypedRateLimitingInterface.ShutDown()
	q.Rec.record(QueueCall{Method: "ShutDown"})
}

func (q Queue[T]) ShutDownWithDrain() {
	q.TypedRateLimitingInterface.ShutDownWithDrain()
	q.Rec.record(QueueCall{Method: "ShutDownWithDrain"})
}

// queueFuncs are the client-go functions each call runs, for the trace.
var queueFuncs = map[string]string{
	"Add":               "workqueue.(*Typed[T]).Add",
	"Get":               "workqueue.(*Typed[T]).Get",
	"Done":              "workqueue.(*Typed[T]).Done",
	"ShutDown":          "workqueue.(*Typed[T]).ShutDown",
	"ShutDownWithDrain": "workqueue.(*Typed[T]).ShutDown",
	"AddAfter":          "workqueue.(*delayingType[T]).AddAfter",
	"AddRateLimited":    "workqueue.(*rateLimitingType[T]).AddRateLimited",
	"Forget":            "workqueue.(*rateLimitingType[T]).Forget",
}

// String is the call as Go would write it: "Add(ns/web)".
func (c QueueCall) String() string {
	switch {
	case c.Method == "AddRateLimited":
		return fmt.Sprintf("AddRateLimited(%v) (NumRequeues %d)", c.Item, c.Requeues)
	case c.Method == "AddAfter":
		return fmt.Sprintf("AddAfter(%v, %v)", c.Item, c.Delay)
	case c.Shutdown:
		return "Get() reported shutdown"
	case c.Item == nil:
		return c.Method + "()"
	}
	return fmt.Sprintf("%s(%v)", c.Method, c.Item)
}

// Trace is the call on the workqueue lane.
func (c QueueCall) Trace() (trace.Event, any) {
	text, key := "", ""
	if c.Item != nil {
		key = fmt.Sprint(c.Item)
		text = key
	}
	switch {
	case c.Method == "AddRateLimited":
		text += fmt.Sprintf(" (NumRequeues %d)", c.Requeues)
	case c.Method == "AddAfter":
		text += fmt.Sprintf(" after %v", c.Delay)
	case c.Shutdown:
		text = "shutdown: nothing left to hand out"
	}
	return trace.Event{Lane: trace.Workqueue, Verb: c.Method, Text: text, Key: key, Func: queueFuncs[c.Method]}, nil
}
