package main

// What the chapter needs to *show* controller-runtime at work, and
// nothing of what it teaches: a wait for a write to reach the cache, the
// hold on the reconciler, a handler that reports, a workqueue that
// reports its calls, and the printing of objects and of the request log.
// The caches, clients, manager, controller and reconciler, and every
// call made on them, are in the lesson files: cache.go, client.go and
// reconciler.go.

import (
	"context"
	"fmt"
	"io"
	"reflect"
	"slices"
	"sync"
	"time"

	"github.com/go-logr/logr"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	crcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crlog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/informer-walkthrough/informer-walkthrough/internal/cluster"
	"github.com/informer-walkthrough/informer-walkthrough/internal/show"
	"github.com/informer-walkthrough/informer-walkthrough/internal/trace"
)

// quietLogs gives controller-runtime a logger that discards, once:
// stdout is the chapter's, and the log of the caches, clients and
// controllers (and of the informers it runs, which it hands its logger
// through the context) is not the lesson. Without it the log is dropped
// too, since the root logger is a null sink until SetLogger is called;
// but the first log call 30 s or more into the process prints a warning
// with a stack trace on stderr (pkg/log/log.go, eventuallyFulfillRoot),
// and a --step run paused on a step, or a test binary, lives that long.
// The call says, at the start, that the chapter discards it.
var quietLogs = sync.OnceFunc(func() { crlog.SetLogger(logr.Discard()) })

// awaitCached waits until the cache's informer for obj's kind holds obj
// at obj's resourceVersion: a write reaches the cache only through the
// watch, some time after the write returned. A handler added now is
// handed what the cache holds, then what the watch brings.
func awaitCached(ctx context.Context, crc crcache.Cache, obj client.Object) error {
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

// heldReconciler is the lesson's reconciler (reconciler.go) as the
// controller runs it in step 6: it reports each call with the release
// the deployment had as the call began, then holds the call until the
// step lets it return, with the error the step chooses (nil: the
// reconciler's own result), so that events can arrive while it runs.
// The reconciler itself knows nothing of it.
type heldReconciler struct {
	r       *deploymentReconciler
	lines   *show.Lines
	proceed chan error
	calls   int // one worker (MaxConcurrentReconciles 1): no lock
}

func held(r *deploymentReconciler, lines *show.Lines) *heldReconciler {
	return &heldReconciler{r: r, lines: lines, proceed: make(chan error)}
}

func (h *heldReconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	h.calls++
	// What the reconciler is about to read, read as it will (from the
	// cache), for the report. A deployment gone is the reconciler's to say.
	var d appsv1.Deployment
	if err := h.r.client.Get(ctx, req.NamespacedName, &d); err != nil {
		return h.r.Reconcile(ctx, req)
	}
	if trace.On() {
		trace.Record(trace.Event{Lane: trace.Workers, Verb: "Reconcile",
			Text: fmt.Sprintf("%s (call %d) release=%q", req.Name, h.calls, d.Labels["release"]),
			Key:  req.String()}, &d)
	}
	h.lines.Sendf("reconcile %d: deployment/%s release=%q", h.calls, d.Name, d.Labels["release"])
	res, err := h.r.Reconcile(ctx, req)
	select {
	case chosen := <-h.proceed: // an error is retried through the rate limiter
		if chosen != nil {
			res, err = reconcile.Result{}, chosen
		}
		if trace.On() {
			result := "returns"
			if err != nil {
				result = "returns error: " + err.Error()
			}
			trace.Record(trace.Event{Lane: trace.Workers, Verb: "result",
				Text: fmt.Sprintf("%s (call %d) %s", req.Name, h.calls, result), Key: req.String()}, nil)
		}
		return res, err
	case <-ctx.Done():
		return reconcile.Result{}, ctx.Err()
	}
}

// let lets the reconciler's current call return err.
func (h *heldReconciler) let(ctx context.Context, err error) {
	select {
	case h.proceed <- err:
	case <-ctx.Done():
	}
}

// reporter is a handler that reports each add.
func reporter(lines *show.Lines) cache.ResourceEventHandler {
	return cache.ResourceEventHandlerDetailedFuncs{AddFunc: func(obj any, initial bool) {
		if cm, ok := obj.(*corev1.ConfigMap); ok {
			if trace.On() {
				trace.Record(trace.Event{Lane: trace.Handlers, Verb: "OnAdd",
					Text: fmt.Sprintf("configmap/%s isInInitialList=%t", cm.Name, initial),
					Func: "cache.(*processorListener).run"}, cm)
			}
			lines.Sendf("OnAdd configmap/%s %s isInInitialList=%t", cm.Name, describe(cm), initial)
		}
	}}
}

// recordingQueue is the controller's workqueue, reporting the calls the
// controller makes on it. Each is reported at a point that keeps the
// lines in the order the calls take effect.
type recordingQueue struct {
	workqueue.TypedRateLimitingInterface[reconcile.Request]
	lines *show.Lines
}

func recording(q workqueue.TypedRateLimitingInterface[reconcile.Request], lines *show.Lines) recordingQueue {
	return recordingQueue{q, lines}
}

func (q recordingQueue) Add(req reconcile.Request) {
	q.TypedRateLimitingInterface.Add(req) // reported once added: a burst is all in
	traceQueue("Add", req, "workqueue.(*Typed[T]).Add")
	q.lines.Sendf("queue.Add(%s)", req.Name)
}

func (q recordingQueue) AddRateLimited(req reconcile.Request) {
	traceQueue("AddRateLimited", req, "workqueue.(*rateLimitingType[T]).AddRateLimited")
	q.lines.Sendf("queue.AddRateLimited(%s): back in after the limiter's delay", req.Name)
	q.TypedRateLimitingInterface.AddRateLimited(req)
}

func (q recordingQueue) Forget(req reconcile.Request) {
	traceQueue("Forget", req, "workqueue.(*rateLimitingType[T]).Forget")
	q.lines.Sendf("queue.Forget(%s)", req.Name)
	q.TypedRateLimitingInterface.Forget(req)
}

func (q recordingQueue) Done(req reconcile.Request) {
	traceQueue("Done", req, "workqueue.(*Typed[T]).Done")
	q.lines.Sendf("queue.Done(%s)", req.Name) // before: Done may hand it out again
	q.TypedRateLimitingInterface.Done(req)
}

// Get is the queue's Get, recorded on the trace's workqueue lane only
// (the chapter prints the Reconcile that follows it): the controller's
// worker takes a request. The Get that ends with the queue's shutdown
// hands out nothing and is not recorded.
func (q recordingQueue) Get() (reconcile.Request, bool) {
	req, shutdown := q.TypedRateLimitingInterface.Get()
	if !shutdown {
		traceQueue("Get", req, "workqueue.(*Typed[T]).Get")
	}
	return req, shutdown
}

// traceQueue records a call on the controller's queue on the trace's
// workqueue lane.
func traceQueue(verb string, req reconcile.Request, fn string) {
	if trace.On() {
		trace.Record(trace.Event{Lane: trace.Workqueue, Verb: verb, Text: req.String(), Key: req.String(), Func: fn}, nil)
	}
}

// describe is a ConfigMap's mode and resourceVersion.
func describe(cm *corev1.ConfigMap) string {
	return fmt.Sprintf("mode=%s rv=%s", cm.Data["mode"], cm.ResourceVersion)
}

func names(list *corev1.ConfigMapList) []string {
	var n []string
	for _, cm := range list.Items {
		n = append(n, cm.Name)
	}
	return n
}

// printRequests prints what the chapter's clients sent since the last
// call, under title, or that they sent none; and starts the log afresh.
func printRequests(out io.Writer, title string, c *cluster.Cluster) {
	lines := show.Requests(c.Requests(), nil)
	c.ResetRequests()
	if len(lines) == 0 {
		fmt.Fprintf(out, "  %s no request\n", title)
		return
	}
	show.Under(out, "  "+title, lines)
}

// printLists is printRequests for the lists and watches alone, sorted:
// the controller starts its sources' informers concurrently.
func printLists(out io.Writer, title string, c *cluster.Cluster) {
	lines := show.Requests(c.Requests(), show.ListsAndWatches)
	c.ResetRequests()
	show.Under(out, "  "+title, slices.Sorted(slices.Values(lines)))
}

// printAliasing shows which of the reader's objects share their Data
// map with the object in the indexer.
func printAliasing(out io.Writer, stored, copied, aliased *corev1.ConfigMap) {
	shares := func(cm *corev1.ConfigMap) bool {
		return reflect.ValueOf(cm.Data).UnsafePointer() == reflect.ValueOf(stored.Data).UnsafePointer()
	}
	fmt.Fprintf(out, "  Get, then edited:                       mode=%s, shares the indexer's map: %t\n", copied.Data["mode"], shares(copied))
	fmt.Fprintf(out, "  Get with UnsafeDisableDeepCopy, edited: mode=%s, shares the indexer's map: %t\n", aliased.Data["mode"], shares(aliased))
	fmt.Fprintf(out, "  the object indexer.GetByKey returned, now: configmap/web %s\n", describe(stored))
}

// printWaiting shows that the consistent Get has not returned: it
// cannot, while the informer has not seen the write.
//
// Nothing shows a call blocked, so it gives the Get 50 ms to return
// (it reads from memory: it would, in far less) before it says that the
// Get waits. A Get that does not wait prints another line, which the
// golden test catches; a Get that waits always prints this one.
func printWaiting(out io.Writer, got <-chan string) {
	select {
	case res := <-got:
		fmt.Fprintf(out, "  Get returned at once: %s\n", res)
	case <-time.After(50 * time.Millisecond):
		fmt.Fprintln(out, "  Get (consistent) is waiting for the informer to see the Update's resourceVersion")
	}
}

// printResult prints what the consistent Get returned, once it has.
func printResult(ctx context.Context, out io.Writer, got <-chan string) error {
	select {
	case res := <-got:
		fmt.Fprintf(out, "  Get: %s\n", res)
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}
