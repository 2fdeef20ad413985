// Chapter 04-indexer: Store, ThreadSafeStore and Indexer with custom
// index functions.
//
// An informer answers reads from a local cache, and the Indexer is what
// makes those reads fast: beside the objects it keeps one inverted index
// per IndexFunc (index name -> indexed value -> set of keys). The chapter
// builds one in memory, queries it, watches it follow updates, deletes
// and a Replace, adds an index late, lets an informer fill the same
// indices from the cluster, and ends with keys for tombstones.
//
// Read alongside (client-go v0.37.2): tools/cache/index.go, store.go,
// thread_safe_store.go, shared_informer.go, controller.go. pods.go holds
// the pods, the index names and the IndexFuncs the steps hand to
// client-go; observe.go what only prints (aligned rows, sorted keys, the
// indices map, the request log).
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	"github.com/informer-walkthrough/informer-walkthrough/internal/cluster"
	"github.com/informer-walkthrough/informer-walkthrough/internal/show"
	"github.com/informer-walkthrough/informer-walkthrough/internal/tap"
)

func main() { cluster.Main("04-indexer", run) }

// run is the chapter: one step after another, each printing a heading,
// then what it found. Steps 1-4 and 6 work on pods built in memory.
func run(ctx context.Context, out io.Writer, c *cluster.Cluster) error {
	w := table(out) // aligns the columns of each block of rows
	defer w.Flush()

	// Step 1. An Indexer over six pods: a Store plus one index per
	// IndexFunc.
	idx, err := buildIndexer(w)
	if err != nil {
		return err
	}

	// Step 2. Reads: ByIndex, IndexKeys, ListIndexFuncValues, Index.
	if err := queries(w, idx); err != nil {
		return err
	}

	// Step 3. Writes: Update, Delete, the in-place trap, Replace.
	if err := upkeep(w, idx); err != nil {
		return err
	}

	// Step 4. An index added to the populated indexer.
	if err := addIndexersLate(w, idx); err != nil {
		return err
	}

	// Step 5. The same indices inside an informer, fed by the cluster.
	if err := informerIndices(ctx, w, c); err != nil {
		return err
	}

	// Step 6. Key functions, and where a tombstone goes.
	return tombstoneKeys(w)
}

// buildIndexer builds an Indexer: a Store (objects by key) plus one
// index per IndexFunc. NewIndexer takes the key function and the
// Indexers map; every Add computes the key and runs every IndexFunc.
func buildIndexer(w io.Writer) (cache.Indexer, error) {
	fmt.Fprintln(w, "Step 1. An Indexer: a Store plus one index per IndexFunc")

	// !+newIndexer
	idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{
		cache.NamespaceIndex: cache.MetaNamespaceIndexFunc, // client-go's
		byApp:                appIndex,
		byNode:               nodeIndex,
		byImage:              imageIndex,
	})
	for _, p := range examplePods() {
		if err := idx.Add(p); err != nil {
			return nil, err
		}
	}
	// !-newIndexer
	return idx, printPods(w, idx)
}

// queries reads the indices. Each read takes the read lock and looks
// up indices[name][value]; none runs over all the objects. A read that
// fails (only an unknown index name can) prints its error in its row.
func queries(w io.Writer, idx cache.Indexer) error {
	fmt.Fprintln(w, "Step 2. Queries answered from the indices")

	// ByIndex: the objects whose values include "web".
	row(w, "ByIndex(app, web)", keysOf(idx.ByIndex(byApp, "web")))

	// IndexKeys: the same lookup, keys only, sorted by client-go.
	row(w, "IndexKeys(node, node-a)", either(idx.IndexKeys(byNode, "node-a")))

	// ListIndexFuncValues: the values present, in map order.
	row(w, "ListIndexFuncValues(image)",
		sorted(idx.ListIndexFuncValues(byImage)))

	// Index(name, obj) runs the IndexFunc on obj and returns all that
	// share any of its values: api-1 runs api:2.4 and envoy:1.31.
	api, err := getPod(idx, "shop/api-1")
	if err != nil {
		return err
	}
	row(w, "Index(image, shop/api-1)", keysOf(idx.Index(byImage, api)))

	// An unknown value is an empty answer; an unknown index an error.
	none, err := idx.ByIndex(byApp, "nope")
	row(w, "ByIndex(app, nope)", keysOf(none, nil), errText(err))
	row(w, "ByIndex(zone, a)", keysOf(idx.ByIndex("zone", "a")))

	return printIndices(w, "  the indices: index name -> value -> keys", idx)
}

// upkeep writes. Every write runs the IndexFuncs on the object the
// store held and on the new one, and moves the key between values.
func upkeep(w io.Writer, idx cache.Indexer) error {
	fmt.Fprintln(w, "Step 3. Upkeep: every write moves keys between values")

	// Update with a changed copy, never the cached object itself.
	web2, err := getPod(idx, "shop/web-2")
	if err != nil {
		return err
	}
	web2 = web2.DeepCopy()
	web2.Labels["app"] = "canary"
	web2.Spec.Containers[0].Image = "nginx:1.28"
	if err := idx.Update(web2); err != nil {
		return err
	}
	fmt.Fprintln(w, "  Update shop/web-2: app web -> canary, nginx:1.27 -> 1.28")
	row(w, "  IndexKeys(app, web)", either(idx.IndexKeys(byApp, "web")))
	row(w, "  IndexKeys(app, canary)", either(idx.IndexKeys(byApp, "canary")))
	row(w, "  IndexKeys(image, nginx:1.27)", either(idx.IndexKeys(byImage, "nginx:1.27")))
	row(w, "  IndexKeys(image, nginx:1.28)", either(idx.IndexKeys(byImage, "nginx:1.28")))

	// Delete: the key leaves every value it had, and a value whose set
	// of keys is empty is removed from the index. The store un-indexes
	// the object it holds under the key, so the key alone will do:
	// MetaNamespaceKeyFunc returns an ExplicitKey as it is.
	if err := idx.Delete(cache.ExplicitKey("blog/db-1")); err != nil {
		return err
	}
	fmt.Fprintln(w, "  Delete blog/db-1: values db and node-c are gone")
	row(w, "  ListIndexFuncValues(app)",
		sorted(idx.ListIndexFuncValues(byApp)))
	row(w, "  ListIndexFuncValues(node)",
		sorted(idx.ListIndexFuncValues(byNode)))

	// !+inPlace
	// The wrong way: change the cached object in place. Update
	// computes the old values from the object the store holds, which
	// is already the changed one, so the key never leaves "web"; old
	// and new are the same single value, so the store returns early
	// and does not file it under "blue" either: the index now lies.
	web1, err := getPod(idx, "shop/web-1")
	if err != nil {
		return err
	}
	web1.Labels["app"] = "blue" // never do this to a cached object
	if err := idx.Update(web1); err != nil {
		return err
	}
	// !-inPlace
	fmt.Fprintln(w, "  Mutate cached shop/web-1 (app web -> blue), Update it:")
	row(w, "  ByIndex(app, web)", withApp(idx.ByIndex(byApp, "web")))
	row(w, "  ByIndex(app, blue)", keysOf(idx.ByIndex(byApp, "blue")))

	// Replace swaps in a whole new set of objects, as a relist does,
	// and rebuilds every index from scratch: that also repairs it.
	if err := idx.Replace(relistedPods(), ""); err != nil {
		return err
	}
	return printIndices(w, "  Replace with 4 fresh pods (no shop/job-1):", idx)
}

// addIndexersLate adds an index to the populated indexer: it indexes
// what is there at once. A name already in use is refused.
func addIndexersLate(w io.Writer, idx cache.Indexer) error {
	fmt.Fprintln(w, "Step 4. AddIndexers on a populated indexer")

	// A composite value ("shop/web") answers "app X in namespace Y"
	// with one lookup instead of intersecting two.
	err := idx.AddIndexers(cache.Indexers{byNsApp: nsAppIndex})
	row(w, "AddIndexers(namespace/app)", errText(err))
	row(w, "  ListIndexFuncValues(namespace/app)",
		sorted(idx.ListIndexFuncValues(byNsApp)))
	row(w, "  IndexKeys(namespace/app, shop/canary)",
		either(idx.IndexKeys(byNsApp, "shop/canary")))

	// Index names are unique; the whole call is refused.
	err = idx.AddIndexers(cache.Indexers{byApp: appIndex})
	row(w, "AddIndexers(app) again", errText(err))

	// Two panics, not triggered here: TestPanics in main_test.go
	// triggers and recovers them.
	printPanics(w)
	return nil
}

// informerIndices lets an informer keep the same kind of Indexer
// filled from the cluster. Reads are then local: a thousand ByIndex
// calls send no request, where every List does.
func informerIndices(ctx context.Context, w io.Writer, c *cluster.Cluster) error {
	fmt.Fprintln(w, "Step 5. The same indices in an informer, fed by the cluster")

	// Pods on the server. This step indexes by label and image, not by
	// nodeName: a gated pod cannot have a node, and on a real cluster a
	// pod bound to a node that does not exist is garbage-collected.
	pods := c.Client.CoreV1().Pods(c.Namespace)
	for _, p := range serverPods() {
		if _, err := pods.Create(ctx, p, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("create pod %s: %w", p.Name, err)
		}
	}
	fmt.Fprintf(w, "  created pods web-1 web-2 api-1 in %s\n", c.Namespace)
	c.ResetRequests()

	// !+informer
	// The ListWatch sees only the course's own pods. The informer's
	// store is NewIndexer(DeletionHandlingMetaNamespaceKeyFunc, these
	// Indexers): the machine of steps 1-4.
	lw := cache.NewFilteredListWatchFromClient(c.Client.CoreV1().RESTClient(),
		"pods", c.Namespace, func(o *metav1.ListOptions) {
			o.LabelSelector = cluster.OwnSelector
		})
	inf := cache.NewSharedIndexInformer(lw, &corev1.Pod{}, 0, cache.Indexers{
		cache.NamespaceIndex: cache.MetaNamespaceIndexFunc,
		byApp:                appIndex,
	})
	// !-informer

	// A handler tells the step when the informer has seen the patch
	// below: client-go calls it after the store was updated. It is the
	// course's reporting handler (tap.Handler): it records each call.
	rec := tap.NewRecorder(ctx)
	_, err := inf.AddEventHandler(tap.Handler{Rec: rec})
	if err != nil {
		return err
	}

	// Run until its context is cancelled; then wait for it to return.
	infCtx, stopInformer := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer stopInformer()
	wg.Go(func() { inf.RunWithContext(infCtx) })
	if !cache.WaitFor(ctx, "", inf.HasSyncedChecker()) {
		return errors.New("the informer did not sync")
	}
	show.Under(w, "  informer synced; the requests it sent:", show.Brief(c.Requests(), nil))
	idx := inf.GetIndexer()

	// A thousand reads from the cache: the request log does not move.
	before := len(c.Requests())
	var web []any
	for range 1000 {
		if web, err = idx.ByIndex(byApp, "web"); err != nil {
			return err
		}
	}
	printCost(w, "ByIndex(app, web) x1000", show.Names(web), before, c)

	// The same question asked of the server: a request per call.
	sel := metav1.ListOptions{LabelSelector: "app=web," + cluster.OwnSelector}
	before = len(c.Requests())
	var list *corev1.PodList
	for range 3 {
		if list, err = pods.List(ctx, sel); err != nil {
			return err
		}
	}
	printCost(w, "List(app=web) x3", show.Names(list.Items), before, c)

	// AddIndexers on a running informer (allowed since client-go
	// v0.30): the objects already cached are indexed at once.
	err = inf.AddIndexers(cache.Indexers{byImage: imageIndex})
	row(w, "AddIndexers(image) while running", errText(err))
	row(w, "ByIndex(image, envoy:1.31)", namesOf(idx.ByIndex(byImage, "envoy:1.31")))

	// A change on the server reaches the index through the watch.
	_, err = pods.Patch(ctx, "web-2", types.MergePatchType,
		[]byte(`{"metadata":{"labels":{"app":"canary"}}}`), metav1.PatchOptions{})
	if err != nil {
		return fmt.Errorf("patch web-2: %w", err)
	}
	if err := awaitLabel(ctx, rec, "web-2", "app", "canary"); err != nil {
		return fmt.Errorf("the informer did not see the patch: %w", err)
	}
	fmt.Fprintln(w, "  patched web-2 to app=canary; the watch brought it:")
	row(w, "  ByIndex(app, web)", namesOf(idx.ByIndex(byApp, "web")))
	row(w, "  ByIndex(app, canary)", namesOf(idx.ByIndex(byApp, "canary")))

	stopInformer()
	wg.Wait()
	fmt.Fprintln(w, "  informer stopped")
	return nil
}

// tombstoneKeys keys a tombstone. When a relist finds an object gone,
// the informer hands OnDelete a DeletedFinalStateUnknown: not an API
// object, just the key and the last state the informer knew. Whether
// the informer's store is handed one too depends on the queue.
func tombstoneKeys(w io.Writer) error {
	fmt.Fprintln(w, "Step 6. Key functions and the DeletedFinalStateUnknown tombstone")
	last := newPod("shop", "web-1", "web", "node-a", "nginx:1.27")
	tomb := cache.DeletedFinalStateUnknown{Key: "shop/web-1", Obj: last}
	fmt.Fprintln(w, "  tomb = DeletedFinalStateUnknown{Key: shop/web-1, Obj: pod}")

	// MetaNamespaceKeyFunc needs object metadata; a tombstone has none.
	fmt.Fprintln(w, "  MetaNamespaceKeyFunc")
	row(w, "  (pod)", either(cache.MetaNamespaceKeyFunc(last)))
	row(w, "  (tomb)", either(cache.MetaNamespaceKeyFunc(tomb)))

	// The DeletionHandling variant returns the key the tombstone holds.
	fmt.Fprintln(w, "  DeletionHandlingMetaNamespaceKeyFunc")
	row(w, "  (tomb)", either(cache.DeletionHandlingMetaNamespaceKeyFunc(tomb)))

	// Every OnDelete handler may get a tombstone: unwrap it.
	fmt.Fprintln(w, "  an OnDelete handler unwraps it")
	row(w, "  podFrom(tomb)", lastKnown(podFrom(tomb)))

	// The store. With AtomicFIFO (beta, on by default) a relist reaches
	// the informer as one ReplacedAll: the store is Replaced wholesale
	// and the tombstone goes to OnDelete alone. With AtomicFIFO off (or
	// a hand-built DeltaFIFO) the queue makes the tombstone a Deleted
	// delta, and the informer calls store.Delete(tomb) before OnDelete.
	// TestRelistTombstone in main_test.go shows both on a real informer.
	fmt.Fprintln(w, "  only with AtomicFIFO off does an informer's store get Delete(tomb)")
	fmt.Fprintln(w, "  (on, the default: a relist Replaces the store; OnDelete gets the tomb)")

	// A store keyed by MetaNamespaceKeyFunc cannot delete by tomb:
	// Delete returns a KeyError.
	plain := cache.NewIndexer(cache.MetaNamespaceKeyFunc, podIndexers())
	if err := plain.Add(last); err != nil {
		return err
	}
	fmt.Fprintln(w, "  a store keyed by MetaNamespaceKeyFunc")
	row(w, "  Delete(tomb)", keyErrText(plain.Delete(tomb)))
	row(w, "  ListKeys()", plain.ListKeys())

	// An informer's store uses DeletionHandlingMetaNamespaceKeyFunc.
	// Delete(tomb) works, and no IndexFunc sees the tombstone: the
	// store un-indexes the object it held under that key.
	store := cache.NewIndexer(cache.DeletionHandlingMetaNamespaceKeyFunc,
		podIndexers())
	if err := store.Add(last); err != nil {
		return err
	}
	fmt.Fprintln(w, "  a store keyed by DeletionHandlingMetaNamespaceKeyFunc (an informer's)")
	row(w, "  Delete(tomb)", errText(store.Delete(tomb)))
	row(w, "  ListKeys()", store.ListKeys())
	row(w, "  IndexKeys(app, web)", either(store.IndexKeys(byApp, "web")))
	return nil
}

// !+podFrom
// podFrom is the type switch every delete handler needs.
func podFrom(obj any) (*corev1.Pod, bool) {
	switch o := obj.(type) {
	case *corev1.Pod:
		return o, true
	case cache.DeletedFinalStateUnknown:
		p, ok := o.Obj.(*corev1.Pod)
		return p, ok
	}
	return nil, false
}

// !-podFrom

// getPod reads a pod from the store by key.
func getPod(idx cache.Indexer, key string) (*corev1.Pod, error) {
	obj, exists, err := idx.GetByKey(key)
	if err != nil {
		return nil, err
	}
	p, ok := podFrom(obj)
	if !exists || !ok {
		return nil, fmt.Errorf("no pod %s in the store", key)
	}
	return p, nil
}
