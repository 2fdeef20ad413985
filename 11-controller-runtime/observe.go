package main

// What the chapter needs to *show* controller-runtime at work, and
// nothing of what it teaches: the lines rendered from what the course's
// taps (internal/tap, and internal/tap/crtap for controller-runtime)
// record of a handler, of the controller's workqueue and of its
// reconciler, the hold on the reconciler, and the printing of objects
// and of the request log.
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
	crlog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/informer-walkthrough/informer-walkthrough/internal/cluster"
	"github.com/informer-walkthrough/informer-walkthrough/internal/show"
	"github.com/informer-walkthrough/informer-walkthrough/internal/tap"
	"github.com/informer-walkthrough/informer-walkthrough/internal/tap/crtap"
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

// reconcileCall renders a call of the reconciler, as the tap
// (crtap.Reconciler) recorded it as the call began, with the release
// the deployment had then: "reconcile 2: deployment/web release="v3"".
func reconcileCall(e tap.Event) (string, bool) {
	call, ok := e.(crtap.ReconcileCall)
	if !ok {
		return "", false
	}
	d, ok := call.Obj.(*appsv1.Deployment)
	if !ok {
		return fmt.Sprintf("reconcile %d: %s, not in the cache", call.N, call.Request), true
	}
	return fmt.Sprintf("reconcile %d: deployment/%s release=%q", call.N, d.Name, d.Labels["release"]), true
}

// controllerLine is a line of step 6: a call the controller made on
// its queue (queueCall), or one of its reconciler (reconcileCall).
func controllerLine(e tap.Event) (string, bool) {
	if line, ok := queueCall(e); ok {
		return line, true
	}
	return reconcileCall(e)
}

// controllerCalls is what step 6 prints: the controller's calls on its
// queue and on its reconciler, as the taps record them (rec, the
// recorder of the queue's tap and of the reconciler's); and the hold on
// the reconciler's calls as they return (returns).
type controllerCalls struct {
	rec     *tap.Recorder
	returns *tap.Gate
	err     error // the first print's that failed
}

// newControllerCalls returns what step 6 prints, to be filled by the
// taps on the controller's queue and reconciler; it holds the
// reconciler's next n calls as they return (crtap.Reconciled), each
// until the step lets it return (letReturn), or ctx ends: the
// controller's worker is inside Reconcile meanwhile, so events arrive
// while it runs.
//
// controller-runtime shuts a controller's queue down from a goroutine
// that waits for its context to end and is waited for by no one
// (pkg/internal/controller/controller.go L346-L349): the tap's record of
// that ShutDown may come before the step ends, or after. The trace
// marks it as maybe, as it does a race client-go documents.
func newControllerCalls(ctx context.Context, n int) *controllerCalls {
	trace.MarkMaybe(func(e trace.Event) bool {
		return e.Lane == trace.Workqueue && e.Verb == "ShutDown"
	})
	rec := tap.NewRecorder(ctx)
	returns := rec.Hold(n, func(e tap.Event) bool {
		_, ok := e.(crtap.Reconciled)
		return ok
	})
	return &controllerCalls{rec: rec, returns: returns}
}

// print prints heading, then the controller's next queueCalls calls on
// its queue and reconciles calls of its reconciler, in the order they
// happened: a reconcile follows the calls that queued its request (Add,
// or Done of a dirty key). Once a print has failed (its context ended),
// c.err says why and print does nothing.
func (c *controllerCalls) print(ctx context.Context, out io.Writer, heading string, queueCalls, reconciles int) {
	if c.err != nil {
		return
	}
	c.err = show.Next(ctx, out, show.Block{Heading: heading, Indent: "    ",
		From: c.rec.Render(controllerLine), N: queueCalls + reconciles})
}

// letReturn lets the reconciler's held call return, then prints what
// follows, as print does.
func (c *controllerCalls) letReturn(ctx context.Context, out io.Writer, heading string, queueCalls, reconciles int) {
	c.returns.Release()
	c.print(ctx, out, heading, queueCalls, reconciles)
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
