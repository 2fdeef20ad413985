// Chapter 07-controller: informer → workqueue → workers. A small, real
// controller keeps a ConfigMap "<name>-summary" in sync with each
// Deployment. It is built the way kubernetes/sample-controller's
// controller.go is (the Controller struct, NewController, Run,
// runWorker, processNextWorkItem, the sync, enqueue) and, like it, says
// what it does in one log line where it happens. The steps give it work
// and show what the workqueue adds. observe.go is the log those lines
// go to: it hands them to the steps, which print them, and lets a step
// hold a worker at a line; it also stages the relist of step 4.
//
// Read alongside (client-go v0.37.2): util/workqueue/queue.go,
// delaying_queue.go, rate_limiting_queue.go, default_rate_limiters.go,
// informers/factory.go and tools/cache/shared_informer.go.
package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"strconv"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	appsinformers "k8s.io/client-go/informers/apps/v1"
	"k8s.io/client-go/kubernetes"
	appsclient "k8s.io/client-go/kubernetes/typed/apps/v1"
	appslisters "k8s.io/client-go/listers/apps/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	"github.com/informer-walkthrough/informer-walkthrough/internal/cluster"
)

func main() { cluster.Main("07-controller", run) }

// workers is how many goroutines take keys off the queue.
const workers = 3

// run is the chapter, one step after the other; each step prints its
// heading, then what happened. The steps share one controller, which
// runs, with its informer, until step 5 (or an error) stops it.
func run(ctx context.Context, out io.Writer, c *cluster.Cluster) error {
	// The informers and the controller run until step 5 (or an
	// error) cancels ctx.
	ctx, stop := context.WithCancel(ctx)
	s := &steps{out: out, c: c, stop: stop, log: newControllerLog(ctx),
		deploys: c.Client.AppsV1().Deployments(c.Namespace)}
	defer s.shutDown() // on every path out of run
	for _, step := range []func(context.Context) error{
		s.partsOfAController, s.dedup, s.retryWithBackoff, s.filtersAndOneWorkerPerKey, s.deleteAndShutDown,
	} {
		if err := step(ctx); err != nil {
			return err
		}
	}
	return nil
}

// steps is what the steps share: the cluster and the controller.
type steps struct {
	out     io.Writer
	c       *cluster.Cluster
	deploys appsclient.DeploymentInterface
	log     *controllerLog // where the controller logs (observe.go)

	stop    context.CancelFunc // stops the informers and the controller
	factory informers.SharedInformerFactory
	ctl     *Controller
	ran     sync.WaitGroup // ctl.Run
	runErr  error          // what ctl.Run returned
}

// partsOfAController builds the controller on a shared informer
// factory and starts the informer. Workers are not started yet, on
// purpose: Run starts them in step 2.
func (s *steps) partsOfAController(ctx context.Context) error {
	fmt.Fprintln(s.out, "Step 1. Informer → handler → workqueue: the handler only enqueues keys")
	// !+wiring
	s.factory = informers.NewSharedInformerFactoryWithOptions(s.c.Client, 0,
		informers.WithNamespace(s.c.Namespace),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.LabelSelector = cluster.OwnSelector
		}))
	deployments := s.factory.Apps().V1().Deployments()
	logged := klog.NewContext(ctx, s.log.Logger()) // where the controller logs
	ctl, err := NewController(logged, s.c.Client, deployments)
	if err != nil {
		return err
	}
	s.factory.Start(ctx.Done())
	// !-wiring
	s.ctl = ctl
	// The informer's cache is complete once it has listed. (Run waits
	// for the handler too: for the keys of that list to be queued.)
	if err := s.factory.WaitForCacheSyncWithContext(ctx).AsError(); err != nil {
		return err
	}
	s.printf("  synced: %d deployments cached, no workers yet\n", len(deployments.Informer().GetStore().ListKeys()))
	for _, d := range []*appsv1.Deployment{newDeployment("web"), newDeployment("api")} {
		d, err := s.deploys.Create(ctx, d, metav1.CreateOptions{})
		if err != nil {
			return err
		}
		printCreated(s.out, d)
	}
	return s.log.print(ctx, s.out, 2) // the handler's two Adds
}

// dedup: adding a key that is already waiting changes nothing; the one
// sync reads the newest web from the lister.
func (s *steps) dedup(ctx context.Context) error {
	fmt.Fprintln(s.out, "\nStep 2. Dedup: three updates to web before any worker runs, one sync")
	for _, release := range []string{"v2", "v3", "v4"} {
		d, err := s.deploys.Patch(ctx, "web", types.MergePatchType, releasePatch(release), metav1.PatchOptions{})
		if err != nil {
			return err
		}
		printPatched(s.out, d, "")
	}
	if err := s.log.print(ctx, s.out, 3); err != nil { // three Adds
		return err
	}
	s.printf("  queue length %d: web was already queued; its Adds changed nothing\n", s.ctl.workqueue.Len())
	// !+startRun
	s.ran.Go(func() { s.runErr = s.ctl.Run(ctx, workers) })
	// !-startRun
	s.printf("  Run: start %d workers\n", workers)
	// Two syncs of two lines each, in parallel: printed by key.
	if err := s.log.printByKey(ctx, s.out, 4); err != nil {
		return err
	}
	web, err := s.ctl.deploymentsLister.Deployments(s.c.Namespace).Get("web")
	if err != nil {
		return err
	}
	s.printf("  web: 4 events, 1 sync, which read the lister's release=%s\n", web.Labels["release"])
	return nil
}

// retryWithBackoff: someone else writes api's summary between the
// worker's read and its write, twice; the worker's Update gets a real
// 409 Conflict each time. Each failure waits twice as long; success
// forgets them.
func (s *steps) retryWithBackoff(ctx context.Context) error {
	fmt.Fprintln(s.out, "\nStep 3. Retry: a failed sync is requeued with backoff, then forgotten")
	// Someone else: a second client, which writes the summaries too.
	someoneElse, err := kubernetes.NewForConfig(s.c.Config)
	if err != nil {
		return err
	}
	summaries := someoneElse.CoreV1().ConfigMaps(s.c.Namespace)
	// Hold api's next two syncs at the line they log before Update:
	// after their GET of the summary, before their write (observe.go).
	api := cache.NewObjectName(s.c.Namespace, "api")
	hold := s.log.holdBeforeUpdate(api, 2)
	d, err := s.deploys.Patch(ctx, "api", types.MergePatchType, releasePatch("v2"), metav1.PatchOptions{})
	if err != nil {
		return err
	}
	printPatched(s.out, d, "")
	for edit := range 2 {
		// The handler's Add, or the last try's failure; then the held try.
		if err := s.log.print(ctx, s.out, 2); err != nil {
			return err
		}
		cm, err := summaries.Patch(ctx, "api-summary", types.MergePatchType, editPatch(edit+1), metav1.PatchOptions{})
		if err != nil {
			return err
		}
		printEdited(s.out, cm)
		hold.release()
	}
	// The second failure, then the third try, which works.
	if err := s.log.print(ctx, s.out, 3); err != nil {
		return err
	}
	s.printf("  after Forget: NumRequeues(%s) = %d\n", api, s.ctl.workqueue.NumRequeues(api))
	// Nothing was lost: the last try read what someone else wrote.
	cm, err := summaries.Get(ctx, "api-summary", metav1.GetOptions{})
	if err != nil {
		return err
	}
	printSummary(s.out, cm)
	return nil
}

// filtersAndOneWorkerPerKey: the updates the handler skips; then a key
// being processed is never handed to a second worker.
func (s *steps) filtersAndOneWorkerPerKey(ctx context.Context) error {
	fmt.Fprintln(s.out, "\nStep 4. Filters, and one key never in two workers at once")
	// The informer relists (observe.go). Resync is off, yet every
	// unchanged object reaches the handler as OnUpdate(old, new), at
	// equal resourceVersions. The relist's order is not defined: the
	// lines are printed by key.
	s.relistFromClient()
	if err := s.log.printByKey(ctx, s.out, 2); err != nil {
		return err
	}
	s.printf("  queue length %d: resync is off, yet the same-resourceVersion check fired\n", s.ctl.workqueue.Len())

	// Hold web's next sync before it writes, while web changes again.
	hold := s.log.holdBeforeUpdate(cache.NewObjectName(s.c.Namespace, "web"), 1)
	d, err := s.deploys.Patch(ctx, "web", types.MergePatchType, releasePatch("v5"), metav1.PatchOptions{})
	if err != nil {
		return err
	}
	printPatched(s.out, d, "")
	if err := s.log.print(ctx, s.out, 2); err != nil { // the Add, the held sync
		return err
	}
	d, err = s.deploys.Patch(ctx, "web", types.MergePatchType, releasePatch("v6"), metav1.PatchOptions{})
	if err != nil {
		return err
	}
	printPatched(s.out, d, "  (while web's sync is held)")
	if err := s.log.print(ctx, s.out, 1); err != nil { // the Add
		return err
	}
	s.printf("  queue length %d: web is being processed; its Add only marked it dirty\n", s.ctl.workqueue.Len())
	hold.release() // the held sync ends; Done puts web back for the next
	return s.log.print(ctx, s.out, 3)
}

// deleteAndShutDown: a delete is one more key; the sync finds nothing
// in the lister and removes the summary. Then everything stops.
func (s *steps) deleteAndShutDown(ctx context.Context) error {
	fmt.Fprintln(s.out, "\nStep 5. Delete, then shut down: informers, queue, workers")
	if err := s.deploys.Delete(ctx, "api", metav1.DeleteOptions{}); err != nil {
		return err
	}
	fmt.Fprintln(s.out, "  delete deployment/api")
	if err := s.log.print(ctx, s.out, 3); err != nil { // the Add, the sync
		return err
	}
	left, err := s.c.Client.CoreV1().ConfigMaps(s.c.Namespace).List(ctx,
		metav1.ListOptions{LabelSelector: cluster.OwnSelector})
	if err != nil {
		return err
	}
	printSummaries(s.out, left.Items)
	if err := s.shutDown(); err != nil {
		return err
	}
	s.printf("  informer stopped: %t; queue shutting down: %t; Run and its %d workers returned\n",
		s.factory.Apps().V1().Deployments().Informer().IsStopped(), s.ctl.workqueue.ShuttingDown(), workers)
	return nil
}

// shutDown stops the informers (no new events) and the controller,
// whose Run shuts its queue down and waits for its workers; it returns
// what Run returned. run calls it again on its way out, which matters
// after an error.
func (s *steps) shutDown() error {
	// !+shutdown
	s.stop()             // the context the informers and Run run in
	s.factory.Shutdown() // returns once every informer has stopped
	s.ran.Wait()         // Run returns once its workers have
	// !-shutdown
	if s.ctl != nil {
		s.ctl.workqueue.ShutDown() // in case Run never ran
	}
	return s.runErr
}

// Controller keeps configmap/<name>-summary in sync with each Deployment.
type Controller struct {
	// client writes the summaries.
	client kubernetes.Interface
	// deploymentsLister reads the informer's cache of Deployments.
	deploymentsLister appslisters.DeploymentLister
	// deploymentsSynced is done once the informer has listed and the
	// handler below has been handed every object of that list.
	deploymentsSynced cache.DoneChecker
	// workqueue holds the keys of the Deployments to sync. It hands a
	// key to one worker at a time, and keeps a key only once however
	// often it is added while it waits.
	workqueue workqueue.TypedRateLimitingInterface[cache.ObjectName]
	// logger is where the controller says what it did.
	logger klog.Logger
}

// !+newController
// NewController builds the controller: its queue, and the handler that
// feeds the queue from the informer.
func NewController(ctx context.Context, client kubernetes.Interface,
	deployments appsinformers.DeploymentInformer) (*Controller, error) {
	// A per-key exponential backoff: 5ms, 10ms, 20ms, ... capped at
	// 1s. (sample-controller's caps at 1000s; see the README.)
	limiter := workqueue.NewTypedItemExponentialFailureRateLimiter[cache.ObjectName](5*time.Millisecond, time.Second)
	c := &Controller{
		client:            client,
		deploymentsLister: deployments.Lister(),
		workqueue: workqueue.NewTypedRateLimitingQueueWithConfig(limiter,
			workqueue.TypedRateLimitingQueueConfig[cache.ObjectName]{Name: "summaries"}),
		logger: klog.FromContext(ctx),
	}
	reg, err := deployments.Informer().AddEventHandler(c.handler())
	if err != nil {
		c.workqueue.ShutDown()
		return nil, err
	}
	c.deploymentsSynced = reg.HasSyncedChecker()
	return c, nil
}

// !-newController

// !+handler
// handler turns informer events into keys. It does no work itself:
// handlers run one at a time on the informer's goroutine for this
// handler, and a slow one delays every later event.
func (c *Controller) handler() cache.ResourceEventHandlerFuncs {
	return cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) { c.enqueue("ADD", obj) },
		UpdateFunc: func(old, new any) {
			o, n := old.(*appsv1.Deployment), new.(*appsv1.Deployment)
			switch {
			case o.ResourceVersion == n.ResourceVersion:
				// Nothing changed: a relist, or a resync, hands
				// over what the cache holds.
				c.logger.Info("Skip", "object", n, "old", o)
			case o.Generation != n.Generation || !maps.Equal(o.Labels, n.Labels):
				c.enqueue("UPDATE", n)
			}
			// Otherwise a status write (on a real cluster, the
			// deployment controller's): the summary is unchanged.
		},
		// obj is the deleted Deployment, or a DeletedFinalStateUnknown
		// if the informer only noticed the delete on a relist.
		DeleteFunc: func(obj any) { c.enqueue("DELETE", obj) },
	}
}

// !-handler

// !+enqueue
// enqueue adds obj's key, its namespace and name; event is for the log
// line. DeletionHandlingObjectToName unwraps a tombstone (ObjectToName
// would fail on one).
func (c *Controller) enqueue(event string, obj any) {
	if key, err := cache.DeletionHandlingObjectToName(obj); err != nil {
		utilruntime.HandleError(err)
	} else {
		// Logged before the Add, so before any worker's line for key.
		c.logger.Info("Enqueue", "event", event, "key", key, "object", obj)
		c.workqueue.Add(key)
	}
}

// !-enqueue

// !+run
// Run waits until the handler has been handed the informer's first
// list, starts the workers and blocks until ctx ends; then it shuts the
// queue down and waits for the workers to return.
func (c *Controller) Run(ctx context.Context, workers int) error {
	defer c.workqueue.ShutDown()
	if !cache.WaitFor(ctx, "", c.deploymentsSynced) {
		return fmt.Errorf("failed to wait for caches to sync: %w", context.Cause(ctx))
	}
	var wg wait.Group
	for range workers {
		wg.StartWithContext(ctx, c.runWorker)
	}
	<-ctx.Done()
	// Get hands out what is still queued, then reports shutdown.
	c.workqueue.ShutDown()
	wg.Wait()
	return nil
}

// !-run

// runWorker processes keys until the queue shuts down.
func (c *Controller) runWorker(ctx context.Context) {
	for c.processNextWorkItem(ctx) {
	}
}

// !+processNextWorkItem
// processNextWorkItem is one turn of a worker: Get a key, sync it,
// then either Forget it (success) or AddRateLimited (retry later),
// and always Done.
func (c *Controller) processNextWorkItem(ctx context.Context) bool {
	key, shutdown := c.workqueue.Get()
	if shutdown {
		return false
	}
	// Between Get and Done the key is "processing": no other worker
	// can Get it, and an Add only marks it dirty. Done puts a dirty
	// key back in the queue.
	defer c.workqueue.Done(key)

	err := c.syncHandler(ctx, key)
	if err == nil {
		// Success: forget the key's failures, so that its next
		// failure starts again at the shortest backoff.
		c.workqueue.Forget(key)
		c.logger.Info("Successfully synced", "key", key)
		return true
	}
	// Failure: add the key again once the rate limiter's delay for
	// it has passed. The delay grows with each failure.
	c.workqueue.AddRateLimited(key)
	c.logger.Error(err, "Error syncing; requeuing for later retry", "key", key,
		"requeues", c.workqueue.NumRequeues(key))
	return true
}

// !-processNextWorkItem

// !+syncHandler
// syncHandler makes configmap/<name>-summary match the Deployment
// named by key, read from the lister (the informer's cache): the key
// says which object, the cache says what it looks like now.
func (c *Controller) syncHandler(ctx context.Context, key cache.ObjectName) error {
	cms := c.client.CoreV1().ConfigMaps(key.Namespace)
	cmName := key.Name + "-summary"
	d, err := c.deploymentsLister.Deployments(key.Namespace).Get(key.Name)
	if apierrors.IsNotFound(err) {
		// On a real cluster the garbage collector may have deleted it
		// first (ownerReference); NotFound means done either way.
		c.logger.Info("Deleting summary", "key", key, "configmap", cmName)
		err := cms.Delete(ctx, cmName, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return err
		}
		return nil
	}
	if err != nil {
		return err
	}
	// d belongs to the cache, shared with every other reader: never
	// modify it.
	want := summaryOf(d)

	cm, err := cms.Get(ctx, cmName, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		c.logger.Info("Creating summary", "key", key, "release", d.Labels["release"], "configmap", cmName)
		_, err = cms.Create(ctx, newSummary(d, cmName, want), metav1.CreateOptions{})
		return err
	case err != nil:
		return err
	case maps.Equal(cm.Data, want):
		c.logger.Info("Summary in sync", "key", key, "release", d.Labels["release"], "configmap", cmName)
		return nil
	}
	// cm came from a GET, so it is ours to change. Update sends its
	// resourceVersion: if someone wrote in between, 409 Conflict.
	c.logger.Info("Updating summary", "key", key, "release", d.Labels["release"], "configmap", cmName)
	cm.Data = want
	_, err = cms.Update(ctx, cm, metav1.UpdateOptions{})
	return err
}

// !-syncHandler

// summaryOf is the ConfigMap data for d: its replicas and its labels
// (the course's own label left out, it is on everything).
func summaryOf(d *appsv1.Deployment) map[string]string {
	l := labels.Set(maps.Clone(d.Labels))
	delete(l, cluster.ManagedByLabel)
	return map[string]string{
		"replicas": strconv.Itoa(int(ptr.Deref(d.Spec.Replicas, 1))),
		"labels":   l.String(),
	}
}

// newSummary is the ConfigMap for d. Its ownerReference names d as its
// controller, so a real cluster's garbage collector deletes it with d.
// (No BlockOwnerDeletion: nothing here deletes in the foreground, and
// setting it can need extra RBAC.)
func newSummary(d *appsv1.Deployment, name string, data map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{
			Name:   name,
			Labels: cluster.Labels("summary-of", d.Name),
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "apps/v1", Kind: "Deployment",
				Name: d.Name, UID: d.UID, Controller: ptr.To(true),
			}},
		},
		Data: data,
	}
}
