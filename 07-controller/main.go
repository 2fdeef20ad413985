// Chapter 07-controller: informer → workqueue → workers. A small, real
// controller keeps a ConfigMap "<name>-summary" in sync with each
// Deployment; the steps show what the workqueue adds. recorder.go only
// watches, by wrapping the queue, rate limiter, lister, client and
// handler, and prints; stage.go stages the faults that only the
// workshop cluster can make.
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
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/informers"
	appsinformers "k8s.io/client-go/informers/apps/v1"
	"k8s.io/client-go/kubernetes"
	appsclient "k8s.io/client-go/kubernetes/typed/apps/v1"
	appslisters "k8s.io/client-go/listers/apps/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/informer-walkthrough/informer-walkthrough/internal/cluster"
)

func main() { cluster.Main("07-controller", run) }

// workers is how many goroutines take keys off the queue.
const workers = 3

// run is the chapter, one step after the other; each step prints its
// heading, then what happened. The steps share one controller.
func run(ctx context.Context, out io.Writer, c *cluster.Cluster) error {
	s := &steps{out: out, c: c, rec: newRecorder(ctx, out),
		deploys: c.Client.AppsV1().Deployments(c.Namespace)}
	defer s.shutDown() // on every path out of run
	for _, step := range []func(context.Context) error{
		s.partsOfAController,        // Step 1
		s.dedup,                     // Step 2
		s.retryWithBackoff,          // Step 3
		s.filtersAndOneWorkerPerKey, // Step 4
		s.deleteAndShutDown,         // Step 5
	} {
		if err := step(ctx); err != nil {
			return err
		}
	}
	return nil
}

// steps is what the steps share: the cluster and the controller's parts.
type steps struct {
	out     io.Writer
	c       *cluster.Cluster
	deploys appsclient.DeploymentInterface
	rec     *recorder // what the handler and workers did (recorder.go)

	factory       informers.SharedInformerFactory
	informer      appsinformers.DeploymentInformer
	stopInformers context.CancelFunc
	queue         workqueue.TypedRateLimitingInterface[string]
	ctl           *controller
	workers       sync.WaitGroup
}

// partsOfAController builds the controller from a shared informer
// factory and a queue of keys. Workers are not started yet, on purpose.
func (s *steps) partsOfAController(ctx context.Context) error {
	fmt.Fprintln(s.out, "Step 1. Informer → handler → workqueue: the handler only enqueues keys")
	// !+wiring
	s.factory = informers.NewSharedInformerFactoryWithOptions(s.c.Client, 0,
		informers.WithNamespace(s.c.Namespace),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.LabelSelector = cluster.OwnSelector
		}))
	s.informer = s.factory.Apps().V1().Deployments()
	// A per-key exponential backoff: 5ms, 10ms, 20ms, ... capped at
	// 1s. (The default limiter caps at 1000s; see the README.)
	limiter := workqueue.NewTypedItemExponentialFailureRateLimiter[string](
		5*time.Millisecond, time.Second)
	queue := workqueue.NewTypedRateLimitingQueueWithConfig(s.rec.limiter(limiter),
		workqueue.TypedRateLimitingQueueConfig[string]{Name: "summaries"})
	s.queue = s.rec.queue(queue)
	s.ctl = newController(s.rec.client(s.c.Client), s.rec.lister(s.informer.Lister()), s.queue)
	reg, err := s.informer.Informer().AddEventHandler(s.rec.handler(s.ctl.handler()))
	// !-wiring
	if err != nil {
		return err
	}

	// Workers may trust the lister once the informer has listed, and
	// the handler has queued the keys of that list once it has synced.
	// !+start
	informerCtx, stopInformers := context.WithCancel(ctx)
	s.stopInformers = stopInformers
	s.factory.StartWithContext(informerCtx)
	if err := s.factory.WaitForCacheSyncWithContext(ctx).AsError(); err != nil {
		return err
	}
	if !cache.WaitFor(ctx, "", reg.HasSyncedChecker()) {
		return fmt.Errorf("event handler did not sync: %w", ctx.Err())
	}
	// !-start
	s.printf("  informer synced, handler synced: %d deployments cached; no workers yet\n",
		len(s.informer.Informer().GetStore().ListKeys()))
	for _, d := range []*appsv1.Deployment{newDeployment("web"), newDeployment("api")} {
		d, err := s.deploys.Create(ctx, d, metav1.CreateOptions{})
		if err != nil {
			return err
		}
		printCreated(s.out, d)
	}
	if err := s.rec.show(ctx, "the handler to see both creates", adds(2)); err != nil {
		return err
	}
	s.printf("  queue length %d: two keys wait, no worker runs yet\n", s.queue.Len())
	return nil
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
	if err := s.rec.show(ctx, "the handler to see the patches", adds(3)); err != nil {
		return err
	}
	s.printf("  queue length %d: web was already queued, so the three Adds changed nothing\n",
		s.queue.Len())
	// !+workers
	for range workers {
		s.workers.Go(func() { s.ctl.runWorker(ctx) })
	}
	// !-workers
	s.printf("  start %d workers\n", workers)
	// The workers run in parallel: sorted by key, the output is stable.
	if err := s.rec.showSorted(ctx, "both keys to sync", synced(1, "web", "api")); err != nil {
		return err
	}
	fmt.Fprintln(s.out, "  web: 4 events (ADD + 3 UPDATE), 1 sync, and it read release=v4")
	return nil
}

// retryWithBackoff: two 409 Conflicts, as when someone else wrote
// first. Each failure waits twice as long; success forgets them.
func (s *steps) retryWithBackoff(ctx context.Context) error {
	fmt.Fprintln(s.out, "\nStep 3. Retry: a failed sync is requeued with backoff, then forgotten")
	// The next two updates of configmap/api-summary answer 409 (stage.go).
	if !s.stageConflicts() {
		return nil // a real cluster cannot be made to; it said so
	}
	d, err := s.deploys.Patch(ctx, "api", types.MergePatchType, releasePatch("v2"), metav1.PatchOptions{})
	if err != nil {
		return err
	}
	printPatched(s.out, d, "")
	if err := s.rec.show(ctx, "api to sync after its retries", synced(1, "api")); err != nil {
		return err
	}
	api := key(s.c.Namespace, "api")
	s.printf("  after Forget: NumRequeues(%s) = %d\n", api, s.queue.NumRequeues(api))
	return nil
}

// filtersAndOneWorkerPerKey: the updates the handler skips; then a key
// being processed is never handed to a second worker.
func (s *steps) filtersAndOneWorkerPerKey(ctx context.Context) error {
	fmt.Fprintln(s.out, "\nStep 4. Filters, and one key never in two workers at once")
	if err := s.relist(ctx); err != nil {
		return err
	}
	web, err := s.informer.Lister().Deployments(s.c.Namespace).Get("web")
	if err != nil {
		return err
	}
	statusOnly := web.DeepCopy()
	statusOnly.ResourceVersion += "0" // any other resourceVersion
	statusOnly.Status.ObservedGeneration = web.Generation
	_, why := skipUpdate(web, statusOnly)
	s.printf("  filter OnUpdate(web, web with new status): skip, %s\n", why)

	// The recorder holds web's next sync right after its lister read.
	held, release := s.rec.hold(key(s.c.Namespace, "web"))
	defer release()
	d, err := s.deploys.Patch(ctx, "web", types.MergePatchType, releasePatch("v5"), metav1.PatchOptions{})
	if err != nil {
		return err
	}
	printPatched(s.out, d, "  (its sync will be held after reading)")
	if err := held(ctx); err != nil {
		return err
	}
	d, err = s.deploys.Patch(ctx, "web", types.MergePatchType, releasePatch("v6"), metav1.PatchOptions{})
	if err != nil {
		return err
	}
	printPatched(s.out, d, "  (while that sync is held)")
	if err := s.rec.waitFor(ctx, "the handler to see release=v6", adds(2)); err != nil {
		return err
	}
	s.printf("  queue length %d: web is being processed, so its Add only marked it dirty\n",
		s.queue.Len())
	release()
	fmt.Fprintln(s.out, "  release the held sync")
	return s.rec.printMostAtOnce(ctx, "web to sync twice", synced(2, "web"))
}

// relist: the workshop cluster makes the informer's re-watch get 410
// Expired, so it relists (stageOutage, in stage.go). Resync is off, yet
// every unchanged object reaches the handler as OnUpdate(old, new), at
// equal resourceVersions.
func (s *steps) relist(ctx context.Context) error {
	if !s.stageOutage(s.informer.Informer().LastSyncResourceVersion()) {
		return nil // a real cluster cannot be made to; it said so
	}
	if err := s.rec.showRelist(ctx, len(s.informer.Informer().GetStore().ListKeys())); err != nil {
		return err
	}
	s.printf("  queue length %d: resync is off, yet the handler's same-resourceVersion check fired\n",
		s.queue.Len())
	return nil
}

// deleteAndShutDown: a delete is one more key; the sync finds nothing
// in the lister and removes the summary. Then everything stops.
func (s *steps) deleteAndShutDown(ctx context.Context) error {
	fmt.Fprintln(s.out, "\nStep 5. Delete, then shut down: informers, queue, workers")
	if err := s.deploys.Delete(ctx, "api", metav1.DeleteOptions{}); err != nil {
		return err
	}
	fmt.Fprintln(s.out, "  delete deployment/api")
	if err := s.rec.show(ctx, "api's delete to sync", synced(1, "api")); err != nil {
		return err
	}
	s.shutDown()
	fmt.Fprintln(s.out, "  informers stopped (context canceled, factory.Shutdown returned)")
	s.printf("  queue.ShutDown: Get reported shutdown, %d workers returned\n", workers)
	return printLeftBehind(ctx, s.out, s.c)
}

// shutDown stops, in order, the informers (no new events) and the queue
// (Get reports shutdown once it is empty), then waits for the workers.
// run calls it again on its way out, which matters after an error.
func (s *steps) shutDown() {
	// !+shutdown
	if s.stopInformers != nil {
		s.stopInformers()
		s.factory.Shutdown()
	}
	if s.queue != nil {
		s.queue.ShutDown()
	}
	s.workers.Wait()
	// !-shutdown
}

// controller keeps configmap/<name>-summary in sync with each Deployment.
type controller struct {
	client kubernetes.Interface
	lister appslisters.DeploymentLister
	queue  workqueue.TypedRateLimitingInterface[string]
	// syncHandler is syncDeployment (sample-controller names its sync
	// function so); tests swap in their own.
	syncHandler func(ctx context.Context, key string) error
}

func newController(client kubernetes.Interface, lister appslisters.DeploymentLister,
	queue workqueue.TypedRateLimitingInterface[string]) *controller {
	ctl := &controller{client: client, lister: lister, queue: queue}
	ctl.syncHandler = ctl.syncDeployment
	return ctl
}

// !+handler
// handler turns informer events into keys. It does no work itself:
// handlers run one at a time on the informer's goroutine for this
// handler, and a slow one delays every later event.
func (ctl *controller) handler() cache.ResourceEventHandlerFuncs {
	return cache.ResourceEventHandlerFuncs{
		AddFunc: ctl.enqueue,
		UpdateFunc: func(old, new any) {
			if skip, _ := skipUpdate(old, new); skip {
				return
			}
			ctl.enqueue(new)
		},
		// obj is the deleted Deployment, or a DeletedFinalStateUnknown
		// if the informer only noticed the delete on a relist.
		DeleteFunc: ctl.enqueue,
	}
}

// !-handler

// !+enqueue
// enqueue adds obj's namespace/name key. DeletionHandlingMetaNamespaceKeyFunc
// unwraps a tombstone (MetaNamespaceKeyFunc would fail on one).
func (ctl *controller) enqueue(obj any) {
	key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
	if err != nil {
		utilruntime.HandleError(err)
		return
	}
	ctl.queue.Add(key)
}

// !-enqueue

// skipUpdate says whether an update cannot change the summary. Same
// resourceVersion: an unchanged object of a relist, or a resync. Same
// generation and labels: on a real cluster, a status write.
func skipUpdate(old, new any) (bool, string) {
	o, ok1 := old.(*appsv1.Deployment)
	n, ok2 := new.(*appsv1.Deployment)
	switch {
	case !ok1 || !ok2:
		return false, ""
	case o.ResourceVersion == n.ResourceVersion:
		return true, "same resourceVersion"
	case o.Generation == n.Generation && maps.Equal(o.Labels, n.Labels):
		return true, "same generation and labels"
	}
	return false, ""
}

// runWorker processes keys until the queue shuts down.
func (ctl *controller) runWorker(ctx context.Context) {
	for ctl.processNextWorkItem(ctx) {
	}
}

// !+processNextWorkItem
// processNextWorkItem is one turn of a worker: Get a key, sync it,
// then either Forget it (success) or AddRateLimited (retry later),
// and always Done.
func (ctl *controller) processNextWorkItem(ctx context.Context) bool {
	key, shutdown := ctl.queue.Get()
	if shutdown {
		return false
	}
	// Between Get and Done the key is "processing": no other worker
	// can Get it, and an Add only marks it dirty. Done puts a dirty
	// key back in the queue.
	defer ctl.queue.Done(key)

	err := ctl.syncHandler(ctx, key)
	if err == nil {
		// Success: forget the key's failures, so that its next
		// failure starts again at the shortest backoff.
		ctl.queue.Forget(key)
		return true
	}
	// Failure: add the key again once the rate limiter's delay for
	// it has passed. The delay grows with each failure.
	ctl.queue.AddRateLimited(key)
	return true
}

// !-processNextWorkItem

// syncDeployment makes configmap/<name>-summary match the Deployment
// named by key, read from the lister (the informer's cache): the key
// says which object, the cache says what it looks like now.
func (ctl *controller) syncDeployment(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		utilruntime.HandleError(err)
		return nil // retrying cannot help
	}
	cms := ctl.client.CoreV1().ConfigMaps(ns)
	cmName := name + "-summary"
	d, err := ctl.lister.Deployments(ns).Get(name)
	if apierrors.IsNotFound(err) {
		// On a real cluster the garbage collector may have deleted it
		// first (ownerReference); NotFound means done either way.
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
		_, err = cms.Create(ctx, newSummary(d, cmName, want), metav1.CreateOptions{})
		return err
	case err != nil:
		return err
	case maps.Equal(cm.Data, want):
		return nil
	}
	// cm came from a GET, so it is ours to change. Update sends its
	// resourceVersion: if someone wrote in between, 409 Conflict.
	cm.Data = want
	_, err = cms.Update(ctx, cm, metav1.UpdateOptions{})
	return err
}
