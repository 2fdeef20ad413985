package main

// What the chapter needs to *show* controller-runtime at work, and
// nothing of what it teaches: a wait for a write to reach the cache, the
// hold on the reconciler, the lines rendered from what the course's taps
// (internal/tap) record of a handler and of the controller's workqueue,
// and the printing of objects and of the request log.
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
	crcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crlog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/informer-walkthrough/informer-walkthrough/internal/cluster"
	"github.com/informer-walkthrough/informer-walkthrough/internal/show"
	"github.com/informer-walkthrough/informer-walkthrough/internal/tap"
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
//
// It is a wait, not something the chapter shows, so its handler is not
// the course's tap, which would put its calls on the trace: whether the
// watch brings the write before the handler is added (one OnAdd, at the
// new resourceVersion) or after (an OnAdd, then an OnUpdate) differs
// from run to run.
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

// addLine renders a handler's OnAdd of a ConfigMap, as the tap
// recorded it: "OnAdd configmap/web mode=v1 rv=2 isInInitialList=true".
func addLine(e tap.Event) (string, bool) {
	call, ok := e.(tap.HandlerCall)
	if !ok || call.Method != "OnAdd" {
		return "", false
	}
	cm, ok := call.Obj.(*corev1.ConfigMap)
	if !ok {
		return "", false
	}
	return fmt.Sprintf("OnAdd configmap/%s %s isInInitialList=%t", cm.Name, describe(cm), call.InInitialList), true
}

// queueCall renders a call the controller made on its queue, as the
// tap recorded it: "queue.Add(web)". Its Gets are not printed (the
// reconcile that follows each is), nor is the queue's shutdown.
func queueCall(e tap.Event) (string, bool) {
	call, ok := e.(tap.QueueCall)
	req, isReq := call.Item.(reconcile.Request)
	if !ok || !isReq || call.Method == "Get" {
		return "", false
	}
	if call.Method == "AddRateLimited" {
		return fmt.Sprintf("queue.AddRateLimited(%s): back in after the limiter's delay", req.Name), true
	}
	return fmt.Sprintf("queue.%s(%s)", call.Method, req.Name), true
}

// controllerCalls is what step 6 prints: the controller's calls on its
// queue, as the tap records them (rec, the queue's tap's recorder), and
// the held reconciler's calls (reconciles, its reports).
type controllerCalls struct {
	rec        *tap.Recorder
	reconciles *show.Lines
	err        error // the first print's that failed
}

// newControllerCalls returns what step 6 prints, to be filled by the
// controller's queue's tap and the held reconciler.
//
// controller-runtime shuts a controller's queue down from a goroutine
// that waits for its context to end and is waited for by no one
// (pkg/internal/controller/controller.go L346-L349): the tap's record of
// that ShutDown may come before the step ends, or after. The trace
// marks it as maybe, as it does a race client-go documents.
func newControllerCalls(ctx context.Context) *controllerCalls {
	trace.MarkMaybe(func(e trace.Event) bool {
		return e.Lane == trace.Workqueue && e.Verb == "ShutDown"
	})
	return &controllerCalls{rec: tap.NewRecorder(ctx), reconciles: show.NewLines(ctx)}
}

// print prints heading, the controller's next queueCalls calls on its
// queue, then its next reconciles calls of the reconciler: a reconcile
// follows the calls that queued its request (Add, or Done of a dirty
// key), so the order is the one they happened in. Once a print has
// failed (its context ended), c.err says why and print does nothing.
func (c *controllerCalls) print(ctx context.Context, out io.Writer, heading string, queueCalls, reconciles int) {
	if c.err != nil {
		return
	}
	c.err = show.Next(ctx, out, show.Block{Heading: heading, Indent: "    ", From: c.rec.Render(queueCall), N: queueCalls})
	if c.err == nil {
		c.err = show.Next(ctx, out, show.Block{Indent: "    ", From: c.reconciles, N: reconciles})
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
