package cachecopy

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/informer-walkthrough/informer-walkthrough/check/leakcheck"
	"github.com/informer-walkthrough/informer-walkthrough/check/scripted"
)

// TestProcessDeltasMatchesInformer pins the copy: the same reflector
// calls, made once by a real informer (through a scripted ListerWatcher)
// and once by hand on a RealFIFO built with QueueOptions and popped
// through ProcessDeltas, give the same handler calls. The relist after a
// 410 costs the reflector's backoff (0.8-1.6 s). 02-deltafifo pins its
// own calls (a resync and a bookmark among them) the same way.
func TestProcessDeltasMatchesInformer(t *testing.T) {
	if leakcheck.RunApart(t) {
		return // it waits on a relist's backoff, apart from the other tests
	}
	leakcheck.Verify(t)
	if !QueueOptions(nil, nil, nil).AtomicEvents {
		t.Skip("AtomicFIFO is off: a relist is not one delta")
	}
	ctx, cancel := context.WithCancel(t.Context())
	lw := scripted.New(configMaps("11", demo("a", "10"), demo("b", "11")))
	calls := make(chan string, 100)
	_, ctrl := cache.NewInformerWithOptions(cache.InformerOptions{
		ListerWatcher: lw,
		ObjectType:    &corev1.ConfigMap{},
		Handler:       recorder(func(s string) { calls <- s }),
	})
	var wg sync.WaitGroup
	wg.Go(func() { ctrl.RunWithContext(ctx) })
	defer wg.Wait()
	defer cancel()
	if !cache.WaitFor(ctx, "", ctrl.HasSyncedChecker()) {
		t.Fatal("the informer did not sync")
	}
	want := await(t, calls, 2)
	slices.Sort(want) // a list's objects in the store's map order

	// Three watch events, then a 410 that makes the reflector relist;
	// by then b is gone from the list (deleted unseen), c is new.
	w := lw.Next(t)
	w.Add(demo("c", "12"))
	w.Modify(demo("a", "13"))
	w.Delete(demo("b", "14"))
	want = append(want, await(t, calls, 3)...)
	lw.SetList(configMaps("16", demo("a", "13"), demo("d", "15")))
	gone := apierrors.NewResourceExpired("too old resource version")
	w.Error(&gone.ErrStatus)
	want = append(want, await(t, calls, 3)...)
	lw.Next(t) // the relist ends with a new watch

	// The same calls by hand. Each queues one delta, popped at once.
	store := cache.NewStore(cache.DeletionHandlingMetaNamespaceKeyFunc)
	fifo := cache.NewRealFIFOWithOptions(QueueOptions(&corev1.ConfigMap{}, cache.MetaNamespaceKeyFunc, store))
	var got []string
	h := recorder(func(s string) { got = append(got, s) })
	for _, call := range []func() error{
		func() error { return fifo.Replace([]any{demo("a", "10"), demo("b", "11")}, "11") },
		func() error { return fifo.Add(demo("c", "12")) },
		func() error { return fifo.Update(demo("a", "13")) },
		func() error { return fifo.Delete(demo("b", "14")) },
		func() error { return fifo.Replace([]any{demo("a", "13"), demo("d", "15")}, "16") },
	} {
		if err := call(); err != nil {
			t.Fatal(err)
		}
		if _, err := fifo.Pop(func(obj any, initial bool) error {
			return ProcessDeltas(h, store, obj.(cache.Deltas), initial, cache.DeletionHandlingMetaNamespaceKeyFunc)
		}); err != nil {
			t.Fatal(err)
		}
	}
	slices.Sort(got[:2])
	if !slices.Equal(got, want) {
		t.Errorf("by hand:\n%q\ninformer:\n%q", got, want)
	}
}

// TestQueueOptions pins what newQueueFIFO builds with the default gates
// of v0.37.2.
func TestQueueOptions(t *testing.T) {
	o := QueueOptions(&corev1.ConfigMap{}, cache.MetaNamespaceKeyFunc, cache.NewStore(cache.MetaNamespaceKeyFunc))
	if !o.AtomicEvents || !o.UnlockWhileProcessing ||
		!o.EmitDeltaTypeBookmark || o.KnownObjects != nil {
		t.Errorf("options = %+v, want atomic, unlocked, bookmarks, no KnownObjects"+
			" (is a KUBE_FEATURE_ variable set?)", o)
	}
	if o.Name != "RealFIFO *v1.ConfigMap" {
		t.Errorf("Name = %q, want newQueueFIFO's %q", o.Name, "RealFIFO *v1.ConfigMap")
	}
}

// recorder is a handler that renders each call as a line.
type recorder func(string)

func (r recorder) OnAdd(obj any, isInInitialList bool) {
	r(fmt.Sprintf("OnAdd %s isInInitialList=%t", describe(obj), isInInitialList))
}

func (r recorder) OnUpdate(oldObj, newObj any) {
	r(fmt.Sprintf("OnUpdate %s -> %s", describe(oldObj), describe(newObj)))
}

func (r recorder) OnDelete(obj any) {
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		r(fmt.Sprintf("OnDelete DeletedFinalStateUnknown %s %s", tomb.Key, describe(tomb.Obj)))
		return
	}
	r("OnDelete " + describe(obj))
}

func describe(obj any) string {
	if cm, ok := obj.(*corev1.ConfigMap); ok {
		return cm.Name + "@" + cm.ResourceVersion
	}
	return fmt.Sprintf("%T", obj)
}

func demo(name, rv string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: name, ResourceVersion: rv}}
}

// await returns the informer's next n handler calls, or fails t.
func await(t *testing.T, calls <-chan string, n int) []string {
	t.Helper()
	var got []string
	deadline := time.After(10 * time.Second) // to fail on, not to wait
	for len(got) < n {
		select {
		case s := <-calls:
			got = append(got, s)
		case <-deadline:
			t.Fatalf("got %q, still waiting for %d more handler calls", got, n-len(got))
		}
	}
	return got
}

// configMaps is a ConfigMap list at resourceVersion rv.
func configMaps(rv string, objs ...*corev1.ConfigMap) *corev1.ConfigMapList {
	list := &corev1.ConfigMapList{ListMeta: metav1.ListMeta{ResourceVersion: rv}}
	for _, o := range objs {
		list.Items = append(list.Items, *o)
	}
	return list
}
