package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/go-logr/logr"
	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	appslisters "k8s.io/client-go/listers/apps/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	"github.com/informer-walkthrough/informer-walkthrough/check/chaptertest"
	"github.com/informer-walkthrough/informer-walkthrough/check/leakcheck"
	"github.com/informer-walkthrough/informer-walkthrough/internal/fixture"
	"github.com/informer-walkthrough/informer-walkthrough/internal/tap"
)

// TestGolden runs the chapter as main does, on a fresh workshop cluster,
// and compares every line it prints with testdata/07-controller.golden.
func TestGolden(t *testing.T) { chaptertest.Golden(t, "07-controller", run) }

// TestREADME keeps the README's output blocks equal to the golden file
// and its code blocks equal to the chapter's code.
func TestREADME(t *testing.T) { chaptertest.README(t, "07-controller") }

// TestRealClusterShape runs the chapter as it runs on a real cluster
// (no server-side hooks: c.Server is nil) and checks that it prints
// what the golden file holds but for resourceVersion numbers. No step
// is skipped: step 3's 409 comes from a second client's write, step
// 4's relist from the client's own faults.
func TestRealClusterShape(t *testing.T) {
	c := chaptertest.Start(t) // also fails the test on leaked goroutines
	srv := c.Server
	c.Server = nil                       // what a real cluster looks like to run
	t.Cleanup(func() { c.Server = srv }) // so that Close stops it
	out := string(chaptertest.Run(t, "07-controller", func(ctx context.Context, w io.Writer) error {
		return run(ctx, w, c)
	}))
	want, err := goldenFile()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out, "skipped on a real cluster") {
		t.Errorf("a step was skipped:\n%s", out)
	}
	if diff := cmp.Diff(maskRV(want), maskRV(out)); diff != "" {
		t.Errorf("differs beyond resourceVersions (-golden +real):\n%s", diff)
	}
}

func goldenFile() (string, error) {
	b, err := os.ReadFile("testdata/07-controller.golden")
	return string(b), err
}

var rvNumber = regexp.MustCompile(`rv=\d+`)

func maskRV(s string) string { return rvNumber.ReplaceAllString(s, "rv=N") }

// TestTombstone: a delete the informer only noticed on a relist comes
// as a DeletedFinalStateUnknown, with or without the last object. The
// handler still enqueues the right key; MetaNamespaceKeyFunc would fail.
func TestTombstone(t *testing.T) {
	q := workqueue.NewTypedRateLimitingQueue(
		workqueue.DefaultTypedControllerRateLimiter[cache.ObjectName]())
	defer q.ShutDown()
	c := &Controller{workqueue: q, logger: logr.Discard()}
	h := c.handler()

	last := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{
		Namespace: "ns", Name: "gone", ResourceVersion: "7"}}
	for _, tomb := range []cache.DeletedFinalStateUnknown{
		{Key: "ns/gone", Obj: last},
		{Key: "ns/gone", Obj: nil},
	} {
		if _, err := cache.MetaNamespaceKeyFunc(tomb); err == nil {
			t.Error("MetaNamespaceKeyFunc accepted a tombstone")
		}
		h.OnDelete(tomb)
		if key, _ := q.Get(); key != cache.NewObjectName("ns", "gone") {
			t.Errorf("enqueued %q, want ns/gone", key)
		} else {
			q.Done(key)
		}
	}
}

// TestUpdateFilter pins which updates the handler skips: those that
// cannot change the summary.
func TestUpdateFilter(t *testing.T) {
	base := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{
		Namespace: "ns", Name: "web", ResourceVersion: "5", Generation: 1,
		Labels: map[string]string{"release": "v1"}}}
	with := func(f func(d *appsv1.Deployment)) *appsv1.Deployment {
		d := base.DeepCopy()
		d.ResourceVersion = "6"
		f(d)
		return d
	}
	for _, tc := range []struct {
		name string
		new  *appsv1.Deployment
		skip bool
	}{
		{"relist or resync: the same object", base, true},
		{"status only", with(func(d *appsv1.Deployment) { d.Status.Replicas = 1 }), true},
		{"annotation only", with(func(d *appsv1.Deployment) {
			d.Annotations = map[string]string{"a": "b"}
		}), true},
		{"label changed", with(func(d *appsv1.Deployment) { d.Labels["release"] = "v2" }), false},
		{"spec changed", with(func(d *appsv1.Deployment) { d.Generation = 2 }), false},
	} {
		q := workqueue.NewTypedRateLimitingQueue(
			workqueue.DefaultTypedControllerRateLimiter[cache.ObjectName]())
		c := &Controller{workqueue: q, logger: logr.Discard()}
		c.handler().OnUpdate(base, tc.new)
		if skipped := q.Len() == 0; skipped != tc.skip {
			t.Errorf("%s: skipped = %v, want %v", tc.name, skipped, tc.skip)
		}
		q.ShutDown()
	}
}

// TestOneKeyOneWorker hammers the controller: 8 workers, 4 keys, each
// added 300 times from 4 goroutines while syncs run, with a lister over
// an indexer the test writes and a fake clientset. The workqueue
// promises that a key is never synced by two workers at once (the test
// watches the queue: a key is a worker's from its Get to its Done, and
// counts those in progress), and that an Add during a sync is not lost:
// the last sync of each key sees the last label written before its
// last Add.
func TestOneKeyOneWorker(t *testing.T) {
	leakcheck.Verify(t)
	ctx, stop := context.WithCancel(t.Context())
	defer stop()
	rec := tap.NewRecorder(ctx)
	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	c := &Controller{
		client:            fake.NewClientset(),
		deploymentsLister: appslisters.NewDeploymentLister(indexer),
		workqueue: tap.Queue[cache.ObjectName]{Rec: rec, TypedRateLimitingInterface: workqueue.NewTypedRateLimitingQueue(
			workqueue.DefaultTypedControllerRateLimiter[cache.ObjectName]())},
		logger: logr.Discard(),
	}
	names := []string{"a", "b", "c", "d"}

	// The queue's calls, in the order they took effect (the tap records
	// a Get once it returned, a Done before it is made).
	running := map[any]int{}
	most, syncs := 0, 0
	var counted sync.WaitGroup
	counted.Go(func() {
		for {
			e, err := rec.Next(ctx)
			if err != nil {
				return
			}
			switch call, _ := e.(tap.QueueCall); call.Method {
			case "Get":
				if !call.Shutdown {
					running[call.Item]++
					syncs++
					most = max(most, running[call.Item])
				}
			case "Done":
				running[call.Item]--
			case "ShutDown":
				return // the last call the test makes
			}
		}
	})

	var workerWG sync.WaitGroup
	for range 8 {
		workerWG.Go(func() { c.runWorker(klog.NewContext(t.Context(), logr.Discard())) })
	}
	var adders sync.WaitGroup
	for a := range 4 {
		adders.Go(func() {
			for i := range 300 {
				d := fixture.PausedDeployment(names[(a+i)%len(names)], "nginx:1.27", "release", "v1")
				d.Namespace = "ns"
				d.Labels["release"] = fmt.Sprint(a, "-", i)
				if err := indexer.Update(d); err != nil { // as the informer does, before the Add
					t.Error(err)
				}
				c.workqueue.Add(cache.NewObjectName("ns", d.Name))
			}
		})
	}
	adders.Wait()
	// Drain: queued keys are still handed out after shutdown, and
	// ShutDownWithDrain waits until every sync in flight is Done.
	c.workqueue.ShutDownWithDrain()
	workerWG.Wait()
	// ShutDownWithDrain comes from the plain queue: on a delaying (so
	// rate-limiting) queue it leaves the delaying queue's goroutine to
	// notice the shutdown at its next heartbeat, up to 10 s later
	// (delaying_queue.go#L290, #L324). ShutDown ends it now (#L240).
	c.workqueue.ShutDown()
	counted.Wait()

	if most != 1 {
		t.Errorf("a key was synced by %d workers at once", most)
	}
	for _, name := range names {
		obj, _, _ := indexer.GetByKey("ns/" + name)
		cm, err := c.client.CoreV1().ConfigMaps("ns").Get(t.Context(), name+"-summary", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if want := summaryOf(obj.(*appsv1.Deployment)); !maps.Equal(cm.Data, want) {
			t.Errorf("%s: the last sync wrote %v, the last write was %v", name, cm.Data, want)
		}
	}
	t.Logf("%d syncs for 1200 Adds", syncs)
}
