package main

// Step 8, batches: since v0.35 a plain informer's loop pops what is
// queued in batches (InOrderInformersBatchProcess), and writes a whole
// batch to its store before it calls the handler for the first of it.
// The step holds the handler while changes queue, to make a batch on
// every run.

import (
	"context"
	"fmt"
	"io"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/features"
	"k8s.io/client-go/tools/cache"

	"github.com/informer-walkthrough/informer-walkthrough/internal/cluster"
	"github.com/informer-walkthrough/informer-walkthrough/internal/show"
	"github.com/informer-walkthrough/informer-walkthrough/internal/tap"
)

// batchesRunAhead holds a plain informer's handler while changes queue:
// its loop then pops them as one batch and writes the whole batch to
// the store before it calls the handler (InOrderInformersBatchProcess).
func batchesRunAhead(ctx context.Context, informers *sync.WaitGroup, out io.Writer, c *cluster.Cluster, lw cache.ListerWatcher) error {
	fmt.Fprintln(out, "\nStep 8. Batches: a handler can find the store ahead of its own event.")
	gates := features.FeatureGates()
	if !gates.Enabled(features.AtomicFIFO) || !gates.Enabled(features.UnlockWhileProcessingFIFO) {
		fmt.Fprintln(out, "  skipped: with AtomicFIFO or UnlockWhileProcessingFIFO off, the RealFIFO stays locked while a handler runs")
		return nil
	}
	rec, queued := tap.NewRecorder(ctx), show.NewLines(ctx)
	// The handler's first OnUpdate, once recorded, waits for the gate:
	// a plain informer calls it on the loop that pops the queue.
	gate := rec.Hold(1, func(e tap.Event) bool {
		call, ok := e.(tap.HandlerCall)
		return ok && call.Method == "OnUpdate"
	})
	// !+batch
	h := &tap.Handler{Rec: rec}
	store, ctrl := cache.NewInformerWithOptions(cache.InformerOptions{
		ListerWatcher: lw,
		ObjectType:    &corev1.ConfigMap{},
		Handler:       h,
		Transform:     queuedTap(queued), // reports each object queued
	})
	h.Store = store // each handler call also records what the store holds
	// !-batch
	informers.Go(func() { ctrl.RunWithContext(ctx) })
	defer gate.Open() // before run stops the informer, which waits for h
	if !cache.WaitFor(ctx, "", ctrl.HasSyncedChecker()) {
		return fmt.Errorf("configmap informer not synced: %w", context.Cause(ctx))
	}
	if err := show.Next(ctx, out, show.Block{Indent: "  ", From: rec.Calls(), N: 1}); err != nil {
		return err
	}
	cms := c.Client.CoreV1().ConfigMaps(c.Namespace)
	if _, err := cms.Patch(ctx, "web", types.MergePatchType, []byte(`{"data":{"mode":"v4"}}`), metav1.PatchOptions{}); err != nil {
		return err
	}
	if err := printCalls(ctx, out, rec, "patch  configmap/web"); err != nil {
		return err
	}
	queued.Drain() // web, as listed (twice: watch-list) and as patched
	fmt.Fprintln(out, "  the handler holds the informer's loop; meanwhile the reflector queues:")
	if _, err := cms.Create(ctx, configMap("api", "blue"), metav1.CreateOptions{}); err != nil {
		return err
	}
	if _, err := cms.Create(ctx, configMap("jobs", "red"), metav1.CreateOptions{}); err != nil {
		return err
	}
	if _, err := cms.Patch(ctx, "api", types.MergePatchType, []byte(`{"data":{"mode":"v2"}}`), metav1.PatchOptions{}); err != nil {
		return err
	}
	if err := show.Next(ctx, out, show.Block{Indent: "  ", From: queued, N: 3}); err != nil {
		return err
	}
	gate.Open()
	fmt.Fprintf(out, "  released, with InOrderInformersBatchProcess=%t:\n", gates.Enabled(features.InOrderInformersBatchProcess))
	return show.Next(ctx, out, show.Block{Indent: "  ", From: rec.Calls(), N: 3})
}
