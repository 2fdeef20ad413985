// Chapter 07-controller: informer → workqueue → workers. A small, real
// controller, built as kubernetes/sample-controller's controller.go is,
// keeps a ConfigMap "<name>-summary" in sync with each Deployment and
// logs one line where something happens; the steps give it work.
// observe.go is its log: the steps print the lines and can hold a worker
// at one. It also stages step 4's relist.
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
	"github.com/informer-walkthrough/informer-walkthrough/internal/fixture"
)

func main() { cluster.Main("07-controller", run) }

// workers is how many goroutines take keys off the queue.
const workers = 3

// run is the chapter, one step after the other. The steps share one
// controller, which runs with its informer until step 5 (or an error)
// cancels ctx.
func run(ctx context.Context, out io.Writer, c *cluster.Cluster) error {
	ctx, stop := context.WithCancel(ctx)
	s := &steps{out: out, c: c, stop: stop, ctlLog: newControllerLog(ctx),
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
	ctlLog  *controllerLog     // where the controller logs (observe.go)
	stop    context.CancelFunc // stops the informers and the controller
	factory informers.SharedInformerFactory
	ctl     *Controller
	ran     sync.WaitGroup // ctl.Run
	runErr  error          // what ctl.Run returned
}

// partsOfAController builds the controller and starts the informer;
// no workers yet, on purpose: Run starts them in step 2.
func (s *steps) partsOfAController(ctx context.Context) error {
	fmt.Fprintln(s.out, "Step 1. Informer → handler → workqueue: the handler only enqueues keys")
	// !+wiring
	s.factory = informers.NewSharedInformerFactoryWithOptions(s.c.Client, 0,
		informers.WithNamespace(s.c.Namespace),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.LabelSelector = cluster.OwnSelector
		}))
	deployments := s.factory.Apps().V1().Deployments()
	logged := klog.NewContext(ctx, s.ctlLog.Logger()) // where the controller logs
	ctl, err := NewController(logged, s.c.Client, deployments)
	if err != nil {
		return err
	}
	s.factory.Start(ctx.Done())
	// !-wiring
	s.ctl = ctl
	// The cache is complete once the informer has listed.
	if err := s.factory.WaitForCacheSyncWithContext(ctx).AsError(); err != nil {
		return err
	}
	s.printf("  synced: %d deployments cached, no workers yet\n", len(deployments.Informer().GetStore().ListKeys()))
	for _, name := range []string{"web", "api"} {
		d, err := s.deploys.Create(ctx, fixture.PausedDeployment(name, "nginx:1.27", "release", "v1"), metav1.CreateOptions{})
		if err != nil {
			return err
		}
		printCreated(s.out, d)
	}
	return s.ctlLog.print(ctx, s.out, 2) // the handler's two Adds
}

// dedup: an Add of a waiting key changes nothing; one sync reads web.
func (s *steps) dedup(ctx context.Context) error {
	fmt.Fprintln(s.out, "\nStep 2. Dedup: three updates to web before any worker runs, one sync")
	for _, release := range []string{"v2", "v3", "v4"} {
		d, err := s.deploys.Patch(ctx, "web", types.MergePatchType, releasePatch(release), metav1.PatchOptions{})
		if err != nil {
			return err
		}
		printPatched(s.out, d, "")
	}
	if err := s.ctlLog.print(ctx, s.out, 3); err != nil { // three Adds
		return err
	}
	s.printf("  queue length %d: web was already queued; its Adds changed nothing\n", s.ctl.workqueue.Len())
	// !+startRun
	s.ran.Go(func() { s.runErr = s.ctl.Run(ctx, workers) })
	// !-startRun
	s.printf("  Run: start %d workers\n", workers)
	// Two syncs of two lines each, in parallel: printed by key.
	if err := s.ctlLog.printByKey(ctx, s.out, 4); err != nil {
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
// worker's GET and its Update, twice: two real 409 Conflicts.
func (s *steps) retryWithBackoff(ctx context.Context) error {
	fmt.Fprintln(s.out, "\nStep 3. Retry: a failed sync is requeued with backoff, then forgotten")
	// Someone else: a second client, which writes the summaries too.
	someoneElse, err := kubernetes.NewForConfig(s.c.Config)
	if err != nil {
		return err
	}
	summaries := someoneElse.CoreV1().ConfigMaps(s.c.Namespace)
	// Hold api's next two syncs at their log line before Update.
	api := cache.NewObjectName(s.c.Namespace, "api")
	hold := s.ctlLog.holdBeforeUpdate(api, 2)
	d, err := s.deploys.Patch(ctx, "api", types.MergePatchType, releasePatch("v2"), metav1.PatchOptions{})
	if err != nil {
		return err
	}
	printPatched(s.out, d, "")
	for edit := range 2 {
		// The handler's Add, or the last try's failure; then the held try.
		if err := s.ctlLog.print(ctx, s.out, 2); err != nil {
			return err
		}
		cm, err := summaries.Patch(ctx, "api-summary", types.MergePatchType, editPatch(edit+1), metav1.PatchOptions{})
		if err != nil {
			return err
		}
		printEdited(s.out, cm)
		hold.release()
	}
	if err := s.ctlLog.print(ctx, s.out, 3); err != nil {
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

// filtersAndOneWorkerPerKey: skipped updates; a key in one worker only.
func (s *steps) filtersAndOneWorkerPerKey(ctx context.Context) error {
	fmt.Fprintln(s.out, "\nStep 4. Filters, and one key never in two workers at once")
	// The informer relists (observe.go): unchanged objects reach the
	// handler as updates. Their order is not defined: sorted by key.
	s.relistFromClient()
	if err := s.ctlLog.printByKey(ctx, s.out, 2); err != nil {
		return err
	}
	s.printf("  queue length %d: resync is off, yet the same-resourceVersion check fired\n", s.ctl.workqueue.Len())
	// Hold web's next sync before it writes, while web changes again.
	hold := s.ctlLog.holdBeforeUpdate(cache.NewObjectName(s.c.Namespace, "web"), 1)
	d, err := s.deploys.Patch(ctx, "web", types.MergePatchType, releasePatch("v5"), metav1.PatchOptions{})
	if err != nil {
		return err
	}
	printPatched(s.out, d, "")
	if err := s.ctlLog.print(ctx, s.out, 2); err != nil { // the Add, the held sync
		return err
	}
	d, err = s.deploys.Patch(ctx, "web", types.MergePatchType, releasePatch("v6"), metav1.PatchOptions{})
	if err != nil {
		return err
	}
	printPatched(s.out, d, "  (while web's sync is held)")
	if err := s.ctlLog.print(ctx, s.out, 1); err != nil { // the Add
		return err
	}
	s.printf("  queue length %d: web is being processed; its Add only marked it dirty\n", s.ctl.workqueue.Len())
	hold.release() // the held sync ends; Done puts web back for the next
	return s.ctlLog.print(ctx, s.out, 3)
}

// deleteAndShutDown: a delete is one more key; then everything stops.
func (s *steps) deleteAndShutDown(ctx context.Context) error {
	fmt.Fprintln(s.out, "\nStep 5. Delete, then shut down: informers, queue, workers")
	if err := s.deploys.Delete(ctx, "api", metav1.DeleteOptions{}); err != nil {
		return err
	}
	fmt.Fprintln(s.out, "  delete deployment/api")
	if err := s.ctlLog.print(ctx, s.out, 3); err != nil { // the Add, the sync
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

// shutDown stops the informers and the controller and returns what
// Run returned; run defers it too, for the paths that end early.
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
	// deploymentsSynced is done once the handler has had the first list.
	deploymentsSynced cache.DoneChecker
	// workqueue holds the keys to sync, each once, and hands a key to
	// one worker at a time.
	workqueue workqueue.TypedRateLimitingInterface[cache.ObjectName]
	// logger is where the controller says what it did.
	logger klog.Logger
}

// !+newController
// NewController builds the queue and the handler that feeds it.
func NewController(ctx context.Context, client kubernetes.Interface,
	deployments appsinformers.DeploymentInformer) (*Controller, error) {
	// Per key: 5ms, 10ms, 20ms, ... capped at 1s (see the README).
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

// handler turns events into keys and does no work itself: a slow
// handler delays every later event.
func (c *Controller) handler() cache.ResourceEventHandlerFuncs {
	return cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) { c.enqueue("ADD", obj) },
		UpdateFunc: func(old, new any) {
			o, n := old.(*appsv1.Deployment), new.(*appsv1.Deployment)
			switch {
			case o.ResourceVersion == n.ResourceVersion:
				// Unchanged: a relist or a resync.
				c.logger.Info("Skip", "object", n, "old", o)
			case o.Generation != n.Generation || !maps.Equal(o.Labels, n.Labels):
				c.enqueue("UPDATE", n)
			}
			// Otherwise a status write: nothing the summary shows.
		},
		// obj may be a DeletedFinalStateUnknown (a delete seen on a relist).
		DeleteFunc: func(obj any) { c.enqueue("DELETE", obj) },
	}
}

// enqueue adds obj's key; DeletionHandlingObjectToName unwraps a tombstone.
func (c *Controller) enqueue(event string, obj any) {
	if key, err := cache.DeletionHandlingObjectToName(obj); err != nil {
		utilruntime.HandleError(err)
	} else {
		// Logged before the Add, so before any worker's line for key.
		c.logger.Info("Enqueue", "event", event, "key", key, "object", obj)
		c.workqueue.Add(key)
		c.logger.V(4).Info("Enqueued", "key", key)
	}
}

// !-newController

// !+run
// Run waits for the handler's first list, starts the workers, and once
// ctx ends shuts the queue down and waits for them.
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

// runWorker processes keys until the queue shuts down.
func (c *Controller) runWorker(ctx context.Context) {
	for c.processNextWorkItem(ctx) {
	}
}

// processNextWorkItem is one turn of a worker: Get a key, sync it,
// Forget it or AddRateLimited, and always Done.
func (c *Controller) processNextWorkItem(ctx context.Context) bool {
	key, shutdown := c.workqueue.Get()
	if shutdown {
		return false
	}
	// Until Done the key is "processing": no other worker can Get it,
	// and an Add only marks it dirty; Done queues a dirty key again.
	defer c.workqueue.Done(key)

	err := c.syncHandler(ctx, key)
	if err == nil {
		// Forget its failures: the next starts at the shortest backoff.
		c.workqueue.Forget(key)
		c.logger.Info("Successfully synced", "key", key)
		return true
	}
	// Add the key again after a delay that grows with each failure.
	c.workqueue.AddRateLimited(key)
	c.logger.Error(err, "Error syncing; requeuing for later retry", "key", key,
		"requeues", c.workqueue.NumRequeues(key))
	return true
}

// !-run

// !+syncHandler
// syncHandler makes configmap/<name>-summary match the Deployment key
// names: the key says which, the lister (cache) what it is now.
func (c *Controller) syncHandler(ctx context.Context, key cache.ObjectName) error {
	cms := c.client.CoreV1().ConfigMaps(key.Namespace)
	cmName := key.Name + "-summary"
	d, err := c.deploymentsLister.Deployments(key.Namespace).Get(key.Name)
	if apierrors.IsNotFound(err) {
		// A real cluster's garbage collector may be first: done too.
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
	// d belongs to the cache, shared by all readers: never modify it.
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
	// cm is ours to change. Update sends its resourceVersion: if
	// someone wrote in between, 409 Conflict.
	c.logger.Info("Updating summary", "key", key, "release", d.Labels["release"], "configmap", cmName)
	cm.Data = want
	_, err = cms.Update(ctx, cm, metav1.UpdateOptions{})
	return err
}

// !-syncHandler

// summaryOf is d's summary: replicas and labels, not the course's own.
func summaryOf(d *appsv1.Deployment) map[string]string {
	l := labels.Set(maps.Clone(d.Labels))
	delete(l, cluster.ManagedByLabel)
	return map[string]string{
		"replicas": strconv.Itoa(int(ptr.Deref(d.Spec.Replicas, 1))),
		"labels":   l.String(),
	}
}

// newSummary is the ConfigMap for d, which a real cluster's garbage
// collector deletes with d. (No BlockOwnerDeletion: it can need RBAC.)
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
