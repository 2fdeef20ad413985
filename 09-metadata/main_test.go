package main

import (
	"context"
	"io"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	"github.com/informer-walkthrough/informer-walkthrough/check/chaptertest"
	"github.com/informer-walkthrough/informer-walkthrough/check/leakcheck"
	"github.com/informer-walkthrough/informer-walkthrough/internal/cluster"
	"github.com/informer-walkthrough/informer-walkthrough/internal/fixture"
	"github.com/informer-walkthrough/informer-walkthrough/internal/heap"
	"github.com/informer-walkthrough/informer-walkthrough/internal/tap"
)

// TestGolden runs the chapter as main does, on a fresh workshop cluster,
// and compares every line it prints with testdata/09-metadata.golden.
func TestGolden(t *testing.T) { chaptertest.Golden(t, "09-metadata", run) }

// TestREADME keeps the README's output blocks equal to the golden file
// and its code blocks equal to the chapter's code.
func TestREADME(t *testing.T) { chaptertest.README(t, "09-metadata") }

// TestRealClusterShape runs the chapter as on a real cluster (no
// workshop-server hooks) and checks that it prints the golden file's
// steps but for numbers: no step is skipped.
func TestRealClusterShape(t *testing.T) { chaptertest.RealClusterShape(t, "09-metadata", run) }

// TestMemoryFiguresHaveMargin pins what makes step 4's figures safe to
// print: each ratio lies well inside its interval of the 1-2-5 series
// (at least 15% of the ratio away from either end), so that it cannot
// change from one run to the next, under the race detector, or on a
// real cluster. A change to pod.go that moves a ratio near an edge
// fails here, with the ratios, rather than as a flaky golden file.
func TestMemoryFiguresHaveMargin(t *testing.T) {
	c := chaptertest.Start(t)
	ctx := t.Context()
	var owner metav1.OwnerReference
	if err := dynamicDeployments(ctx, io.Discard, c, &owner); err != nil {
		t.Fatal(err)
	}
	pods := c.Client.CoreV1().Pods(c.Namespace)
	for i := range shapedPods {
		pod, status, err := shapedPod(i, owner)
		if err != nil {
			t.Fatal(err)
		}
		created, err := pods.Create(ctx, pod, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		status.QOSClass = created.Status.QOSClass
		created.Status = status
		if _, err := pods.UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	caches, err := fiveInformers(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	perPod := heap.ReleasePerObject(caches, shapedPods)
	for i, name := range variants {
		r := perPod[i] / perPod[0]
		t.Logf("%-20s %7.0f bytes per pod, %.3f of typed", name, perPod[i], r)
		if i == 0 {
			continue
		}
		for j := 1; j < len(heap.Scale); j++ {
			if lo, hi := heap.Scale[j-1], heap.Scale[j]; r >= lo && r < hi {
				if r < lo*1.15 || r > hi/1.15 {
					t.Errorf("%s: ratio %.3f is within 15%% of an end of its interval %g-%g", name, r, lo, hi)
				}
			}
		}
	}
}

// TestTransformNeverSeesTombstone stages what step 5 cannot show on a
// real cluster: a delete the informer misses during an outage. After
// the relist, OnDelete gets a DeletedFinalStateUnknown, made from the
// cache after the queue (processReplacedAllInfo), so the Transform
// never receives it; it receives the relisted objects, and the
// tombstone carries the object as the Transform left it.
func TestTransformNeverSeesTombstone(t *testing.T) {
	if leakcheck.RunApart(t) {
		return // it waits on a relist's backoff, apart from the other tests
	}
	c := chaptertest.Start(t)
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	pods := c.Client.CoreV1().Pods(c.Namespace)
	for _, name := range []string{"web-1", "web-2"} {
		if _, err := pods.Create(ctx, fixture.GatedPod(name, cluster.Labels("app", "web")), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	rec := tap.NewRecorder(ctx) // what the Transform and the handler received, in order
	_, informer := cache.NewInformerWithOptions(cache.InformerOptions{
		ListerWatcher: cache.NewListWatchFromClient(c.Client.CoreV1().RESTClient(), "pods", c.Namespace, fields.Everything()),
		ObjectType:    &corev1.Pod{},
		Handler:       tap.Handler{Rec: rec},
		Transform:     tap.Transform(rec, dropManagedFields),
	})
	done := make(chan struct{})
	go func() { defer close(done); informer.RunWithContext(ctx) }()
	defer func() { cancel(); <-done }()
	if !cache.WaitFor(ctx, "", informer.HasSyncedChecker()) {
		t.Fatal(context.Cause(ctx))
	}
	// One event first: a watch that ends within a second having
	// delivered nothing is a VeryShortWatchError, not a 410 (05-informer).
	if _, err := pods.Patch(ctx, "web-1", types.MergePatchType, []byte(`{"metadata":{"labels":{"tier":"front"}}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	// The outage: the re-watch waits while web-2 is deleted and the
	// history compacted, then gets 410 Expired, and the reflector relists.
	c.Server.HoldWatches()
	defer c.Server.ReleaseWatches()
	c.Server.DropWatches()
	if err := pods.Delete(ctx, "web-2", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	c.Server.CompactHistory()
	c.Server.ReleaseWatches()

	// Every Transform call of the relist comes before its OnDelete: the
	// RealFIFO transforms as it queues, the handler is called as the
	// queue is popped.
	var received []any // what the Transform received
	var obj any
	for obj == nil {
		e, err := rec.Next(ctx)
		if err != nil {
			t.Fatalf("no OnDelete after the relist: %v", err)
		}
		switch e := e.(type) {
		case tap.Transformed:
			received = append(received, e.Obj)
		case tap.HandlerCall:
			if e.Method == "OnDelete" {
				obj = e.Obj
			}
		}
	}
	tomb, ok := obj.(cache.DeletedFinalStateUnknown)
	if !ok {
		t.Fatalf("OnDelete got %T, want a DeletedFinalStateUnknown", obj)
	}
	if p, ok := tomb.Obj.(*corev1.Pod); !ok || p.Name != "web-2" || len(p.ManagedFields) != 0 {
		t.Errorf("the tombstone carries %s, want web-2 as the Transform left it (no managedFields)", withManagedFields(tomb.Obj))
	}
	relisted := 0
	for _, o := range received {
		switch o := o.(type) {
		case cache.DeletedFinalStateUnknown:
			t.Errorf("the Transform received a tombstone: %s", o.Key)
		case *corev1.Pod:
			if o.Name == "web-1" {
				relisted++
			}
		default:
			t.Errorf("the Transform received a %T", o)
		}
	}
	// web-1: twice at the start (watch-list), once for the patch, twice
	// in the relist (a watch-list again).
	if relisted != 5 {
		t.Errorf("the Transform received web-1 %d times, want 5", relisted)
	}
}
