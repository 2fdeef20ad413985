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

	"github.com/informer-walkthrough/informer-walkthrough/internal/check/chaptertest"
	"github.com/informer-walkthrough/informer-walkthrough/internal/check/leakcheck"
	"github.com/informer-walkthrough/informer-walkthrough/internal/fixture"
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
	logs := newControllerLog(t.Context())
	c := &Controller{workqueue: q, logger: logs.Logger()}
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
	lines := logs.lines.Drain()
	if len(lines) != 2 || !strings.Contains(lines[1], "DELETE ns/gone  rv=?") {
		t.Errorf("tombstones logged as %q", lines)
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
// promises that a key is never synced by two workers at once (each
// sync is logged from its write to its "Successfully synced"; the test
// counts those in progress), and that an Add during a sync is not lost:
// the last sync of each key sees the last label written before its
// last Add.
func TestOneKeyOneWorker(t *testing.T) {
	leakcheck.Verify(t)
	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	syncs := &syncCounter{running: map[string]int{}}
	c := &Controller{
		client:            fake.NewClientset(),
		deploymentsLister: appslisters.NewDeploymentLister(indexer),
		workqueue: workqueue.NewTypedRateLimitingQueue(
			workqueue.DefaultTypedControllerRateLimiter[cache.ObjectName]()),
		logger: logr.New(syncs),
	}
	names := []string{"a", "b", "c", "d"}

	var workerWG sync.WaitGroup
	for range 8 {
		workerWG.Go(func() { c.runWorker(t.Context()) })
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

	if syncs.most != 1 {
		t.Errorf("a key was synced by %d workers at once", syncs.most)
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
	t.Logf("%d syncs for 1200 Adds", syncs.total)
}

// syncCounter is a logger's sink that counts the syncs in progress per
// key: from the line a sync logs before it writes to the line that
// ends its turn.
type syncCounter struct {
	mu           sync.Mutex
	running      map[string]int
	most, total  int
	logr.LogSink // not called: every method the logger uses is below
}

func (s *syncCounter) Init(logr.RuntimeInfo)  {}
func (s *syncCounter) Enabled(level int) bool { return level == 0 }
func (s *syncCounter) Error(err error, msg string, kv ...any) {
	s.Info(0, "end", kv...)
}

func (s *syncCounter) Info(_ int, msg string, kv ...any) {
	key := fmt.Sprint(kv[1]) // every line the sync logs starts "key", key
	s.mu.Lock()
	defer s.mu.Unlock()
	switch msg {
	case "Successfully synced", "end":
		s.running[key]--
	default:
		s.running[key]++
		s.total++
		s.most = max(s.most, s.running[key])
	}
}
