// Chapter 07-controller: informer → workqueue → workers. A small, real
// controller, built as kubernetes/sample-controller's controller.go is,
// keeps a ConfigMap "<name>-summary" in sync with each Deployment and
// logs one line where something happens; the steps give it work.
// controller.go is the controller; main.go the steps that drive it.
// The course watches it through its own interfaces, wrapped (observe.go,
// with the taps of internal/tap): its workqueue, its event handler and
// its client. A step can hold a worker's request there, like a
// breakpoint. observe.go also stages step 4's relist.
//
// Read alongside (client-go v0.37.2): util/workqueue/queue.go,
// delaying_queue.go, rate_limiting_queue.go, default_rate_limiters.go,
// informers/factory.go and tools/cache/shared_informer.go.
package main

import (
	"context"
	"fmt"
	"io"
	"sync"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	appsclient "k8s.io/client-go/kubernetes/typed/apps/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

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
	s := &steps{out: out, c: c, stop: stop, watch: newWatch(ctx, c.Namespace),
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
	watch   *watch             // what the taps saw, as lines (observe.go)
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
	// The course watches the controller through its own interfaces,
	// wrapped (observe.go): its client, whose requests a step can hold,
	// the handler it registers on the informer, and its queue.
	client, err := kubernetes.NewForConfig(s.watch.client(s.c.Config))
	if err != nil {
		return err
	}
	s.factory = informers.NewSharedInformerFactoryWithOptions(s.c.Client, 0,
		informers.WithNamespace(s.c.Namespace),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.LabelSelector = cluster.OwnSelector
		}))
	deployments := s.factory.Apps().V1().Deployments()
	// The controller logs for a reader of its code, as sample-controller
	// does; the chapter prints what the taps saw, so here its log goes
	// nowhere. (Without a logger in ctx it would go to klog, on stderr.)
	logged := klog.NewContext(ctx, logr.Discard())
	s.ctl, err = NewController(logged, client, s.watch.handlerOf(deployments))
	if err != nil {
		return err
	}
	s.ctl.workqueue = s.watch.queue(s.ctl.workqueue)
	s.factory.Start(ctx.Done())
	// !-wiring
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
	return s.watch.print(ctx, s.out, 2) // the handler's two Adds
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
	if err := s.watch.print(ctx, s.out, 3); err != nil { // three Adds
		return err
	}
	s.printf("  queue length %d: web was already queued; its Adds changed nothing\n", s.ctl.workqueue.Len())
	// !+startRun
	s.ran.Go(func() { s.runErr = s.ctl.Run(ctx, workers) })
	// !-startRun
	s.printf("  Run: start %d workers\n", workers)
	// Two syncs of two lines each, in parallel: printed by key.
	if err := s.watch.printByKey(ctx, s.out, 4); err != nil {
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
	// Hold api's next two syncs at their Update, before it leaves the
	// controller's client: after they read the lister and GET the
	// summary, so what they send carries that GET's resourceVersion.
	api := cache.NewObjectName(s.c.Namespace, "api")
	hold := s.watch.holdUpdate("api-summary", 2)
	d, err := s.deploys.Patch(ctx, "api", types.MergePatchType, releasePatch("v2"), metav1.PatchOptions{})
	if err != nil {
		return err
	}
	printPatched(s.out, d, "")
	for edit := range 2 {
		// The handler's Add, or the last try's failure; then the held try.
		if err := s.watch.print(ctx, s.out, 2); err != nil {
			return err
		}
		cm, err := summaries.Patch(ctx, "api-summary", types.MergePatchType, editPatch(edit+1), metav1.PatchOptions{})
		if err != nil {
			return err
		}
		printEdited(s.out, cm)
		hold.Release()
	}
	if err := s.watch.print(ctx, s.out, 3); err != nil {
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
	if err := s.watch.printByKey(ctx, s.out, 2); err != nil {
		return err
	}
	s.printf("  queue length %d: resync is off, yet the same-resourceVersion check fired\n", s.ctl.workqueue.Len())
	// Hold web's next sync at its Update, after it read the lister,
	// while web changes again.
	hold := s.watch.holdUpdate("web-summary", 1)
	d, err := s.deploys.Patch(ctx, "web", types.MergePatchType, releasePatch("v5"), metav1.PatchOptions{})
	if err != nil {
		return err
	}
	printPatched(s.out, d, "")
	if err := s.watch.print(ctx, s.out, 2); err != nil { // the Add, the held sync
		return err
	}
	d, err = s.deploys.Patch(ctx, "web", types.MergePatchType, releasePatch("v6"), metav1.PatchOptions{})
	if err != nil {
		return err
	}
	printPatched(s.out, d, "  (while web's sync is held)")
	if err := s.watch.print(ctx, s.out, 1); err != nil { // the Add
		return err
	}
	s.printf("  queue length %d: web is being processed; its Add only marked it dirty\n", s.ctl.workqueue.Len())
	hold.Release() // the held sync ends; Done puts web back for the next
	return s.watch.print(ctx, s.out, 3)
}

// deleteAndShutDown: a delete is one more key; then everything stops.
func (s *steps) deleteAndShutDown(ctx context.Context) error {
	fmt.Fprintln(s.out, "\nStep 5. Delete, then shut down: informers, queue, workers")
	if err := s.deploys.Delete(ctx, "api", metav1.DeleteOptions{}); err != nil {
		return err
	}
	fmt.Fprintln(s.out, "  delete deployment/api")
	if err := s.watch.print(ctx, s.out, 3); err != nil { // the Add, the sync
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
