package main

// Step 3: two replicas of a small controller elect a leader through a
// Lease; the one that leads works, the other waits beside it, warm.

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
)

const leaseName = "scale-controller" // the Lease they elect a leader by

// leaderElection runs two replicas that elect a leader through a Lease.
// replica-a leads; replica-b, a warm standby, takes over when it stops;
// then replica-a, back as a cold standby, takes over in turn.
func leaderElection(ctx context.Context, out io.Writer, c *cluster.Cluster) error {
	fmt.Fprintln(out, "\nStep 3. Leader election: two replicas, one Lease, a warm standby")
	leases := c.Client.CoordinationV1().Leases(c.Namespace)

	// What the replicas do, as their taps record it (observe.go), and
	// the check of what the step promises on every key a replica takes
	// in hand: only the Lease's holder works, one key at once.
	obs := newReplicas(ctx)

	// Every replica is stopped, in order, and the Lease deleted, on
	// every path out of the step: Ctrl-C too.
	var replicas []*replica
	defer func() {
		for _, r := range replicas {
			r.stop()
		}
		_ = deleteLease(ctx, leases)
	}()
	if err := deleteLease(ctx, leases); err != nil { // an earlier run's
		return err
	}

	// Three replicas in turn, by two names: a, then b warm beside it,
	// then a again, cold. Each takes the Lease over from the one before.
	var leader *replica
	for i, warm := range []bool{true, true, false} {
		r, err := startReplica(ctx, c, []string{"replica-a", "replica-b"}[i%2], warm, obs)
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
	obs.print(out)
	if err := deleteLease(ctx, leases); err != nil {
		return err
	}
	fmt.Fprintf(out, "  lease/%s deleted\n", leaseName)
	return nil
}

// takeOver makes r the leader. r waits beside leader (if any) until it
// sees it lead; then the leader stops, which releases the Lease, and r
// takes it over at its next try.
func takeOver(ctx context.Context, out io.Writer, leases coordinationclient.LeaseInterface, leader, r *replica) error {
	if leader != nil {
		if err := r.obs.awaitStandby(ctx, out, leader); err != nil {
			return err
		}
		leader.stop()
		printReleased(out, leader, leader.elector.GetLeader())
	}
	if err := r.obs.awaitLeading(ctx); err != nil {
		return err
	}
	// The Lease as the server has it: who holds it, how often it passed.
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
	name string
	// factory and pods: the informer of the pods, and its lister.
	factory informers.SharedInformerFactory
	pods    coreinformers.PodInformer
	// queue holds the keys of the pods to reconcile, as chapter 07's.
	queue workqueue.TypedRateLimitingInterface[cache.ObjectName]
	// elector runs for leader; leads hands work the context that ends
	// when the replica stops leading (OnStartedLeading's).
	elector *leaderelection.LeaderElector
	leads   chan context.Context
	// stopReplica ends the worker's context; stopElecting the
	// elector's, which releases the Lease. working and electing are
	// their goroutines, which stop waits for.
	stopReplica, stopElecting context.CancelFunc
	working, electing         sync.WaitGroup
	// obs is what it does, as its taps record it (observe.go).
	obs *observed
}

// startReplica starts a replica; warm, its informer synced beforehand.
func startReplica(ctx context.Context, c *cluster.Cluster, name string, warm bool, obs *replicas) (*replica, error) {
	r := &replica{name: name, leads: make(chan context.Context, 1)}
	r.obs = obs.observe(r)

	// Its own client (its requests recorded as its own), an
	// informer of the pods registered with its factory, and an elector
	// on a LeaseLock. The worker's context ends with the run's; the
	// elector's does not (see stop).
	// !+replica
	client, err := kubernetes.NewForConfig(r.obs.client(c.Config))
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
		Callbacks: r.obs.callbacks(leaderelection.LeaderCallbacks{
			OnStartedLeading: func(lead context.Context) { r.leads <- lead },
			// Required. It is called as Run returns; stop has ended
			// the worker by then.
			OnStoppedLeading: func() {},
		}),
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

	// The queue as the worker uses it, its calls recorded, so that
	// observe.go sees each key from Get to Done and checks the
	// guarantee on it.
	r.queue = r.obs.queue(r.queue)

	// A warm replica syncs its informer now, before it runs for leader:
	// it will have nothing to list when it takes over.
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
// reconciles while the replica leads, until it stops.
func (r *replica) work(ctx context.Context) {
	var lead context.Context
	select {
	case lead = <-r.leads:
	case <-ctx.Done():
		return
	}
	// A lost Lease ends lead. ShutDown wakes a Get that waits on an
	// empty queue, but it does not empty the queue: Get goes on handing
	// out every key already queued. So the worker also checks lead
	// before each key, and leaves the rest to the next leader. Once the
	// worker has ended (stop ends it before the elector), there is no
	// Get left to wake.
	defer context.AfterFunc(lead, r.queue.ShutDown)()
	r.factory.Start(ctx.Done()) // a cold informer starts now
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
	for lead.Err() == nil && r.processNextWorkItem() {
	}
}

// stop ends a replica in the order ReleaseOnCancel asks for: the worker
// (what the Lease guards), then the elector, which releases it.
func (r *replica) stop() {
	r.queue.ShutDown() // the worker works off the queued keys, then ends
	r.stopReplica()
	r.working.Wait()
	r.stopElecting()
	r.electing.Wait() // the Lease is released
	r.factory.Shutdown()
}

// !-work

// enqueue adds obj's key, as chapter 07's handler does. A deleted pod
// may come as a tombstone (DeletedFinalStateUnknown): the key is its.
func (r *replica) enqueue(obj any) {
	if key, err := cache.DeletionHandlingObjectToName(obj); err == nil {
		r.queue.Add(key)
	}
}

// processNextWorkItem is chapter 07's: Get a key, reconcile it, Forget
// it on success or put it back rate-limited on an error, and Done.
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

// reconcile reads the pod from the informer's cache, as a controller's
// sync reads what it acts on; this one acts on nothing more. What
// matters in this step is who reconciles, and when.
func (r *replica) reconcile(key cache.ObjectName) error {
	_, err := r.pods.Lister().Pods(key.Namespace).Get(key.Name)
	if apierrors.IsNotFound(err) {
		return nil // deleted meanwhile: nothing to do
	}
	return err
}
