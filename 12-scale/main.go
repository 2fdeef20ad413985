// Chapter 12-scale: informers when one process is not enough.
//
// The first sync of many pods (a watch-list, or a LIST then a WATCH);
// one kind split between informers by shard selectors (KEP-5866, alpha
// in 1.36 behind the ShardedListAndWatch gate); two replicas of a small
// controller electing a leader through a Lease, the standby warm.
//
// Read alongside (client-go and apimachinery v0.37.2): tools/cache/
// reflector.go, informers/factory.go, apimachinery pkg/sharding,
// tools/leaderelection/leaderelection.go, resourcelock/leaselock.go.
// observe.go holds what only shows them at work (flags, logs, printing).
package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/sharding"
	"k8s.io/client-go/informers"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	coordinationclient "k8s.io/client-go/kubernetes/typed/coordination/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	"github.com/informer-walkthrough/informer-walkthrough/internal/cluster"
	"github.com/informer-walkthrough/informer-walkthrough/internal/fixture"
	"github.com/informer-walkthrough/informer-walkthrough/internal/show"
)

func main() { cluster.MainWith("12-scale", extras, run) }

// run creates the pods (--pods, default 40), then runs the steps on them.
func run(ctx context.Context, out io.Writer, c *cluster.Cluster) error {
	if err := createPods(ctx, c, int(podCount)); err != nil {
		return err
	}
	if err := firstSync(ctx, out, c); err != nil {
		return err
	}
	if err := shardedInformers(ctx, out, c); err != nil {
		return err
	}
	return leaderElection(ctx, out, c)
}

// createPods creates n scheduling-gated pods, web-1 … web-n, our own.
func createPods(ctx context.Context, c *cluster.Cluster, n int) error {
	pods := c.Client.CoreV1().Pods(c.Namespace)
	for i := 1; i <= n; i++ {
		pod := fixture.GatedPod(fmt.Sprintf("web-%d", i), cluster.Labels("app", "web"))
		if _, err := pods.Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			return err
		}
	}
	return nil
}

// ownPods: a factory's lists and watches select our pods, and shard.
func ownPods(c *cluster.Cluster, shard string) informers.SharedInformerOption {
	return informers.WithTweakListOptions(func(o *metav1.ListOptions) {
		o.LabelSelector = cluster.OwnSelector
		// !+tweak
		o.ShardSelector = shard
		// !-tweak
	})
}

// firstSync syncs an informer twice: by default, with a watch-list (one
// WATCH streams the pods, then a bookmark); opted out, with a LIST
// (limit=500 a page) and a WATCH from its resourceVersion.
func firstSync(ctx context.Context, out io.Writer, c *cluster.Cluster) error {
	fmt.Fprintln(out, "Step 1. The first sync at size: a watch-list, then a LIST and a WATCH")
	for _, watchList := range []bool{true, false} {
		c.ResetRequests()
		ctx, stop := context.WithCancel(ctx)
		// !+firstSync
		lw := cache.NewFilteredListWatchFromClient(c.Client.CoreV1().RESTClient(),
			"pods", c.Namespace, func(o *metav1.ListOptions) {
				o.LabelSelector = cluster.OwnSelector
			})
		var source cache.ListerWatcher = lw
		if !watchList {
			source = listThenWatch{lw} // opts out (observe.go)
		}
		inf := cache.NewSharedIndexInformer(source, &corev1.Pod{}, 0,
			cache.Indexers{})
		var wg sync.WaitGroup
		wg.Go(func() { inf.RunWithContext(ctx) })
		synced := cache.WaitForCacheSync(ctx.Done(), inf.HasSynced)
		// !-firstSync
		held := len(inf.GetStore().ListKeys())
		stop()
		wg.Wait()
		if !synced {
			return context.Cause(ctx)
		}
		printSync(out, watchList, held, c.Requests())
	}
	return nil
}

// shardedInformers splits the pods between 2, then 4 informers, each
// with a range of the 64-bit FNV-1a hash of the pod's uid. First it
// asks whether the server honours shard selectors: with the gate off
// (its default) it ignores them, and every "shard" would hold every pod.
func shardedInformers(ctx context.Context, out io.Writer, c *cluster.Cluster) error {
	fmt.Fprintln(out, "\nStep 2. Sharding: informers that each hold the pods whose uid hashes into a range")
	pods := c.Client.CoreV1().Pods(c.Namespace)
	// !+probe
	probe, err := pods.List(ctx, metav1.ListOptions{
		LabelSelector: cluster.OwnSelector, Limit: 1,
		ShardSelector: shardRanges(2)[0].String(),
	})
	if err != nil {
		return err
	}
	if probe.ShardInfo == nil { // the server ignored the selector
		// !-probe
		return printIgnored(out)
	}
	printHonoured(out, probe.ShardInfo)
	for _, n := range []int{2, 4} {
		if err := runShards(ctx, out, c, shardRanges(n)); err != nil {
			return err
		}
		web1 := fixture.GatedPod("web-1", cluster.Labels("app", "web")) // back
		if _, err := pods.Create(ctx, web1, metav1.CreateOptions{}); err != nil {
			return err
		}
	}
	return nil
}

// runShards runs one informer per shard, checks that they hold disjoint
// parts whose union is every pod, each in the shard its uid's hash
// names, then shows that one pod's update and delete reach its shard.
func runShards(ctx context.Context, out io.Writer, c *cluster.Cluster, shards []sharding.Selector) error {
	fmt.Fprintf(out, "  %d shards:\n", len(shards))
	ctx, stop := context.WithCancel(ctx)
	var factories []informers.SharedInformerFactory
	defer func() {
		stop()
		for _, f := range factories {
			f.Shutdown()
		}
	}()
	changes := show.NewLines(ctx)
	var stores []cache.Store
	for i, shard := range shards {
		// !+shard
		factory := informers.NewSharedInformerFactoryWithOptions(c.Client, 0,
			informers.WithNamespace(c.Namespace), ownPods(c, shard.String()))
		inf := factory.Core().V1().Pods().Informer()
		// !-shard
		if _, err := inf.AddEventHandler(reportChanges(i, changes)); err != nil {
			return err
		}
		factory.Start(ctx.Done())
		factories = append(factories, factory)
		stores = append(stores, inf.GetStore())
	}
	for _, f := range factories {
		for typ, ok := range f.WaitForCacheSync(ctx.Done()) {
			if !ok {
				return fmt.Errorf("the %v informer did not sync: %w", typ, context.Cause(ctx))
			}
		}
	}
	if err := printShards(out, shards, stores); err != nil {
		return err
	}
	return changeOnePod(ctx, out, c, shards, changes)
}

// changeOnePod updates a pod's label, then deletes it: both changes come
// to the one informer whose shard holds its uid; web-1 comes back after.
func changeOnePod(ctx context.Context, out io.Writer, c *cluster.Cluster, shards []sharding.Selector, changes *show.Lines) error {
	pods := c.Client.CoreV1().Pods(c.Namespace)
	pod, err := pods.Get(ctx, "web-1", metav1.GetOptions{})
	if err != nil {
		return err
	}
	owner := slices.IndexFunc(shards, func(s sharding.Selector) bool {
		ok, err := s.Matches(pod)
		return err == nil && ok
	})
	pod.Labels["tier"] = "front"
	if _, err := pods.Update(ctx, pod, metav1.UpdateOptions{}); err != nil {
		return err
	}
	if err := pods.Delete(ctx, pod.Name, metav1.DeleteOptions{}); err != nil {
		return err
	}
	// The update, then the delete's MODIFIED on a real cluster only
	// (a pod that a kubelet could run ends gracefully), then DELETED.
	lines, err := awaitDeleted(ctx, changes)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "    web-1's uid hashes into shard %d: update and delete came to shard %s\n",
		owner, shardsOf(lines))
	return nil
}

// shardRanges splits the 64-bit hash space into n equal ranges, one
// selector each. Bounds are 16 hex digits, the end of the last one 2^64,
// as the server's parser demands (k8s.io/apiserver pkg/sharding).
func shardRanges(n int) []sharding.Selector {
	var shards []sharding.Selector
	step := ^uint64(0)/uint64(n) + 1
	for i := range n {
		end := fmt.Sprintf("0x%016x", uint64(i+1)*step)
		if i == n-1 {
			end = "0x10000000000000000"
		}
		// !+ranges
		shards = append(shards, sharding.NewSelector(sharding.ShardRangeRequirement{
			Key:   "object.metadata.uid",
			Start: fmt.Sprintf("0x%016x", uint64(i)*step),
			End:   end,
		}))
		// !-ranges
	}
	return shards
}

const leaseName = "scale-controller" // the Lease they elect a leader by

// leaderElection: replica-a leads; replica-b, a warm standby, takes
// over when it stops; then replica-a, back as a cold standby, in turn.
func leaderElection(ctx context.Context, out io.Writer, c *cluster.Cluster) error {
	fmt.Fprintln(out, "\nStep 3. Leader election: two replicas, one Lease, a warm standby")
	leases := c.Client.CoordinationV1().Leases(c.Namespace)
	checks := &reconciles{inHand: map[cache.ObjectName]string{}} // observe.go
	var replicas []*replica
	defer func() { // on every path, Ctrl-C too
		for _, r := range replicas {
			r.stop()
		}
		_ = deleteLease(ctx, leases)
	}()
	if err := deleteLease(ctx, leases); err != nil { // an earlier run's
		return err
	}
	var leader *replica
	for i, warm := range []bool{true, true, false} {
		r, err := startReplica(ctx, c, []string{"replica-a", "replica-b"}[i%2], warm, checks)
		if err != nil {
			return err
		}
		replicas = append(replicas, r)
		if err := takeOver(ctx, out, leases, leader, r); err != nil {
			return err
		}
		leader = r
	}
	leader.stop()
	checks.print(out)
	if err := deleteLease(ctx, leases); err != nil {
		return err
	}
	fmt.Fprintf(out, "  lease/%s deleted\n", leaseName)
	return nil
}

// takeOver: r waits beside leader (if any), then takes the Lease over.
func takeOver(ctx context.Context, out io.Writer, leases coordinationclient.LeaseInterface, leader, r *replica) error {
	if leader != nil {
		if err := r.obs.awaitStandby(ctx, out, leader); err != nil {
			return err
		}
		leader.stop()
		printReleased(out, leader, leader.elector.GetLeader())
	}
	if err := r.obs.await(ctx, "leads"); err != nil {
		return err
	}
	lease, err := leases.Get(ctx, leaseName, metav1.GetOptions{})
	if err != nil {
		return err
	}
	return r.obs.printLeading(ctx, out, lease, leader)
}

// deleteLease deletes the Lease, if any, even once ctx has ended.
func deleteLease(ctx context.Context, leases coordinationclient.LeaseInterface) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := leases.Delete(ctx, leaseName, metav1.DeleteOptions{}); !apierrors.IsNotFound(err) {
		return err
	}
	return nil
}

// replica is one process of the controller: its own client, informer,
// queue, worker and leader elector. Its worker runs only while it leads.
type replica struct {
	name                      string
	factory                   informers.SharedInformerFactory
	pods                      coreinformers.PodInformer
	queue                     workqueue.TypedRateLimitingInterface[cache.ObjectName]
	elector                   *leaderelection.LeaderElector
	leads                     chan context.Context // from OnStartedLeading
	stopReplica, stopElecting context.CancelFunc
	working, electing         sync.WaitGroup
	obs                       *observed // what it does (observe.go)
}

// startReplica starts a replica; warm, its informer synced beforehand.
func startReplica(ctx context.Context, c *cluster.Cluster, name string, warm bool, checks *reconciles) (*replica, error) {
	r := &replica{name: name, leads: make(chan context.Context, 1)}
	r.obs = newObserved(ctx, r, checks)
	// !+replica
	client, err := kubernetes.NewForConfig(r.obs.tap(c.Config))
	if err != nil {
		return nil, err
	}
	r.factory = informers.NewSharedInformerFactoryWithOptions(client, 0,
		informers.WithNamespace(c.Namespace), ownPods(c, ""))
	r.pods = r.factory.Core().V1().Pods()
	r.pods.Informer() // registered, so that Start starts it
	lock := &resourcelock.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Name: leaseName, Namespace: c.Namespace},
		Client:     client.CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: name},
		Labels:     cluster.Labels(),
	}
	r.elector, err = leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock: lock,
		// LeaseDuration > RenewDeadline > 1.2 × RetryPeriod: quick takeovers,
		// and a busy leader may renew up to 3 s late without losing it.
		LeaseDuration:   4 * time.Second,
		RenewDeadline:   3 * time.Second,
		RetryPeriod:     100 * time.Millisecond,
		ReleaseOnCancel: true, // the standby need not wait for expiry
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(lead context.Context) { r.leads <- lead },
			OnStoppedLeading: r.obs.stoppedLeading,
			OnNewLeader:      r.obs.newLeader,
		},
	})
	if err != nil {
		return nil, err
	}
	r.queue = workqueue.NewTypedRateLimitingQueue(
		workqueue.DefaultTypedControllerRateLimiter[cache.ObjectName]())
	rctx, stopReplica := context.WithCancel(ctx)
	// The elector's context is not the run's: on Ctrl-C, stop ends the
	// worker first and the elector after, which then releases.
	ectx, stopElecting := context.WithCancel(context.WithoutCancel(ctx))
	ectx = klog.NewContext(ectx, logr.Discard()) // its log is not the lesson
	// !-replica
	r.stopReplica, r.stopElecting = stopReplica, stopElecting
	if warm {
		r.factory.Start(rctx.Done())
		if err := r.factory.WaitForCacheSyncWithContext(rctx).AsError(); err != nil {
			r.stop()
			return nil, err
		}
	}
	r.working.Go(func() { r.work(rctx) })
	r.electing.Go(func() { r.elector.Run(ectx) })
	return r, nil
}

// !+work
// work waits until the replica leads. The handler, added then, gets the
// cached pods as Adds (a cold informer lists them first); the worker
// reconciles until the Lease is lost or the replica stops.
func (r *replica) work(ctx context.Context) {
	var lead context.Context
	select {
	case lead = <-r.leads:
	case <-ctx.Done():
		return
	}
	r.obs.leading()
	context.AfterFunc(lead, r.queue.ShutDown) // the Lease lost: stop
	r.factory.Start(ctx.Done())               // a cold informer starts now
	if !cache.WaitFor(ctx, "", r.pods.Informer().HasSyncedChecker()) {
		return
	}
	if _, err := r.pods.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    r.enqueue,
		UpdateFunc: func(_, obj any) { r.enqueue(obj) },
		DeleteFunc: r.enqueue,
	}); err != nil {
		return // the informer has stopped
	}
	for r.processNextWorkItem() {
	}
}

// stop ends a replica in the order ReleaseOnCancel asks for: the worker
// (what the Lease guards), then the elector, which releases it.
func (r *replica) stop() {
	r.queue.ShutDown() // the worker ends after the key in hand
	r.stopReplica()
	r.working.Wait()
	r.stopElecting()
	r.electing.Wait() // the Lease is released
	r.factory.Shutdown()
}

// !-work

// enqueue adds obj's key, as chapter 07's handler does.
func (r *replica) enqueue(obj any) {
	if key, err := cache.DeletionHandlingObjectToName(obj); err == nil {
		r.queue.Add(key)
	}
}

// processNextWorkItem: Get, reconcile, Forget or AddRateLimited, Done.
func (r *replica) processNextWorkItem() bool {
	key, shutdown := r.queue.Get()
	if shutdown {
		return false
	}
	defer r.queue.Done(key)
	if err := r.reconcile(key); err != nil {
		r.queue.AddRateLimited(key)
	} else {
		r.queue.Forget(key)
	}
	return true
}

// reconcile reads the pod from the cache: what matters is who does it,
// and when (observe.go checks that no two replicas do one key at once).
func (r *replica) reconcile(key cache.ObjectName) error {
	defer r.obs.reconciling(key, r.elector.IsLeader())()
	_, err := r.pods.Lister().Pods(key.Namespace).Get(key.Name)
	if apierrors.IsNotFound(err) {
		return nil // deleted meanwhile: nothing to do
	}
	return err
}
