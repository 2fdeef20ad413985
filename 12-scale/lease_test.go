package main

import (
	"context"
	"fmt"
	"testing"

	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/informer-walkthrough/informer-walkthrough/check/chaptertest"
	"github.com/informer-walkthrough/informer-walkthrough/check/leakcheck"
	"github.com/informer-walkthrough/informer-walkthrough/internal/tap"
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

	// Its queue, tapped; the tap holds the worker's first Get once it
	// has a key, so that the test loses the Lease while it is in hand.
	rec := tap.NewRecorder(ctx)
	q := tap.Queue[cache.ObjectName]{TypedRateLimitingInterface: workqueue.NewTypedRateLimitingQueue(
		workqueue.DefaultTypedControllerRateLimiter[cache.ObjectName]()), Rec: rec}
	defer q.ShutDown()
	first := rec.Hold(1, isGet)
	defer first.Open()
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
	gets := 0
	for held := false; !held; {
		e, err := rec.Next(ctx)
		if err != nil {
			t.Fatal("the worker took no key")
		}
		_, held = e.(tap.Held)
	}
	lose()
	first.Release()
	select {
	case <-worked:
	case <-ctx.Done():
		t.Fatal("the worker did not end once the Lease was lost")
	}
	for _, e := range rec.Drain() {
		if isGet(e) {
			gets++
		}
	}
	if gets != 0 {
		t.Errorf("the worker took %d more keys once the Lease was lost; want 0", gets)
	}
	if left := q.Len(); left < n-1 {
		t.Errorf("%d keys left queued; want at least %d, for the next leader", left, n-1)
	}
}

// isGet is a Get that handed out a key.
func isGet(e tap.Event) bool {
	c, ok := e.(tap.QueueCall)
	return ok && c.Method == "Get" && !c.Shutdown
}
