// Chapter 05-informer: the informer, assembled.
//
// A reflector feeds a RealFIFO, and processDeltas turns each delta it
// pops into a Store write and a handler call: informers built three ways,
// taken apart, resynced, relisted after an outage, shared, and batched.
//
// Read alongside (client-go v0.37.2): tools/cache/controller.go,
// shared_informer.go, the_real_fifo.go, reflector.go. Each informer's
// handler is the course's tap.Handler (internal/tap): it records every
// call, and the steps await and print the calls. observe.go holds what
// else only shows the informers at work (printing).
package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/features"
	"k8s.io/client-go/tools/cache"

	"github.com/informer-walkthrough/informer-walkthrough/internal/cachecopy"
	"github.com/informer-walkthrough/informer-walkthrough/internal/cluster"
	"github.com/informer-walkthrough/informer-walkthrough/internal/show"
	"github.com/informer-walkthrough/informer-walkthrough/internal/tap"
)

func main() { cluster.Main("05-informer", run) }

// run is the chapter, one step after another, on the same ConfigMaps.
// Every informer of a step runs on informers, in the step's ctx.
func run(ctx context.Context, out io.Writer, c *cluster.Cluster) error {
	// One ListerWatcher for every informer: the chapter's ConfigMaps, by
	// label (a real namespace holds others, such as kube-root-ca.crt).
	lw := cache.NewFilteredListWatchFromClient(c.Client.CoreV1().RESTClient(), "configmaps", c.Namespace,
		func(o *metav1.ListOptions) { o.LabelSelector = cluster.OwnSelector })
	for _, step := range []func(context.Context, *sync.WaitGroup, io.Writer, *cluster.Cluster, cache.ListerWatcher) error{
		storeAndController, customIndex, transformTrims, insideTheInformer,
		resyncIsNotRelist, tombstoneAfterOutage, sharedHandlers, batchesRunAhead,
	} {
		// Cancel, then Wait: every RunWithContext has returned, and no
		// handler call outlives its step.
		stepCtx, stop := context.WithCancel(ctx)
		var informers sync.WaitGroup
		err := step(stepCtx, &informers, out, c, lw)
		stop()
		informers.Wait()
		// A step's awaits return early once ctx ends: say why it ended.
		if err := cmp.Or(err, context.Cause(ctx)); err != nil {
			return err
		}
	}
	return nil
}

// storeAndController is NewInformer, as most tutorials show it: a Store
// (the cache), a Controller (the loop that fills it) and a handler.
func storeAndController(ctx context.Context, informers *sync.WaitGroup, out io.Writer, c *cluster.Cluster, lw cache.ListerWatcher) error {
	fmt.Fprintln(out, "Step 1. NewInformer: a Store, a Controller and a ResourceEventHandler.")
	cms := c.Client.CoreV1().ConfigMaps(c.Namespace)
	web, err := cms.Create(ctx, configMap("web", "blue"), metav1.CreateOptions{})
	if err != nil {
		return err
	}
	db, err := cms.Create(ctx, configMap("db", "red"), metav1.CreateOptions{})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "  before Run: created %s and %s\n", show.Describe(web), show.Describe(db))

	// !+newinformer
	// NewInformer is deprecated (already in v0.36), but most code in the
	// wild still calls it. Its handler runs on the informer's goroutine:
	// here the course's, which records each call for the step to print.
	h := tap.Handler{Rec: tap.NewRecorder(ctx)}
	store, ctrl := cache.NewInformer(lw, &corev1.ConfigMap{}, 0, h)
	informers.Go(func() { ctrl.RunWithContext(ctx) }) // until ctx ends

	// HasSyncedChecker is done once the initial list has been handed to
	// the handler, its OnAdd calls included. WaitFor waits on a channel
	// (WaitForCacheSync polls); it is false only if ctx ended first.
	if !cache.WaitFor(ctx, "", ctrl.HasSyncedChecker()) {
		return fmt.Errorf("configmap informer not synced: %w", context.Cause(ctx))
	}
	// !-newinformer
	if err := show.Sorted(ctx, out, show.Block{Heading: "  initial list (order not defined, sorted):", Indent: "  ", From: h.Rec.Calls(), N: len(store.ListKeys())}); err != nil {
		return err
	}
	fmt.Fprintf(out, "  HasSynced() %t, store keys %v\n", ctrl.HasSynced(), slices.Sorted(slices.Values(store.ListKeys())))
	fmt.Fprintln(out, "  live changes, each awaited:") // so the output keeps their order
	if _, err := cms.Create(ctx, configMap("cache", "blue"), metav1.CreateOptions{}); err != nil {
		return err
	}
	if err := printCalls(ctx, out, h.Rec, "create configmap/cache"); err != nil {
		return err
	}
	if _, err := cms.Patch(ctx, "web", types.MergePatchType, []byte(`{"data":{"mode":"v2"}}`), metav1.PatchOptions{}); err != nil {
		return err
	}
	if err := printCalls(ctx, out, h.Rec, "patch  configmap/web"); err != nil {
		return err
	}
	if err := cms.Delete(ctx, "db", metav1.DeleteOptions{}); err != nil {
		return err
	}
	if err := printCalls(ctx, out, h.Rec, "delete configmap/db"); err != nil {
		return err
	}
	fmt.Fprintf(out, "  store keys %v\n", slices.Sorted(slices.Values(store.ListKeys())))
	return nil
}

// customIndex is NewIndexerInformer: the same over an Indexer with a
// custom index, kept current as objects change; ByIndex answers from memory.
func customIndex(ctx context.Context, informers *sync.WaitGroup, out io.Writer, c *cluster.Cluster, lw cache.ListerWatcher) error {
	fmt.Fprintf(out, "\n%s\n", `Step 2. NewIndexerInformer: an Indexer with a custom "team" index.`)
	// An IndexFunc must not fail (the store panics): no label, no value.
	var byTeam cache.IndexFunc = func(obj any) ([]string, error) {
		if m, err := meta.Accessor(obj); err == nil && m.GetLabels()["team"] != "" {
			return []string{m.GetLabels()["team"]}, nil
		}
		return nil, nil
	}
	h := tap.Handler{Rec: tap.NewRecorder(ctx)}
	indexer, ctrl := cache.NewIndexerInformer(lw, &corev1.ConfigMap{}, 0, h, cache.Indexers{"team": byTeam})
	informers.Go(func() { ctrl.RunWithContext(ctx) })
	if !cache.WaitFor(ctx, "", ctrl.HasSyncedChecker()) {
		return fmt.Errorf("configmap informer not synced: %w", context.Cause(ctx))
	}
	if err := printInitialList(ctx, out, h.Rec, len(indexer.ListKeys())); err != nil {
		return err
	}
	blue, err := indexer.ByIndex("team", "blue")
	if err != nil {
		return err
	}
	red, err := indexer.ByIndex("team", "red")
	if err != nil {
		return err
	}
	printTeams(out, blue, red)
	cms := c.Client.CoreV1().ConfigMaps(c.Namespace)
	if _, err := cms.Patch(ctx, "cache", types.MergePatchType, []byte(`{"metadata":{"labels":{"team":"red"}}}`), metav1.PatchOptions{}); err != nil {
		return err
	}
	if err := printCalls(ctx, out, h.Rec, "patch  configmap/cache team=red"); err != nil {
		return err
	}
	if blue, err = indexer.ByIndex("team", "blue"); err != nil {
		return err
	}
	if red, err = indexer.ByIndex("team", "red"); err != nil {
		return err
	}
	printTeams(out, blue, red)
	return nil
}

const lastApplied = "kubectl.kubernetes.io/last-applied-configuration" // kubectl's copy of the object

// transformTrims is NewInformerWithOptions, which the deprecated
// constructors call, with a Transform that drops what is never read.
func transformTrims(ctx context.Context, informers *sync.WaitGroup, out io.Writer, c *cluster.Cluster, lw cache.ListerWatcher) error {
	fmt.Fprintln(out, "\nStep 3. NewInformerWithOptions with a Transform that trims objects.")
	legacy := configMap("legacy", "red")
	legacy.Annotations = map[string]string{lastApplied: `{"apiVersion":"v1","data":{"mode":"v1"},"kind":"ConfigMap","metadata":{"annotations":{},"name":"legacy"}}`}
	cms := c.Client.CoreV1().ConfigMaps(c.Namespace)
	created, err := cms.Create(ctx, legacy, metav1.CreateOptions{})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "  created %s with annotation %s\n", show.Describe(created), lastApplied)
	// A Transform may change the object in place but must be idempotent:
	// with watch-list, initial objects pass through it twice.
	var trim cache.TransformFunc = func(obj any) (any, error) {
		if m, err := meta.Accessor(obj); err == nil {
			m.SetManagedFields(nil)
			delete(m.GetAnnotations(), lastApplied)
		}
		return obj, nil
	}
	var calls atomic.Int64
	h := tap.Handler{Rec: tap.NewRecorder(ctx)}
	store, ctrl := cache.NewInformerWithOptions(cache.InformerOptions{
		ListerWatcher: lw,
		ObjectType:    &corev1.ConfigMap{},
		Handler:       h,
		Transform:     counted(&calls, trim), // counts its calls
	})
	informers.Go(func() { ctrl.RunWithContext(ctx) })
	if !cache.WaitFor(ctx, "", ctrl.HasSyncedChecker()) {
		return fmt.Errorf("configmap informer not synced: %w", context.Cause(ctx))
	}
	if err := printInitialList(ctx, out, h.Rec, len(store.ListKeys())); err != nil {
		return err
	}
	fmt.Fprintf(out, "  the Transform ran %d times for 3 objects (watch-list buffer, then RealFIFO)\n", calls.Load())
	// The server keeps the annotation and managedFields; the cache does not.
	onServer, err := cms.Get(ctx, "legacy", metav1.GetOptions{})
	if err != nil {
		return err
	}
	cached, exists, err := store.GetByKey(c.Namespace + "/legacy")
	if err != nil {
		return err
	}
	cm, ok := cached.(*corev1.ConfigMap)
	if !exists || !ok {
		return errors.New("configmap/legacy is not in the cache")
	}
	fmt.Fprintf(out, "  server (GET): annotations %v\n", slices.Sorted(maps.Keys(onServer.Annotations)))
	fmt.Fprintf(out, "  cache:        annotations %v, managedFields %d\n", slices.Sorted(maps.Keys(cm.Annotations)), len(cm.ManagedFields))
	return nil
}

// insideTheInformer takes an informer apart in memory, with the copies
// of newQueueFIFO's options and processDeltas that chapter 02 teaches.
func insideTheInformer(ctx context.Context, _ *sync.WaitGroup, out io.Writer, _ *cluster.Cluster, _ cache.ListerWatcher) error {
	fmt.Fprintln(out, "\nStep 4. Inside: a RealFIFO, and processDeltas turning deltas into handler calls.")
	gates := features.FeatureGates()
	fmt.Fprintf(out, "  InOrderInformers=%t: newQueueFIFO builds a RealFIFO, not a DeltaFIFO\n", gates.Enabled(features.InOrderInformers))
	if !gates.Enabled(features.AtomicFIFO) { // then one call may queue many deltas, or none
		fmt.Fprintln(out, "  skipped: with AtomicFIFO off, see 02-deltafifo's step 4")
		return nil
	}
	fmt.Fprintln(out, "  AtomicFIFO=true: a relist or a resync is one delta, not one per object")
	// !+pop
	store := cache.NewStore(cache.DeletionHandlingMetaNamespaceKeyFunc)
	fifo := cache.NewRealFIFOWithOptions(cachecopy.QueueOptions(&corev1.ConfigMap{}, cache.MetaNamespaceKeyFunc, store))
	h := tap.Handler{Rec: tap.NewRecorder(ctx)}
	// pop hands the one delta a call queued to processDeltas.
	pop := func(call string, queued error) error {
		if queued != nil {
			return queued
		}
		var popped cache.DeltaType
		_, err := fifo.Pop(func(obj any, isInInitialList bool) error {
			deltas, ok := obj.(cache.Deltas)
			if !ok {
				return fmt.Errorf("popped %T, not cache.Deltas", obj)
			}
			popped = deltas.Newest().Type
			return cachecopy.ProcessDeltas(h, store, deltas, isInInitialList, cache.DeletionHandlingMetaNamespaceKeyFunc)
		})
		// The handler ran on this goroutine: its calls are all recorded.
		printRow(out, call, popped, tap.HandlerCalls(h.Rec.Drain()), store)
		return err
	}
	// !-pop
	// A reflector's calls over an informer's life: a list, three watch
	// events, a bookmark, a resync, a relist after c was deleted unseen.
	printRowHeading(out)
	return errors.Join(
		pop(`Replace([a b], "11")`, fifo.Replace([]any{demo("a", "10"), demo("b", "11")}, "11")),
		pop("Add(c)", fifo.Add(demo("c", "12"))),
		pop("Update(a)", fifo.Update(demo("a", "13"))),
		pop("Delete(b)", fifo.Delete(demo("b", "14"))),
		pop(`Bookmark("15")`, fifo.Bookmark("15")),
		pop("Resync()", fifo.Resync()),
		pop(`Replace([a], "16")`, fifo.Replace([]any{demo("a", "13")}, "16")),
	)
}

// resyncIsNotRelist gives an informer a ResyncPeriod: it replays its cache
// as OnUpdate(obj, obj), the very same object, and asks the server nothing.
func resyncIsNotRelist(ctx context.Context, informers *sync.WaitGroup, out io.Writer, c *cluster.Cluster, lw cache.ListerWatcher) error {
	fmt.Fprintln(out, "\nStep 5. Resync is not relist: ResyncPeriod=100ms replays the cache.")
	h := tap.Handler{Rec: tap.NewRecorder(ctx)}
	store, ctrl := cache.NewInformerWithOptions(cache.InformerOptions{
		ListerWatcher: lw,
		ObjectType:    &corev1.ConfigMap{},
		Handler:       h,
		ResyncPeriod:  100 * time.Millisecond, // short: no option takes a fake clock
	})
	c.ResetRequests()
	informers.Go(func() { ctrl.RunWithContext(ctx) })
	if !cache.WaitFor(ctx, "", ctrl.HasSyncedChecker()) {
		return fmt.Errorf("configmap informer not synced: %w", context.Cause(ctx))
	}
	if err := printInitialList(ctx, out, h.Rec, len(store.ListKeys())); err != nil {
		return err
	}
	before := c.Requests()
	show.Under(out, fmt.Sprintf("  requests so far: %d", len(before)), informerRequests(before))
	// One SyncAll: an OnUpdate per cached object, in map order.
	if err := show.Sorted(ctx, out, show.Block{Heading: "  first resync (order not defined, sorted):", Indent: "  ", From: h.Rec.Calls(), N: len(store.ListKeys())}); err != nil {
		return err
	}
	fmt.Fprintf(out, "  requests sent for the resync: %d\n", len(c.Requests())-len(before))
	return nil
}

// tombstoneAfterOutage stages an outage from the client, alike on any
// cluster: a delete never seen, a 410, a relist. For the object the list
// lacks, OnDelete gets a DeletedFinalStateUnknown.
func tombstoneAfterOutage(ctx context.Context, informers *sync.WaitGroup, out io.Writer, c *cluster.Cluster, lw cache.ListerWatcher) error {
	fmt.Fprintln(out, "\nStep 6. After an outage, OnDelete gets a DeletedFinalStateUnknown tombstone.")
	h := tap.Handler{Rec: tap.NewRecorder(ctx)}
	store, ctrl := cache.NewInformerWithOptions(cache.InformerOptions{
		ListerWatcher: lw,
		ObjectType:    &corev1.ConfigMap{},
		Handler:       h,
	})
	c.ResetRequests()
	informers.Go(func() { ctrl.RunWithContext(ctx) })
	if !cache.WaitFor(ctx, "", ctrl.HasSyncedChecker()) {
		return fmt.Errorf("configmap informer not synced: %w", context.Cause(ctx))
	}
	if err := printInitialList(ctx, out, h.Rec, len(store.ListKeys())); err != nil {
		return err
	}
	// One event first: a watch that ends within a second having delivered
	// nothing is a VeryShortWatchError, and a relist without a 410.
	cms := c.Client.CoreV1().ConfigMaps(c.Namespace)
	if _, err := cms.Patch(ctx, "web", types.MergePatchType, []byte(`{"data":{"mode":"v3"}}`), metav1.PatchOptions{}); err != nil {
		return err
	}
	if err := printCalls(ctx, out, h.Rec, "patch  configmap/web"); err != nil {
		return err
	}
	// !+outage
	// The client holds its watch streams' bytes: the delete's event waits
	// in its transport, and ending the stream drops it. The reflector
	// re-watches from the last resourceVersion it saw; the client answers
	// with the 410 a server gives once that has left its history.
	faults := c.Faults()
	faults.HoldWatches()
	defer faults.ReleaseWatches() // on errors; released below
	faults.AnswerWatch(isRewatch, apierrors.NewResourceExpired("too old resource version"))
	if err := cms.Delete(ctx, "legacy", metav1.DeleteOptions{}); err != nil {
		return err
	}
	ended := faults.EndWatches()
	faults.ReleaseWatches()
	// !-outage
	fmt.Fprintf(out, "  outage, made by this client: watch held; configmap/legacy deleted; %d watch ended, the event never read\n", ended)
	// After its backoff (0.8-1.6 s) the reflector relists: one ReplacedAll,
	// tombstones first, then the survivors in map order.
	fmt.Fprintln(out, "  the client answers the re-watch with 410 Expired; after its backoff the reflector relists")
	if err := show.Next(ctx, out, show.Block{Indent: "  ", From: h.Rec.Calls(), N: 1}); err != nil {
		return err
	}
	if err := show.Sorted(ctx, out, show.Block{Indent: "  ", From: h.Rec.Calls(), N: 2}); err != nil {
		return err
	}
	show.Under(out, "  the informer's requests:", informerRequests(c.Requests()))
	return nil
}

// sharedHandlers runs a SharedInformer: one cache and one watch for many
// handlers, each with a registration whose HasSynced can lag the informer's.
func sharedHandlers(ctx context.Context, informers *sync.WaitGroup, out io.Writer, c *cluster.Cluster, lw cache.ListerWatcher) error {
	fmt.Fprintln(out, "\nStep 7. SharedInformer: one watch, many handlers, one registration each.")
	informer := cache.NewSharedInformer(lw, &corev1.ConfigMap{}, 0)
	rec := tap.NewRecorder(ctx)
	// !+registrations
	// "slow" is held inside its first OnAdd until the step opens the
	// gate: a handler slow to catch up.
	gate := rec.Hold(1, func(e tap.Event) bool {
		call, ok := e.(tap.HandlerCall)
		return ok && call.Handler == "slow" && call.Method == "OnAdd"
	})
	fast, err := informer.AddEventHandler(tap.Handler{Rec: rec, Name: "fast"})
	if err != nil {
		return err
	}
	slow, err := informer.AddEventHandler(tap.Handler{Rec: rec, Name: "slow"})
	if err != nil {
		return err
	}
	// !-registrations
	fmt.Fprintln(out, `  handlers "fast" and "slow" added before Run; slow's first OnAdd waits for a gate`)
	c.ResetRequests()
	informers.Go(func() { informer.RunWithContext(ctx) })
	defer gate.Open() // before run stops the informer, which waits for slow
	// The informer is synced once its cache is, whatever its handlers do.
	if !cache.WaitFor(ctx, "", informer.HasSyncedChecker(), fast.HasSyncedChecker()) {
		return fmt.Errorf("informer or handler fast not synced: %w", context.Cause(ctx))
	}
	fmt.Fprintf(out, "  informer.HasSynced() %t\n", informer.HasSynced())
	fmt.Fprintf(out, "  fast: registration.HasSynced() %t\n", fast.HasSynced())
	fmt.Fprintf(out, "  slow: registration.HasSynced() %t (still inside its first OnAdd)\n", slow.HasSynced())
	gate.Open()
	if !cache.WaitFor(ctx, "", slow.HasSyncedChecker()) {
		return fmt.Errorf("handler slow not synced: %w", context.Cause(ctx))
	}
	fmt.Fprintf(out, "  gate opened: slow: registration.HasSynced() %t\n", slow.HasSynced())
	if err := show.Sorted(ctx, out, show.Block{Indent: "  ", From: rec.Calls(), N: 4}); err != nil { // no order between handlers
		return err
	}
	// A late handler is fed from the cache: no request is sent.
	late, err := informer.AddEventHandler(tap.Handler{Rec: rec, Name: "late"})
	if err != nil {
		return err
	}
	if !cache.WaitFor(ctx, "", late.HasSyncedChecker()) {
		return fmt.Errorf("handler late not synced: %w", context.Cause(ctx))
	}
	if err := show.Sorted(ctx, out, show.Block{Heading: `  handler "late" added after sync: synthetic adds from the cache`, Indent: "  ", From: rec.Calls(), N: 2}); err != nil {
		return err
	}
	// A change reaches every handler, each on its own goroutine.
	cms := c.Client.CoreV1().ConfigMaps(c.Namespace)
	if err := cms.Delete(ctx, "cache", metav1.DeleteOptions{}); err != nil {
		return err
	}
	if err := show.Sorted(ctx, out, show.Block{Heading: "  delete configmap/cache:", Indent: "  ", From: rec.Calls(), N: 3}); err != nil {
		return err
	}
	fmt.Fprintf(out, "  list and watch requests for three handlers: %d\n", len(listsAndWatches(c.Requests())))
	return nil
}

// configMap is one of the chapter's ConfigMaps, to create on the cluster.
func configMap(name, team string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: cluster.Labels("team", team)},
		Data:       map[string]string{"mode": "v1"},
	}
}

// demo is an in-memory ConfigMap for step 4.
func demo(name, rv string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: name, ResourceVersion: rv}}
}
