// Chapter 05-informer: the informer, assembled.
//
// An informer is chapters 01-04 put together: a ListerWatcher feeds a
// reflector, the reflector feeds a RealFIFO (in v0.37, not a DeltaFIFO),
// and processDeltas turns each delta it pops into a Store write and a
// handler call. The chapter runs NewInformer, NewIndexerInformer and
// NewInformerWithOptions, looks inside, shows that a resync is not a
// relist, meets the DeletedFinalStateUnknown tombstone an outage leaves,
// and ends with a SharedInformer whose handlers each sync on their own.
//
// Read alongside (client-go v0.37.2): tools/cache/controller.go,
// tools/cache/shared_informer.go, tools/cache/the_real_fifo.go,
// tools/cache/reflector.go.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"path"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/features"
	"k8s.io/client-go/tools/cache"

	"github.com/informer-walkthrough/informer-walkthrough/internal/apiserver"
	"github.com/informer-walkthrough/informer-walkthrough/internal/cluster"
	"github.com/informer-walkthrough/informer-walkthrough/internal/runner"
)

func main() { cluster.Main("05-informer", run) }

// run is the chapter: seven steps, each printing a short heading. The
// ConfigMaps it creates carry on from one step to the next.
func run(ctx context.Context, out io.Writer, c *cluster.Cluster) error {
	// One ListerWatcher serves every informer: the ConfigMaps in the
	// chapter's namespace that carry the course's label (a real namespace
	// holds others, such as kube-root-ca.crt). This is the form the
	// tutorials show, with a label selector added.
	lw := cache.NewFilteredListWatchFromClient(
		c.Client.CoreV1().RESTClient(), "configmaps", c.Namespace,
		func(o *metav1.ListOptions) {
			o.LabelSelector = cluster.OwnSelector
		})
	steps := []func(context.Context, io.Writer, *cluster.Cluster,
		cache.ListerWatcher) error{
		step1, step2, step3, step4, step5, step6, step7,
	}
	for i, step := range steps {
		if i > 0 {
			fmt.Fprintln(out)
		}
		if err := step(ctx, out, c, lw); err != nil {
			return err
		}
	}
	return nil
}

// Step 1. NewInformer, the constructor most tutorials show. It returns a
// Store (the cache) and a Controller (the loop that fills it) and calls
// one ResourceEventHandler for every change it applies.
func step1(ctx context.Context, out io.Writer, c *cluster.Cluster,
	lw cache.ListerWatcher) error {
	fmt.Fprintln(out, "Step 1. NewInformer: a Store, a Controller and "+
		"a ResourceEventHandler.")
	cms := c.Client.CoreV1().ConfigMaps(c.Namespace)
	web, err := cms.Create(ctx, configMap("web", "blue"), create)
	if err != nil {
		return fmt.Errorf("create configmap/web: %w", err)
	}
	db, err := cms.Create(ctx, configMap("db", "red"), create)
	if err != nil {
		return fmt.Errorf("create configmap/db: %w", err)
	}
	fmt.Fprintf(out, "  before Run: created %s and %s\n",
		show(web), show(db))

	// NewInformer is deprecated in v0.37 but is in most code in the
	// wild. Its handler runs on the informer's goroutine: it sends lines
	// to this goroutine, which alone writes to out.
	s := newSession(ctx)
	defer s.stop()
	store, ctrl := cache.NewInformer(lw, &corev1.ConfigMap{}, 0,
		s.handler(""))
	s.start(ctrl.RunWithContext)

	// HasSynced turns true once the initial list has been handed to the
	// handler, so its OnAdd calls (isInInitialList=true) are done. They
	// come from one ReplacedAll delta whose order is not defined: sorted.
	if err := s.synced(ctrl.HasSyncedChecker()); err != nil {
		return err
	}
	initial, err := s.next(2)
	if err != nil {
		return err
	}
	sort.Strings(initial)
	fmt.Fprintln(out, "  initial list (order not defined, sorted):")
	printLines(out, initial)
	fmt.Fprintf(out, "  HasSynced() %t, store keys %v\n",
		ctrl.HasSynced(), sortedKeys(store))

	// Live changes, each awaited before the next so the output is in
	// the order the changes were made.
	fmt.Fprintln(out, "  live changes, each awaited:")
	if err := s.expect(out, "create configmap/cache", 1, func() error {
		_, err := cms.Create(ctx, configMap("cache", "blue"), create)
		return err
	}); err != nil {
		return err
	}
	if err := s.expect(out, "patch  configmap/web", 1, func() error {
		return patch(ctx, c, "web", `{"data":{"mode":"v2"}}`)
	}); err != nil {
		return err
	}
	if err := s.expect(out, "delete configmap/db", 1, func() error {
		return cms.Delete(ctx, "db", metav1.DeleteOptions{})
	}); err != nil {
		return err
	}
	fmt.Fprintf(out, "  store keys %v\n", sortedKeys(store))
	return nil
}

// Step 2. NewIndexerInformer: the same informer over an Indexer with a
// custom index. The informer keeps the index current as objects change,
// so ByIndex answers from memory.
func step2(ctx context.Context, out io.Writer, c *cluster.Cluster,
	lw cache.ListerWatcher) error {
	fmt.Fprintln(out, "Step 2. NewIndexerInformer: an Indexer with a "+
		"custom \"team\" index.")
	// An IndexFunc must not fail: the store panics on an error (see
	// thread_safe_store.go updateSingleIndex), so an object without the
	// label simply has no index value.
	byTeam := func(obj any) ([]string, error) {
		m, err := meta.Accessor(obj)
		if err != nil || m.GetLabels()["team"] == "" {
			return nil, nil
		}
		return []string{m.GetLabels()["team"]}, nil
	}
	s := newSession(ctx)
	defer s.stop()
	indexer, ctrl := cache.NewIndexerInformer(lw, &corev1.ConfigMap{}, 0,
		s.handler(""), cache.Indexers{"team": byTeam})
	s.start(ctrl.RunWithContext)
	if err := s.syncedAndAdded(out, ctrl.HasSyncedChecker(), 2); err != nil {
		return err
	}

	// ByIndex returns objects in map order: the names are sorted.
	query := func() error {
		for _, team := range []string{"blue", "red"} {
			objs, err := indexer.ByIndex("team", team)
			if err != nil {
				return err
			}
			fmt.Fprintf(out, "  ByIndex(\"team\", %-6q) %v\n",
				team, names(objs))
		}
		return nil
	}
	if err := query(); err != nil {
		return err
	}
	if err := s.expect(out, "patch  configmap/cache team=red", 1,
		func() error {
			return patch(ctx, c, "cache",
				`{"metadata":{"labels":{"team":"red"}}}`)
		}); err != nil {
		return err
	}
	return query()
}

// lastApplied is the annotation kubectl apply keeps: a full copy of the
// object as last applied, often the largest part of a small object.
const lastApplied = "kubectl.kubernetes.io/last-applied-configuration"

// Step 3. NewInformerWithOptions, the form the deprecated constructors
// now call. Its options include a Transform, run on every object before
// it is cached: here it drops what this program never reads.
func step3(ctx context.Context, out io.Writer, c *cluster.Cluster,
	lw cache.ListerWatcher) error {
	fmt.Fprintln(out, "Step 3. NewInformerWithOptions with a Transform "+
		"that trims objects.")
	legacy := configMap("legacy", "red")
	legacy.Annotations = map[string]string{lastApplied: `{"apiVersion":` +
		`"v1","data":{"mode":"v1"},"kind":"ConfigMap","metadata":` +
		`{"annotations":{},"name":"legacy"}}`}
	cms := c.Client.CoreV1().ConfigMaps(c.Namespace)
	created, err := cms.Create(ctx, legacy, create)
	if err != nil {
		return fmt.Errorf("create configmap/legacy: %w", err)
	}
	fmt.Fprintf(out, "  created %s with annotation %s\n",
		show(created), lastApplied)

	// The Transform may change the object in place (it sees it first)
	// but must be idempotent: with watch-list, the initial objects pass
	// through it twice (the reflector's buffer, then the RealFIFO).
	var calls atomic.Int64
	trim := func(obj any) (any, error) {
		calls.Add(1)
		if m, err := meta.Accessor(obj); err == nil {
			m.SetManagedFields(nil)
			a := m.GetAnnotations()
			delete(a, lastApplied)
			if len(a) == 0 {
				m.SetAnnotations(nil)
			}
		}
		return obj, nil
	}
	s := newSession(ctx)
	defer s.stop()
	store, ctrl := cache.NewInformerWithOptions(cache.InformerOptions{
		ListerWatcher: lw,
		ObjectType:    &corev1.ConfigMap{},
		Handler:       s.handler(""),
		Transform:     trim,
	})
	s.start(ctrl.RunWithContext)
	if err := s.syncedAndAdded(out, ctrl.HasSyncedChecker(), 3); err != nil {
		return err
	}
	fmt.Fprintf(out, "  the Transform ran %d times for 3 objects "+
		"(watch-list buffer, then RealFIFO)\n", calls.Load())

	// The server still has the annotation; the cache does not. A real
	// kube-apiserver also fills managedFields, which the cache lacks too.
	onServer, err := cms.Get(ctx, "legacy", metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("get configmap/legacy: %w", err)
	}
	cached, ok, err := store.GetByKey(c.Namespace + "/legacy")
	if err != nil || !ok {
		return fmt.Errorf("configmap/legacy is not in the cache (%v)", err)
	}
	cm, ok := cached.(*corev1.ConfigMap)
	if !ok {
		return fmt.Errorf("cached object is a %T", cached)
	}
	fmt.Fprintf(out, "  server (GET): annotations %v\n",
		slices.Sorted(maps.Keys(onServer.Annotations)))
	fmt.Fprintf(out, "  cache:        annotations %v, "+
		"managedFields %d\n", slices.Sorted(maps.Keys(cm.Annotations)),
		len(cm.ManagedFields))
	return nil
}

// Step 4. Inside the informer. newQueueFIFO (controller.go) builds a
// RealFIFO when InOrderInformers is on, which it always is in v0.37.
// This step builds one the same way, makes the calls a reflector makes,
// and pops each delta into processDeltas, written out below as
// processDelta. No cluster is involved.
func step4(ctx context.Context, out io.Writer, _ *cluster.Cluster,
	_ cache.ListerWatcher) error {
	fmt.Fprintln(out, "Step 4. Inside: a RealFIFO, and processDeltas "+
		"turning deltas into handler calls.")
	gates := features.FeatureGates()
	inOrder := gates.Enabled(features.InOrderInformers)
	atomicFIFO := gates.Enabled(features.AtomicFIFO)
	fmt.Fprintf(out, "  InOrderInformers=%t: newQueueFIFO builds a "+
		"RealFIFO, not a DeltaFIFO\n", inOrder)
	if atomicFIFO {
		fmt.Fprintln(out, "  AtomicFIFO=true: a relist or a resync "+
			"is one delta, not one per object")
	} else {
		fmt.Fprintln(out, "  AtomicFIFO=false: a relist or a resync "+
			"is one delta per object (the table below still shows "+
			"the default RealFIFO)")
	}

	// The options newQueueFIFO passes with the default gates.
	fifo := cache.NewRealFIFOWithOptions(cache.RealFIFOOptions{
		KeyFunction:           cache.MetaNamespaceKeyFunc,
		AtomicEvents:          true,
		UnlockWhileProcessing: true,
		EmitDeltaTypeBookmark: true,
	})
	store := cache.NewStore(cache.DeletionHandlingMetaNamespaceKeyFunc)
	s := newSession(ctx)
	defer s.stop()
	h := s.handler("")

	// What a reflector does over an informer's life, one call at a time:
	// a list, three watch events, a bookmark, a resync timer, a relist
	// after an outage in which c was deleted.
	script := []struct {
		call string
		do   func() error
	}{
		{`Replace([a b], "11")`, func() error {
			a, b := demo("a", "10"), demo("b", "11")
			return fifo.Replace([]any{a, b}, "11")
		}},
		{"Add(c)", func() error { return fifo.Add(demo("c", "12")) }},
		{"Update(a)", func() error { return fifo.Update(demo("a", "13")) }},
		{"Delete(b)", func() error { return fifo.Delete(demo("b", "14")) }},
		{`Bookmark("15")`, func() error { return fifo.Bookmark("15") }},
		{"Resync()", fifo.Resync},
		{`Replace([a], "16")`, func() error {
			return fifo.Replace([]any{demo("a", "13")}, "16")
		}},
	}
	fmt.Fprintf(out, "  %-20s %-12s  %s\n", "reflector calls",
		"delta popped", "handler calls made by processDeltas")
	for _, step := range script {
		if err := step.do(); err != nil {
			return err
		}
		// Each call above queues exactly one delta: Pop never waits.
		// The informer's loop pops the same way (or in batches).
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
		calls := s.drain()
		if popped == cache.Bookmark {
			calls = []string{"(none) store.LastStoreSyncResourceVersion()=" +
				store.LastStoreSyncResourceVersion()}
		}
		for i, line := range calls {
			left := fmt.Sprintf("%-20s %-12s", step.call, popped)
			if i > 0 {
				left = fmt.Sprintf("%-33s", "")
			}
			fmt.Fprintf(out, "  %s  %s\n", left, line)
		}
	}
	return nil
}

// processDelta is processDeltas (controller.go) written out for one
// delta, with one change: where client-go walks a map (SyncAll, the
// vanished keys of ReplacedAll), this sorts, so the output is stable.
func processDelta(d cache.Delta, store cache.Store,
	h cache.ResourceEventHandler, isInInitialList bool) error {
	switch d.Type {
	case cache.ReplacedAll:
		// A relist. Keys the new list lacks were deleted while nobody
		// watched: the handler gets a tombstone with the last state
		// known. The store is replaced before any handler call.
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
				gone = append(gone,
					cache.DeletedFinalStateUnknown{Key: key, Obj: last})
			}
		}
		old := make([]any, len(info.Objects))
		for i, obj := range info.Objects {
			old[i], _, _ = store.Get(obj)
		}
		err := store.Replace(info.Objects, info.ResourceVersion)
		if err != nil {
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
		// Whether this is an add or an update is decided by the
		// store, not by the watch event's type.
		old, exists, err := store.Get(d.Object)
		if err == nil && exists {
			if err := store.Update(d.Object); err != nil {
				return err
			}
			h.OnUpdate(old, d.Object)
			return nil
		}
		if err := store.Add(d.Object); err != nil {
			return err
		}
		h.OnAdd(d.Object, isInInitialList)
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

// resyncPeriod is short so the chapter need not wait long for a resync.
// No informer option accepts a fake clock in v0.37: the controller and
// the shared informer set a real one themselves.
const resyncPeriod = 100 * time.Millisecond

// Step 5. Resync is not relist. With a ResyncPeriod the informer replays
// its cache to the handler as OnUpdate(obj, obj), old and new the very
// same object, and sends no request: the server is not asked anything.
func step5(ctx context.Context, out io.Writer, c *cluster.Cluster,
	lw cache.ListerWatcher) error {
	fmt.Fprintf(out, "Step 5. Resync is not relist: ResyncPeriod=%v "+
		"replays the cache.\n", resyncPeriod)
	s := newSession(ctx)
	defer s.stop()
	store, ctrl := cache.NewInformerWithOptions(cache.InformerOptions{
		ListerWatcher: lw,
		ObjectType:    &corev1.ConfigMap{},
		Handler:       s.handler(""),
		ResyncPeriod:  resyncPeriod,
	})
	c.ResetRequests()
	s.start(ctrl.RunWithContext)
	if err := s.syncedAndAdded(out, ctrl.HasSyncedChecker(), 3); err != nil {
		return err
	}
	before := c.Requests()
	fmt.Fprintf(out, "  requests so far: %d\n", len(before))
	printRequests(out, before)

	// One SyncAll delta gives one OnUpdate per cached object, in map
	// order: sorted. Later resyncs are not awaited.
	resync, err := s.next(len(store.ListKeys()))
	if err != nil {
		return err
	}
	sort.Strings(resync)
	fmt.Fprintln(out, "  first resync (order not defined, sorted):")
	printLines(out, resync)
	fmt.Fprintf(out, "  requests sent for the resync: %d\n",
		len(c.Requests())-len(before))
	return nil
}

// Step 6. After an outage, OnDelete can receive a
// cache.DeletedFinalStateUnknown instead of the object. The embedded
// cluster stages one: it drops and holds the informer's watch, deletes
// an object and compacts its history, so the re-watch gets 410 Expired
// and the informer relists. The object is missing from the new list:
// all the informer knows is its key and the last state it cached.
func step6(ctx context.Context, out io.Writer, c *cluster.Cluster,
	lw cache.ListerWatcher) error {
	fmt.Fprintln(out, "Step 6. After an outage, OnDelete gets a "+
		"DeletedFinalStateUnknown tombstone.")
	cms := c.Client.CoreV1().ConfigMaps(c.Namespace)
	if !c.Embedded() {
		// kube-apiserver compacts when time and traffic say so; a
		// chapter cannot make it. Delete the object anyway so that
		// step 7 starts from the same state.
		fmt.Fprintln(out, "  skipped on a real cluster: kube-apiserver "+
			"cannot be made to compact its watch cache on demand")
		return cms.Delete(ctx, "legacy", metav1.DeleteOptions{})
	}
	s := newSession(ctx)
	defer s.stop()
	_, ctrl := cache.NewInformerWithOptions(cache.InformerOptions{
		ListerWatcher: lw,
		ObjectType:    &corev1.ConfigMap{},
		Handler:       s.handler(""),
	})
	c.ResetRequests()
	s.start(ctrl.RunWithContext)
	if err := s.syncedAndAdded(out, ctrl.HasSyncedChecker(), 3); err != nil {
		return err
	}
	// One event on the open watch first. A watch that ends within a
	// second having delivered nothing is a VeryShortWatchError: the
	// reflector would log a warning and go to a relist, with no 410.
	if err := s.expect(out, "patch  configmap/web", 1, func() error {
		return patch(ctx, c, "web", `{"data":{"mode":"v3"}}`)
	}); err != nil {
		return err
	}

	// The outage. Held first, so the reflector's re-watch (sent as soon
	// as it sees its stream end) waits at the server until everything
	// below has happened: the delete never reaches it as an event.
	// Whether the re-watch is already waiting or arrives later makes no
	// difference: either way it meets the compacted history.
	c.Server.HoldWatches()
	defer c.Server.ReleaseWatches() // on errors; released below
	c.Server.DropWatches()
	if err := cms.Delete(ctx, "legacy", metav1.DeleteOptions{}); err != nil {
		return fmt.Errorf("delete configmap/legacy: %w", err)
	}
	rv := c.Server.CompactHistory()
	fmt.Fprintf(out, "  outage: watch dropped and held; "+
		"configmap/legacy deleted; history compacted to rv=%s\n", rv)
	c.Server.ReleaseWatches()

	// The re-watch gets 410 Expired, ListAndWatch returns, and the
	// reflector waits out its backoff (0.8-1.6 s with client-go's
	// defaults, not settable through informer options) before it lists
	// again. The relist is one ReplacedAll: deletions come first, then
	// the survivors (in map order: sorted).
	fmt.Fprintln(out, "  released: the re-watch gets 410 Expired; "+
		"after its backoff the reflector relists")
	got, err := s.next(3)
	if err != nil {
		return err
	}
	printLines(out, got[:1])
	rest := got[1:]
	sort.Strings(rest)
	printLines(out, rest)
	fmt.Fprintln(out, "  the informer's requests:")
	printRequests(out, c.Requests())
	return nil
}

// Step 7. A SharedInformer: one cache and one watch for any number of
// handlers. Each AddEventHandler returns a registration whose HasSynced
// says whether that handler has seen the initial list, which can be
// later than the informer's own HasSynced. A handler added after the
// informer synced gets the cache's contents as synthetic adds.
func step7(ctx context.Context, out io.Writer, c *cluster.Cluster,
	lw cache.ListerWatcher) error {
	fmt.Fprintln(out, "Step 7. SharedInformer: one watch, many handlers, "+
		"one registration each.")
	informer := cache.NewSharedInformer(lw, &corev1.ConfigMap{}, 0)
	s := newSession(ctx)
	defer s.stop()

	// "slow" is held inside its first OnAdd until the gate opens.
	gate := make(chan struct{})
	fast, err := informer.AddEventHandler(s.handler("fast"))
	if err != nil {
		return err
	}
	slow, err := informer.AddEventHandler(&gated{
		handler: s.handler("slow"), gate: gate, stop: s.ctx.Done()})
	if err != nil {
		return err
	}
	fmt.Fprintln(out, `  handlers "fast" and "slow" added before Run; `+
		`slow's first OnAdd waits for a gate`)
	c.ResetRequests()
	s.start(informer.RunWithContext)

	// Handlers run on goroutines of their own, fed by the informer. The
	// informer is synced once its cache holds the initial list, whether
	// or not its handlers have caught up.
	if err := s.synced(informer.HasSyncedChecker(),
		fast.HasSyncedChecker()); err != nil {
		return err
	}
	fmt.Fprintf(out, "  informer.HasSynced() %t\n", informer.HasSynced())
	fmt.Fprintf(out, "  fast: registration.HasSynced() %t\n",
		fast.HasSynced())
	fmt.Fprintf(out, "  slow: registration.HasSynced() %t "+
		"(still inside its first OnAdd)\n", slow.HasSynced())
	close(gate)
	if err := s.synced(slow.HasSyncedChecker()); err != nil {
		return err
	}
	fmt.Fprintf(out, "  gate opened: slow: registration.HasSynced() %t\n",
		slow.HasSynced())
	// Two handlers, two objects; no order between handlers: sorted.
	if err := s.nextSorted(out, 4); err != nil {
		return err
	}

	// A late handler is fed from the cache, not from the server: its
	// adds are marked isInInitialList and no request is sent.
	late, err := informer.AddEventHandler(s.handler("late"))
	if err != nil {
		return err
	}
	if err := s.synced(late.HasSyncedChecker()); err != nil {
		return err
	}
	fmt.Fprintln(out, `  handler "late" added after sync: `+
		`synthetic adds from the cache`)
	if err := s.nextSorted(out, 2); err != nil {
		return err
	}

	// A change reaches every handler, each on its own goroutine.
	cms := c.Client.CoreV1().ConfigMaps(c.Namespace)
	if err := cms.Delete(ctx, "cache", metav1.DeleteOptions{}); err != nil {
		return fmt.Errorf("delete configmap/cache: %w", err)
	}
	fmt.Fprintln(out, "  delete configmap/cache:")
	if err := s.nextSorted(out, 3); err != nil {
		return err
	}
	fmt.Fprintf(out, "  list and watch requests for three handlers: %d\n",
		len(listWatches(c.Requests())))
	return nil
}

// gated is a handler whose first OnAdd waits for gate: a stand-in for a
// handler that is slow to catch up.
type gated struct {
	handler
	gate, stop <-chan struct{}
	once       sync.Once
}

func (g *gated) OnAdd(obj any, isInInitialList bool) {
	g.once.Do(func() {
		select {
		case <-g.gate:
		case <-g.stop:
		}
	})
	g.handler.OnAdd(obj, isInInitialList)
}

// handler prints every call it receives, through its session. Its
// OnDelete handles the tombstone a relist leaves (step 6) instead of
// asserting obj.(*corev1.ConfigMap), which would panic on it.
type handler struct {
	s    *session
	name string // step 7 names its handlers
}

func (h handler) OnAdd(obj any, isInInitialList bool) {
	h.send("OnAdd     %s  isInInitialList=%t", show(obj), isInInitialList)
}

func (h handler) OnUpdate(oldObj, newObj any) {
	line := fmt.Sprintf("OnUpdate  %s -> rv=%s", show(oldObj), rvOf(newObj))
	if oldObj == newObj {
		line += "  (old == new)"
	}
	h.send("%s", line)
}

func (h handler) OnDelete(obj any) {
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		h.send("OnDelete  DeletedFinalStateUnknown key=%s, last known %s",
			tomb.Key, show(tomb.Obj))
		return
	}
	h.send("OnDelete  %s", show(obj))
}

func (h handler) send(format string, a ...any) {
	line := fmt.Sprintf(format, a...)
	if h.name != "" {
		line = fmt.Sprintf("%-4s  %s", h.name, line)
	}
	h.s.send(line)
}

// The rest is plumbing.

// patience bounds every wait for an event: if one never comes, the
// chapter fails with an error instead of hanging.
const patience = 10 * time.Second

var create = metav1.CreateOptions{}

// A session is the life of one step's informers: handlers send lines on
// it, run reads them, and stop cancels the informers and waits until
// every Run has returned.
type session struct {
	ctx    context.Context
	cancel context.CancelFunc
	lines  chan string
	wg     sync.WaitGroup
}

func newSession(ctx context.Context) *session {
	ctx, cancel := context.WithCancel(ctx)
	return &session{ctx: ctx, cancel: cancel, lines: make(chan string, 100)}
}

func (s *session) handler(name string) handler { return handler{s, name} }

func (s *session) start(run func(context.Context)) {
	s.wg.Go(func() { run(s.ctx) })
}

func (s *session) stop() {
	s.cancel()
	s.wg.Wait()
}

// send gives up once the session stops, so that a handler never keeps
// an informer from shutting down.
func (s *session) send(line string) {
	select {
	case s.lines <- line:
	case <-s.ctx.Done():
	}
}

// next waits for the next n lines.
func (s *session) next(n int) ([]string, error) {
	timer := time.NewTimer(patience)
	defer timer.Stop()
	var got []string
	for len(got) < n {
		select {
		case line := <-s.lines:
			got = append(got, line)
		case <-timer.C:
			return nil, fmt.Errorf("waited %v for %d handler calls, got %q",
				patience, n, got)
		case <-s.ctx.Done():
			return nil, s.ctx.Err()
		}
	}
	return got, nil
}

// nextSorted prints the next n lines, sorted.
func (s *session) nextSorted(out io.Writer, n int) error {
	got, err := s.next(n)
	if err != nil {
		return err
	}
	sort.Strings(got)
	printLines(out, got)
	return nil
}

// drain returns the lines already sent: for step 4, whose handler runs
// on run's own goroutine.
func (s *session) drain() []string {
	var got []string
	for len(s.lines) > 0 {
		got = append(got, <-s.lines)
	}
	return got
}

// expect makes a change and prints the handler calls it causes.
func (s *session) expect(out io.Writer, what string, n int,
	change func() error) error {
	if err := change(); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	got, err := s.next(n)
	if err != nil {
		return err
	}
	for _, line := range got {
		fmt.Fprintf(out, "  %-22s -> %s\n", what, line)
	}
	return nil
}

// synced waits until every checker is done (HasSyncedChecker), without
// polling: cache.WaitForCacheSync would poll every 100ms.
func (s *session) synced(checkers ...cache.DoneChecker) error {
	ctx, cancel := runner.WithTimeout(s.ctx, patience)
	defer cancel()
	if !cache.WaitFor(ctx, "", checkers...) {
		return errors.New("timed out waiting for the informer to sync")
	}
	return nil
}

// syncedAndAdded waits for the sync and the n OnAdd calls of the
// initial list, and says so in one line.
func (s *session) syncedAndAdded(out io.Writer, synced cache.DoneChecker,
	n int) error {
	if err := s.synced(synced); err != nil {
		return err
	}
	if _, err := s.next(n); err != nil {
		return err
	}
	fmt.Fprintf(out, "  synced: %d OnAdd calls with isInInitialList=true\n",
		n)
	return nil
}

func configMap(name, team string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Labels: cluster.Labels("team", team)},
		Data: map[string]string{"mode": "v1"},
	}
}

// demo is an in-memory ConfigMap for step 4.
func demo(name, rv string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
		Namespace: "demo", Name: name, ResourceVersion: rv}}
}

func patch(ctx context.Context, c *cluster.Cluster,
	name, body string) error {
	_, err := c.Client.CoreV1().ConfigMaps(c.Namespace).Patch(ctx, name,
		types.MergePatchType, []byte(body), metav1.PatchOptions{})
	return err
}

// show names an object and its resourceVersion.
func show(obj any) string {
	if obj == nil {
		return "nothing"
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return fmt.Sprintf("a %T", obj)
	}
	return fmt.Sprintf("configmap/%s rv=%s", m.GetName(),
		m.GetResourceVersion())
}

func rvOf(obj any) string {
	if m, err := meta.Accessor(obj); err == nil {
		return m.GetResourceVersion()
	}
	return "?"
}

func names(objs []any) []string {
	out := []string{}
	for _, obj := range objs {
		if m, err := meta.Accessor(obj); err == nil {
			out = append(out, m.GetName())
		}
	}
	sort.Strings(out)
	return out
}

func sortedKeys(store cache.Store) []string {
	keys := store.ListKeys()
	sort.Strings(keys)
	return keys
}

func printLines(out io.Writer, lines []string) {
	for _, line := range lines {
		fmt.Fprintf(out, "  %s\n", line)
	}
}

// listWatches keeps the list and watch requests: the informers' own.
func listWatches(reqs []apiserver.Request) []apiserver.Request {
	var out []apiserver.Request
	for _, r := range reqs {
		if r.Verb == "list" || r.Verb == "watch" {
			out = append(out, r)
		}
	}
	return out
}

// printRequests prints list and watch requests short: the resource for
// the path, and without the label selector every one of them carries.
func printRequests(out io.Writer, reqs []apiserver.Request) {
	for _, r := range listWatches(reqs) {
		short := r
		short.Path = path.Base(r.Path)
		short.Query = maps.Clone(r.Query)
		delete(short.Query, "labelSelector")
		fmt.Fprintf(out, "    %s\n", short)
	}
}
