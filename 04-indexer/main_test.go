package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/features"
	clientfeaturestesting "k8s.io/client-go/features/testing"
	"k8s.io/client-go/tools/cache"

	"github.com/informer-walkthrough/informer-walkthrough/check/chaptertest"
	"github.com/informer-walkthrough/informer-walkthrough/check/leakcheck"
	"github.com/informer-walkthrough/informer-walkthrough/internal/cluster"
	"github.com/informer-walkthrough/informer-walkthrough/internal/fixture"
)

// TestGolden runs the chapter as main does, on a fresh workshop cluster,
// and compares every line it prints with testdata/04-indexer.golden.
func TestGolden(t *testing.T) { chaptertest.Golden(t, "04-indexer", run) }

// TestREADME keeps the README's output blocks equal to the golden file
// and its code blocks equal to the chapter's code.
func TestREADME(t *testing.T) { chaptertest.README(t, "04-indexer") }

// TestRealClusterShape runs the chapter as on a real cluster (no
// workshop-server hooks) and checks that it prints the golden file's
// steps but for numbers: no step is skipped.
func TestRealClusterShape(t *testing.T) { chaptertest.RealClusterShape(t, "04-indexer", run) }

// TestPanics pins the two panics step 4 describes.
func TestPanics(t *testing.T) {
	// NewIndexer keeps a nil Indexers map as it is. Add works (there is
	// nothing to index), AddIndexers writes into the nil map.
	t.Run("nil Indexers then AddIndexers", func(t *testing.T) {
		idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, nil)
		if err := idx.Add(examplePods()[0]); err != nil {
			t.Fatal(err)
		}
		got := panicOf(func() {
			_ = idx.AddIndexers(cache.Indexers{byApp: appIndex})
		})
		if !strings.Contains(got, "assignment to entry in nil map") {
			t.Fatalf("panic = %q, want a nil map assignment", got)
		}
	})

	// The chapter's IndexFuncs return an error for anything but a pod.
	// The store cannot return that error from Add: it panics.
	t.Run("IndexFunc error", func(t *testing.T) {
		idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc,
			cache.Indexers{byApp: appIndex})
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
			Namespace: "shop", Name: "settings"}}
		got := panicOf(func() { _ = idx.Add(cm) })
		want := `unable to calculate an index entry for key "shop/settings"` +
			` on index "app": app index: want *v1.Pod, got *v1.ConfigMap`
		if got != want {
			t.Fatalf("panic = %q\nwant    %q", got, want)
		}
	})

	// With cache.Indexers{} instead of nil, AddIndexers is fine.
	t.Run("empty Indexers then AddIndexers", func(t *testing.T) {
		idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
		if err := idx.Add(examplePods()[0]); err != nil {
			t.Fatal(err)
		}
		err := idx.AddIndexers(cache.Indexers{byApp: appIndex})
		if err != nil {
			t.Fatal(err)
		}
		got := idx.ListIndexFuncValues(byApp)
		if !slices.Equal(got, []string{"web"}) {
			t.Fatalf("values = %v, want [web]", got)
		}
	})
}

func panicOf(f func()) (msg string) {
	defer func() {
		if r := recover(); r != nil {
			msg = fmt.Sprint(r)
		}
	}()
	f()
	return ""
}

// TestInPlaceMutation pins step 3's stale index: the old values are
// computed from the object the store holds, already mutated, so the key
// is never removed from the old value; and old and new being the same
// single value, updateSingleIndex returns early, so the key never
// reaches the new value either.
func TestInPlaceMutation(t *testing.T) {
	idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc,
		cache.Indexers{byApp: appIndex})
	p := newPod("shop", "web-1", "web", "")
	if err := idx.Add(p); err != nil {
		t.Fatal(err)
	}
	p.Labels["app"] = "blue"
	if err := idx.Update(p); err != nil {
		t.Fatal(err)
	}
	web, _ := idx.IndexKeys(byApp, "web")
	blue, _ := idx.IndexKeys(byApp, "blue")
	if !slices.Equal(web, []string{"shop/web-1"}) || len(blue) != 0 {
		t.Fatalf("web=%v blue=%v, want stale [shop/web-1], []",
			web, blue)
	}

	// A later Update with a proper copy does not repair it: the
	// store's old object is the mutated one, so old and new values are
	// both "blue" and nothing moves.
	cp := p.DeepCopy()
	if err := idx.Update(cp); err != nil {
		t.Fatal(err)
	}
	web, _ = idx.IndexKeys(byApp, "web")
	blue, _ = idx.IndexKeys(byApp, "blue")
	if len(web) != 1 || len(blue) != 0 {
		t.Fatalf("web=%v blue=%v: still stale until Replace", web, blue)
	}

	// Replace rebuilds the indices and repairs it.
	if err := idx.Replace([]any{cp}, ""); err != nil {
		t.Fatal(err)
	}
	web, _ = idx.IndexKeys(byApp, "web")
	blue, _ = idx.IndexKeys(byApp, "blue")
	if len(web) != 0 || !slices.Equal(blue, []string{"shop/web-1"}) {
		t.Fatalf("after Replace web=%v blue=%v", web, blue)
	}
}

// TestTombstoneNeverReachesIndexFuncs pins step 6: Delete un-indexes
// the object the store holds, not the object passed in.
func TestTombstoneNeverReachesIndexFuncs(t *testing.T) {
	var seen []string
	record := func(obj any) ([]string, error) {
		seen = append(seen, fmt.Sprintf("%T", obj))
		return appIndex(obj)
	}
	idx := cache.NewIndexer(cache.DeletionHandlingMetaNamespaceKeyFunc,
		cache.Indexers{byApp: record})
	p := newPod("shop", "web-1", "web", "")
	if err := idx.Add(p); err != nil {
		t.Fatal(err)
	}
	tomb := cache.DeletedFinalStateUnknown{Key: "shop/web-1", Obj: nil}
	if err := idx.Delete(tomb); err != nil {
		t.Fatal(err)
	}
	if want := []string{"*v1.Pod", "*v1.Pod"}; !slices.Equal(seen, want) {
		t.Fatalf("IndexFunc saw %v, want %v", seen, want)
	}
	if keys := idx.ListKeys(); len(keys) != 0 {
		t.Fatalf("keys after Delete(tomb) = %v", keys)
	}
}

// TestRelistTombstone pins when step 6's tombstone reaches an informer's
// store. The workshop cluster stages a relist that no longer lists
// web-1 (its delete happened while the watch was down and the history
// was compacted, so the re-watch gets a 410). OnDelete gets a
// DeletedFinalStateUnknown either way. The store: with AtomicFIFO on,
// the relist is one ReplacedAll and the store is Replaced with the new
// list, so no index function sees web-1 again; with it off, the queue
// turns web-1 into a Deleted tombstone and the informer calls
// store.Delete(tomb), which un-indexes the web-1 it held.
func TestRelistTombstone(t *testing.T) {
	for _, atomic := range []bool{true, false} {
		t.Run(fmt.Sprintf("AtomicFIFO=%t", atomic), func(t *testing.T) {
			if leakcheck.RunApart(t) {
				return // it waits on a relist's backoff; and the feature gate is the process's
			}
			clientfeaturestesting.SetFeatureDuringTest(t,
				features.AtomicFIFO, atomic)
			c := chaptertest.Start(t)
			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
			defer cancel()

			pods := c.Client.CoreV1().Pods(c.Namespace)
			for _, name := range []string{"web-1", "web-2"} {
				p := fixture.GatedPod(name, cluster.Labels("app", "web"))
				if _, err := pods.Create(ctx, p, metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
			}

			// The index function records the pods it is called on.
			var mu sync.Mutex
			var indexed []string
			record := func(obj any) ([]string, error) {
				if p, ok := obj.(*corev1.Pod); ok {
					mu.Lock()
					indexed = append(indexed, p.Name)
					mu.Unlock()
				}
				return appIndex(obj)
			}
			lw := cache.NewFilteredListWatchFromClient(c.Client.CoreV1().RESTClient(),
				"pods", c.Namespace, func(o *metav1.ListOptions) {
					o.LabelSelector = cluster.OwnSelector
				})
			inf := cache.NewSharedIndexInformer(lw, &corev1.Pod{}, 0,
				cache.Indexers{byApp: record})
			deleted := make(chan any, 1)
			_, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
				DeleteFunc: func(obj any) { deleted <- obj },
			})
			if err != nil {
				t.Fatal(err)
			}
			infCtx, stop := context.WithCancel(ctx)
			var wg sync.WaitGroup
			wg.Go(func() { inf.RunWithContext(infCtx) })
			defer func() { stop(); wg.Wait() }()
			if !cache.WaitFor(ctx, "", inf.HasSyncedChecker()) {
				t.Fatal("the informer did not sync")
			}

			// The outage: the watch drops and its re-watch is held while
			// web-1 goes and the history is compacted.
			c.Server.HoldWatches()
			c.Server.DropWatches()
			if err := pods.Delete(ctx, "web-1", metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
			c.Server.CompactHistory()
			mu.Lock()
			indexed = nil
			mu.Unlock()
			c.Server.ReleaseWatches()

			var obj any
			select {
			case obj = <-deleted:
			case <-ctx.Done():
				t.Fatal("no OnDelete after the relist")
			}
			tomb, ok := obj.(cache.DeletedFinalStateUnknown)
			if !ok || tomb.Key != c.Namespace+"/web-1" {
				t.Fatalf("OnDelete got %#v, want a DeletedFinalStateUnknown for web-1", obj)
			}
			// Both ways the store runs the index functions before OnDelete.
			mu.Lock()
			sawWeb1 := slices.Contains(indexed, "web-1")
			t.Logf("after the relist the index function saw %q", indexed)
			mu.Unlock()
			if sawWeb1 == atomic {
				t.Errorf("after the relist the index function saw %q: "+
					"store.Delete(tomb) happened = %t, want %t",
					indexed, sawWeb1, !atomic)
			}
			if keys := inf.GetIndexer().ListKeys(); !slices.Equal(keys,
				[]string{c.Namespace + "/web-2"}) {
				t.Errorf("store keys = %v, want only web-2", keys)
			}
		})
	}
}

// TestEmptySetsRemoved pins step 3: the last key leaving a value
// removes the value (kubernetes/kubernetes#84959).
func TestEmptySetsRemoved(t *testing.T) {
	idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc,
		cache.Indexers{byImage: imageIndex})
	p := newPod("shop", "web-1", "web", "", "nginx:1.27", "envoy:1.31")
	if err := idx.Add(p); err != nil {
		t.Fatal(err)
	}
	if err := idx.Delete(p); err != nil {
		t.Fatal(err)
	}
	if v := idx.ListIndexFuncValues(byImage); len(v) != 0 {
		t.Fatalf("values after the last Delete = %v", v)
	}
}

// BenchmarkQuery compares an index lookup with a scan: List and a
// hand-written filter, and cache.ListAll with a label selector (what
// a lister's List(selector) does across all namespaces). Ten pods per
// app, so every variant returns 10 pods at every size.
//
//	go test -run '^$' -bench . ./04-indexer
func BenchmarkQuery(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 100_000} {
		idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc,
			cache.Indexers{byApp: appIndex})
		for i := range n {
			p := newPod("bench", fmt.Sprintf("pod-%d", i),
				fmt.Sprintf("app-%d", i/10), "")
			if err := idx.Add(p); err != nil {
				b.Fatal(err)
			}
		}
		sel := labels.SelectorFromSet(labels.Set{"app": "app-42"})

		b.Run(fmt.Sprintf("n=%d/ByIndex", n), func(b *testing.B) {
			for b.Loop() {
				objs, err := idx.ByIndex(byApp, "app-42")
				if err != nil || len(objs) != 10 {
					b.Fatalf("got %d, %v", len(objs), err)
				}
			}
		})
		b.Run(fmt.Sprintf("n=%d/ListFilter", n), func(b *testing.B) {
			for b.Loop() {
				var objs []any
				for _, o := range idx.List() {
					p, ok := o.(*corev1.Pod)
					if ok && p.Labels["app"] == "app-42" {
						objs = append(objs, o)
					}
				}
				if len(objs) != 10 {
					b.Fatalf("got %d", len(objs))
				}
			}
		})
		b.Run(fmt.Sprintf("n=%d/ListAll", n), func(b *testing.B) {
			for b.Loop() {
				var objs []any
				err := cache.ListAll(idx, sel, func(o any) {
					objs = append(objs, o)
				})
				if err != nil || len(objs) != 10 {
					b.Fatalf("got %d, %v", len(objs), err)
				}
			}
		})
	}
}
