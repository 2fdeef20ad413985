// Package crtap is the course's tap (package tap) for controller-runtime,
// apart from package tap so that the chapters that do not use
// controller-runtime do not build it: a reconcile.Reconciler that
// records each call a controller makes on the one it wraps, into a
// tap.Recorder, where a step awaits the calls and can hold them; and a
// wait for a write to reach a controller-runtime cache.
package crtap

import (
	"context"
	"fmt"
	"sync"

	"k8s.io/client-go/tools/cache"
	crcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/informer-walkthrough/informer-walkthrough/internal/show"
	"github.com/informer-walkthrough/informer-walkthrough/internal/tap"
	"github.com/informer-walkthrough/informer-walkthrough/internal/trace"
)

// Reconciler is a reconcile.Reconciler that records each call the
// controller makes, then passes it on to Next: a ReconcileCall as the
// call begins, a Reconciled once Next has returned, before the
// controller gets what it returned. A step that holds Reconciled calls
// (Rec.Hold) keeps the controller's worker inside Reconcile, so that
// events arrive while it runs; Next knows nothing of it.
type Reconciler struct {
	Rec  *tap.Recorder
	Next reconcile.Reconciler
	// Reader and New, if set: as each call begins, the tap reads the
	// request's object into New() through Reader (the cache Next reads),
	// and records what it read with the call (ReconcileCall.Obj).
	Reader client.Reader
	New    func() client.Object

	mu    sync.Mutex
	calls int   // calls begun
	fail  error // FailNext's
}

var _ reconcile.Reconciler = (*Reconciler)(nil)

// ReconcileCall is a call of Reconcile, recorded as it begins.
type ReconcileCall struct {
	Request reconcile.Request
	N       int           // which call, from 1
	Obj     client.Object // what Reader held for the request then; nil if nothing
}

// Reconciled is a call of Reconcile that has returned, recorded before
// the controller gets its result: where a step holds it.
type Reconciled struct {
	Request reconcile.Request
	N       int
	Result  reconcile.Result
	Err     error
}

// FailNext makes the next call to return return err, instead of what
// Next returned: a failure the step chooses, which the controller
// retries through its rate limiter. Call it before that call returns.
func (r *Reconciler) FailNext(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.fail = err
}

func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	r.mu.Lock()
	r.calls++
	n := r.calls
	r.mu.Unlock()
	var obj client.Object
	if r.Reader != nil && r.New != nil {
		if o := r.New(); r.Reader.Get(ctx, req.NamespacedName, o) == nil {
			obj = o
		}
	}
	r.Rec.Tap(ReconcileCall{Request: req, N: n, Obj: obj})
	res, err := r.Next.Reconcile(ctx, req)
	r.mu.Lock()
	if r.fail != nil {
		res, err, r.fail = reconcile.Result{}, r.fail, nil
	}
	r.mu.Unlock()
	r.Rec.Tap(Reconciled{Request: req, N: n, Result: res, Err: err})
	return res, err
}

// Trace is the call on the workers lane: the request, which call, and
// what the reconciler was about to read.
func (c ReconcileCall) Trace() (trace.Event, any) {
	return trace.Event{Lane: trace.Workers, Verb: "Reconcile",
		Text: fmt.Sprintf("%s (call %d) %s", c.Request.Name, c.N, show.Describe(c.Obj)),
		Key:  c.Request.String()}, c.Obj
}

// Trace is what the call returned, on the workers lane.
func (c Reconciled) Trace() (trace.Event, any) {
	result := "returns"
	if c.Err != nil {
		result = "returns error: " + c.Err.Error()
	}
	return trace.Event{Lane: trace.Workers, Verb: "result",
		Text: fmt.Sprintf("%s (call %d) %s", c.Request.Name, c.N, result),
		Key:  c.Request.String()}, nil
}

// AwaitCached waits until the cache's informer for obj's kind holds obj
// at obj's resourceVersion: a write reaches the cache only through the
// watch, some time after the write returned. A handler added now is
// handed what the cache holds, then what the watch brings.
//
// It is a wait, not something a chapter shows, so its handler is not a
// tap.Handler, which would put its calls on the trace: whether the watch
// brings the write before the handler is added (one OnAdd, at the new
// resourceVersion) or after (an OnAdd, then an OnUpdate) differs from
// run to run.
func AwaitCached(ctx context.Context, crc crcache.Cache, obj client.Object) error {
	inf, err := crc.GetInformer(ctx, obj)
	if err != nil {
		return err
	}
	// The handler may still run after this returns: it reads copies.
	ns, name, rv := obj.GetNamespace(), obj.GetName(), obj.GetResourceVersion()
	seen := make(chan struct{})
	var once sync.Once
	match := func(o any) {
		if m, ok := o.(client.Object); ok && m.GetNamespace() == ns &&
			m.GetName() == name && m.GetResourceVersion() == rv {
			once.Do(func() { close(seen) })
		}
	}
	reg, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    match,
		UpdateFunc: func(_, o any) { match(o) },
	})
	if err != nil {
		return err
	}
	defer func() { _ = inf.RemoveEventHandler(reg) }()
	select {
	case <-seen:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("waiting for %s rv=%s in the cache: %w", name, rv, context.Cause(ctx))
	}
}
