package main

// Step 6: a controller on a manager. Its informers are the cache's, its
// queue is client-go's workqueue, its worker is chapter 07's loop, and
// its Reconciler is the one function a controller-runtime user writes.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/informer-walkthrough/informer-walkthrough/internal/cluster"
	"github.com/informer-walkthrough/informer-walkthrough/internal/fixture"
	"github.com/informer-walkthrough/informer-walkthrough/internal/tap"
	"github.com/informer-walkthrough/informer-walkthrough/internal/tap/crtap"
)

// !+reconciler
// deploymentReconciler is the controller's Reconciler. The controller's
// worker calls it with one request at a time: the key of a deployment,
// never the event that queued it, so it reads the deployment as it is
// now, through the manager's client (from the cache: no request).
type deploymentReconciler struct {
	client client.Client // the manager's: reads the cache, writes the server
}

// Reconcile reads the deployment its request names. A deployment deleted
// meanwhile is nothing to do (IgnoreNotFound); any other error is
// returned, and the controller puts the request back, rate-limited. A
// real reconciler would now make the world match the deployment; this
// one does nothing more, since step 6 watches when it is called.
func (r *deploymentReconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	var d appsv1.Deployment
	if err := r.client.Get(ctx, req.NamespacedName, &d); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	return reconcile.Result{}, nil
}

// !-reconciler

// reconcilerIsChapter07 runs a controller on a manager: its informers
// are the cache's, its queue is client-go's workqueue, and its worker is
// chapter 07's loop.
func reconcilerIsChapter07(ctx context.Context, out io.Writer, c *cluster.Cluster) error {
	fmt.Fprintln(out, "\nStep 6. A reconciler is chapter 07: one workqueue, dedup, rate-limited retries")
	web, err := c.Client.AppsV1().Deployments(c.Namespace).Create(ctx, fixture.PausedDeployment("web", "nginx:1.27"), metav1.CreateOptions{})
	if err != nil {
		return err
	}
	c.ResetRequests()

	// A manager (one cache, one client on it) and a controller on it:
	// deployments are its own kind, configmaps the kind it owns. Its
	// queue is client-go's rate-limited workqueue, which the step
	// wraps in the course's tap (internal/tap) to record the
	// controller's calls on it; its reconciler is wrapped in the tap
	// for controller-runtime (internal/tap/crtap), where the step holds
	// each of its four calls as it returns, until the step lets it
	// return (calls.letReturn), with the error the step chooses
	// (FailNext). The manager runs until its context ends, then waits
	// for the controller and the cache; the step waits for it in turn.
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel() // lets a held call return, too
	calls := newControllerCalls(ctx, 4)
	// !+manager
	mgr, err := ctrl.NewManager(c.Config, ctrl.Options{
		Cache:      ownObjects(c),
		Metrics:    metricsserver.Options{BindAddress: "0"}, // no port
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		return err
	}
	r := &crtap.Reconciler{Rec: calls.rec, Next: &deploymentReconciler{client: mgr.GetClient()},
		Reader: mgr.GetClient(), New: func() client.Object { return &appsv1.Deployment{} }}
	var queue workqueue.TypedRateLimitingInterface[reconcile.Request]
	err = ctrl.NewControllerManagedBy(mgr).
		For(&appsv1.Deployment{}).
		Owns(&corev1.ConfigMap{}). // its events enqueue the owner
		WithOptions(controller.Options{
			UsePriorityQueue: ptr.To(false), // client-go's workqueue
			NewQueue: func(name string, rl workqueue.TypedRateLimiter[reconcile.Request]) workqueue.TypedRateLimitingInterface[reconcile.Request] {
				queue = workqueue.NewTypedRateLimitingQueueWithConfig(rl,
					workqueue.TypedRateLimitingQueueConfig[reconcile.Request]{Name: name})
				return tap.Queue[reconcile.Request]{TypedRateLimitingInterface: queue, Rec: calls.rec}
			},
		}).
		Complete(r)
	// !-manager
	if err != nil {
		return err
	}

	wg.Go(func() { _ = mgr.Start(ctx) })
	// What the step prints: the controller's calls on its queue, then
	// the reconciler's next call, which comes after them. A print that
	// fails keeps its error (calls.err), and the prints after it print
	// nothing, as a bufio.Writer does.
	calls.print(ctx, out, "  started: the initial list adds the deployment", 1, 1)

	// A burst of three events while reconcile 1 runs: one key, dirty once.
	for _, release := range []string{"v1", "v2", "v3"} {
		if err := setRelease(ctx, c, release); err != nil {
			return err
		}
	}
	calls.print(ctx, out, "  three patches while reconcile 1 runs:", 3, 0)
	calls.letReturn(ctx, out, "  reconcile 1 returns: the dirty key is queued once more", 2, 1)
	calls.letReturn(ctx, out, "  reconcile 2 returns:", 2, 0)
	fmt.Fprintf(out, "  queue.Len() %d: three events, one more reconcile\n", queue.Len())

	// An owned ConfigMap enqueues its owner; the reconciler fails once
	// (the step makes its next call return an error), and the controller
	// puts the request back after the limiter's delay.
	r.FailNext(errors.New("flaky"))
	if _, err := c.Client.CoreV1().ConfigMaps(c.Namespace).Create(ctx, ownedConfigMap(web), metav1.CreateOptions{}); err != nil {
		return err
	}
	calls.print(ctx, out, "  create configmap/web-config, owned by deployment/web:", 1, 1)
	calls.letReturn(ctx, out, "  reconcile 3 fails: the rate limiter requeues it", 2, 1)
	calls.letReturn(ctx, out, "  reconcile 4 returns:", 2, 0)
	printLists(out, "the manager's lists and watches (the controller's and the client's):", c)
	return calls.err // a print's, if ctx ended while it awaited
}
