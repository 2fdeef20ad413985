package main

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/informer-walkthrough/informer-walkthrough/internal/check/chaptertest"
	"github.com/informer-walkthrough/informer-walkthrough/internal/check/leakcheck"
)

// TestLostLeaseStopsWorker: a replica whose Lease is lost while keys are
// queued takes no more of them. ShutDown alone would not stop it: Get
// goes on handing out every queued key until the queue is empty
// (util/workqueue/queue.go), so the worker would reconcile its backlog
// without the Lease. The key it took before the loss is the one it
// reconciles; the rest stay queued for the next leader.
func TestLostLeaseStopsWorker(t *testing.T) {
	leakcheck.Verify(t)
	c := chaptertest.StartWith(t, workshop)
	ctx := t.Context()
	const n = 5
	if err := createPods(ctx, c, n); err != nil {
		t.Fatal(err)
	}

	// A replica without an elector: the test hands work its lead
	// context, and loses the Lease by cancelling it.
	factory := informers.NewSharedInformerFactoryWithOptions(c.Client, 0,
		informers.WithNamespace(c.Namespace), ownPods(c, ""))
	defer factory.Shutdown()
	r := &replica{name: "replica-t", factory: factory, pods: factory.Core().V1().Pods(),
		leads: make(chan context.Context, 1)}
	r.pods.Informer()
	r.obs = newObserved(ctx, r, newGuaranteeCheck())
	q := &heldFirstGet{
		TypedRateLimitingInterface: workqueue.NewTypedRateLimitingQueue(
			workqueue.DefaultTypedControllerRateLimiter[cache.ObjectName]()),
		taken: make(chan struct{}), release: make(chan struct{}),
	}
	defer q.ShutDown()
	r.queue = q
	for i := 1; i <= n; i++ { // the backlog, queued before it leads
		q.Add(cache.ObjectName{Namespace: c.Namespace, Name: fmt.Sprintf("web-%d", i)})
	}

	lead, lose := context.WithCancel(ctx)
	defer lose()
	r.leads <- lead
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	worked := make(chan struct{})
	go func() { r.work(wctx); close(worked) }()

	// The worker holds its first key; the Lease is lost; it goes on.
	select {
	case <-q.taken:
	case <-ctx.Done():
		t.Fatal("the worker took no key")
	}
	lose()
	close(q.release)
	select {
	case <-worked:
	case <-ctx.Done():
		t.Fatal("the worker did not end once the Lease was lost")
	}
	if got := q.gets.Load(); got != 1 {
		t.Errorf("the worker took %d keys; want 1, the one it held as the Lease was lost", got)
	}
	if left := q.Len(); left < n-1 {
		t.Errorf("%d keys left queued; want at least %d, for the next leader", left, n-1)
	}
}

// heldFirstGet is a workqueue whose first Get, once it has a key, waits
// for release: the test loses the Lease while the worker holds it.
type heldFirstGet struct {
	workqueue.TypedRateLimitingInterface[cache.ObjectName]
	gets           atomic.Int32
	taken, release chan struct{}
}

func (q *heldFirstGet) Get() (cache.ObjectName, bool) {
	key, shutdown := q.TypedRateLimitingInterface.Get()
	if !shutdown && q.gets.Add(1) == 1 {
		close(q.taken)
		<-q.release
	}
	return key, shutdown
}
