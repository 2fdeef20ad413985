package main

// Step 4, the informer taken apart: the queue an informer builds, the
// calls a reflector makes on it, and processDelta, client-go's
// processDeltas written out. It runs in memory, apart from the cluster
// and the other steps, and the tests and exercises use processDelta too.

import (
	"context"
	"fmt"
	"io"

	"k8s.io/client-go/features"
	"k8s.io/client-go/tools/cache"

	"github.com/informer-walkthrough/informer-walkthrough/internal/cluster"
	"github.com/informer-walkthrough/informer-walkthrough/internal/show"
)

// insideTheInformer builds an informer's queue, makes a reflector's calls
// and pops each delta into processDelta, below.
func insideTheInformer(ctx context.Context, out io.Writer, _ *cluster.Cluster, _ cache.ListerWatcher) error {
	fmt.Fprintln(out, "Step 4. Inside: a RealFIFO, and processDeltas turning deltas into handler calls.")
	// newQueueFIFO (controller.go) picks the queue by the feature gates.
	gates := features.FeatureGates()
	fmt.Fprintf(out, "  InOrderInformers=%t: newQueueFIFO builds a RealFIFO, not a DeltaFIFO\n", gates.Enabled(features.InOrderInformers))
	if gates.Enabled(features.AtomicFIFO) {
		fmt.Fprintln(out, "  AtomicFIFO=true: a relist or a resync is one delta, not one per object")
	} else {
		fmt.Fprintln(out, "  AtomicFIFO=false: a relist or a resync is one delta per object (the table below still shows the default RealFIFO)")
	}

	// The options newQueueFIFO passes with the default gates.
	fifo := cache.NewRealFIFOWithOptions(cache.RealFIFOOptions{
		KeyFunction:           cache.MetaNamespaceKeyFunc,
		AtomicEvents:          true,
		UnlockWhileProcessing: true,
		EmitDeltaTypeBookmark: true,
	})
	store := cache.NewStore(cache.DeletionHandlingMetaNamespaceKeyFunc)
	h := handler{lines: show.NewLines(ctx)}

	// A reflector's calls over an informer's life: a list, three watch
	// events, a bookmark, a resync, a relist after c was deleted unseen.
	script := []struct {
		call string
		do   func() error
	}{
		{`Replace([a b], "11")`, func() error { return fifo.Replace([]any{demo("a", "10"), demo("b", "11")}, "11") }},
		{"Add(c)", func() error { return fifo.Add(demo("c", "12")) }},
		{"Update(a)", func() error { return fifo.Update(demo("a", "13")) }},
		{"Delete(b)", func() error { return fifo.Delete(demo("b", "14")) }},
		{`Bookmark("15")`, func() error { return fifo.Bookmark("15") }},
		{"Resync()", fifo.Resync},
		{`Replace([a], "16")`, func() error { return fifo.Replace([]any{demo("a", "13")}, "16") }},
	}
	fmt.Fprintf(out, "  %-20s %-12s  %s\n", "reflector calls", "delta popped", "handler calls made by processDeltas")
	for _, step := range script {
		if err := step.do(); err != nil {
			return err
		}
		// !+pop
		// Each call queues one delta: Pop never waits.
		var popped cache.DeltaType
		_, err := fifo.Pop(func(obj any, isInInitialList bool) error {
			deltas, ok := obj.(cache.Deltas)
			if !ok || len(deltas) != 1 {
				return fmt.Errorf("popped %T, want one delta", obj)
			}
			popped = deltas[0].Type
			return processDelta(deltas[0], store, h, isInInitialList)
		})
		if err != nil {
			return err
		}
		// !-pop
		calls := h.lines.Drain() // the handler ran on this goroutine
		if popped == cache.Bookmark {
			calls = []string{"(none) store.LastStoreSyncResourceVersion()=" + store.LastStoreSyncResourceVersion()}
		}
		printRow(out, step.call, popped, calls)
	}
	return nil
}

// processDelta is processDeltas (controller.go) written out for one
// delta, with one change: where client-go walks a map (SyncAll, the
// vanished keys of ReplacedAll), this sorts, so the output is stable.
func processDelta(d cache.Delta, store cache.Store, h cache.ResourceEventHandler, isInInitialList bool) error {
	switch d.Type {
	case cache.ReplacedAll:
		// A relist. Keys the new list lacks were deleted while nobody
		// watched: the handler gets a tombstone with the last state known.
		// The store is replaced before any handler call.
		info, ok := d.Object.(cache.ReplacedAllInfo)
		if !ok {
			return fmt.Errorf("ReplacedAll carries %T", d.Object)
		}
		listed := map[string]bool{}
		for _, obj := range info.Objects {
			key, err := cache.MetaNamespaceKeyFunc(obj)
			if err != nil {
				return err
			}
			listed[key] = true
		}
		var gone []cache.DeletedFinalStateUnknown
		for _, key := range sortedKeys(store) {
			if !listed[key] {
				last, _, _ := store.GetByKey(key)
				gone = append(gone, cache.DeletedFinalStateUnknown{Key: key, Obj: last})
			}
		}
		old := make([]any, len(info.Objects))
		for i, obj := range info.Objects {
			old[i], _, _ = store.Get(obj)
		}
		if err := store.Replace(info.Objects, info.ResourceVersion); err != nil {
			return err
		}
		for _, tomb := range gone {
			h.OnDelete(tomb)
		}
		for i, obj := range info.Objects {
			if old[i] != nil {
				h.OnUpdate(old[i], obj)
			} else {
				h.OnAdd(obj, isInInitialList)
			}
		}
	case cache.SyncAll:
		// A resync: every cached object, as old and new at once.
		for _, key := range sortedKeys(store) {
			obj, _, _ := store.GetByKey(key)
			h.OnUpdate(obj, obj)
		}
	case cache.Sync, cache.Replaced, cache.Added, cache.Updated:
		// Whether this is an add or an update is decided by the store,
		// not by the watch event's type.
		if old, exists, err := store.Get(d.Object); err == nil && exists {
			if err := store.Update(d.Object); err != nil {
				return err
			}
			h.OnUpdate(old, d.Object)
		} else {
			if err := store.Add(d.Object); err != nil {
				return err
			}
			h.OnAdd(d.Object, isInInitialList)
		}
	case cache.Deleted:
		if err := store.Delete(d.Object); err != nil {
			return err
		}
		h.OnDelete(d.Object)
	case cache.Bookmark:
		// No handler call: the store only learns the resourceVersion.
		info, ok := d.Object.(cache.BookmarkInfo)
		if !ok {
			return fmt.Errorf("Bookmark carries %T", d.Object)
		}
		store.Bookmark(info.ResourceVersion)
	}
	return nil
}
