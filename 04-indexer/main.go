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
// thread_safe_store.go, shared_informer.go, controller.go.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"

	"github.com/informer-walkthrough/informer-walkthrough/internal/cluster"
	"github.com/informer-walkthrough/informer-walkthrough/internal/runner"
)

func main() { cluster.Main("04-indexer", run) }

// The chapter's index names. cache.NamespaceIndex ("namespace") is
// client-go's own. Names are free strings: they only have to match
// between the Indexers map and the queries.
const (
	byApp   = "app"
	byNode  = "node"
	byImage = "image"
	byNsApp = "namespace/app"
)

// run is the chapter: six numbered steps, each printing a heading.
func run(ctx context.Context, out io.Writer, c *cluster.Cluster) error {
	// Columns line up within each block of lines; every step flushes.
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	var idx cache.Indexer
	steps := []func() error{
		func() (err error) { idx, err = step1(w); return err },
		func() error { return step2(w, idx) },
		func() error { return step3(w, idx) },
		func() error { return step4(w, idx) },
		func() error { return step5(ctx, w, c) },
		func() error { return step6(w) },
	}
	for _, step := range steps {
		err := step()
		if ferr := w.Flush(); err == nil {
			err = ferr
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// Step 1. An Indexer is a Store (objects by key) plus one index per
// IndexFunc. NewIndexer takes the key function and the Indexers map.
func step1(w io.Writer) (cache.Indexer, error) {
	fmt.Fprintln(w, "Step 1. An Indexer: a Store plus one index per IndexFunc")

	// MetaNamespaceIndexFunc is client-go's; the other three are ours.
	idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{
		cache.NamespaceIndex: cache.MetaNamespaceIndexFunc,
		byApp:                appIndex,
		byNode:               nodeIndex,
		byImage:              imageIndex,
	})

	// Every Add computes the key and runs every IndexFunc on the pod.
	for _, p := range examplePods() {
		if err := idx.Add(p); err != nil {
			return nil, err
		}
	}

	names := slices.Sorted(maps.Keys(idx.GetIndexers()))
	fmt.Fprintf(w, "  indexers: %s\n", strings.Join(names, " "))
	fmt.Fprintln(w, "  pods (ListKeys has no order; sorted here):")
	fmt.Fprintln(w, "    key\tapp\tnode\timages")
	for _, key := range sorted(idx.ListKeys()) {
		p, err := getPod(idx, key)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(w, "    %s\t%s\t%s\t%s\n", key,
			orDash(p.Labels["app"]), orDash(p.Spec.NodeName),
			strings.Join(images(p), " "))
	}
	return idx, nil
}

// appIndex indexes a pod by its app label. A pod without the label
// yields no value: it is absent from this index, which is not an
// error. An error is for objects the function cannot handle at all,
// and the store panics on it (step 4).
func appIndex(obj any) ([]string, error) {
	p, ok := obj.(*corev1.Pod)
	if !ok {
		return nil, fmt.Errorf("app index: want *v1.Pod, got %T", obj)
	}
	if app, ok := p.Labels["app"]; ok {
		return []string{app}, nil
	}
	return nil, nil
}

// nodeIndex indexes a pod by spec.nodeName; a pod not yet scheduled
// has none and yields no value.
func nodeIndex(obj any) ([]string, error) {
	p, ok := obj.(*corev1.Pod)
	if !ok {
		return nil, fmt.Errorf("node index: want *v1.Pod, got %T", obj)
	}
	if p.Spec.NodeName == "" {
		return nil, nil
	}
	return []string{p.Spec.NodeName}, nil
}

// imageIndex is multi-valued: a pod is filed under every image it
// runs. A repeated value (two containers, one image) is harmless: the
// index holds a set of keys per value.
func imageIndex(obj any) ([]string, error) {
	p, ok := obj.(*corev1.Pod)
	if !ok {
		return nil, fmt.Errorf("image index: want *v1.Pod, got %T", obj)
	}
	return images(p), nil
}

func images(p *corev1.Pod) []string {
	var out []string
	for _, ctr := range p.Spec.Containers {
		out = append(out, ctr.Image)
	}
	return out
}

// Step 2. Queries. Each takes the read lock and looks up the indices;
// none runs over all the objects.
func step2(w io.Writer, idx cache.Indexer) error {
	fmt.Fprintln(w, "Step 2. Queries answered from the indices")

	// ByIndex: the objects whose values include "web".
	web, err := idx.ByIndex(byApp, "web")
	if err != nil {
		return err
	}
	row(w, "ByIndex(app, web)", keysOf(web))

	// IndexKeys: the same lookup, keys only, sorted by client-go.
	onA, err := idx.IndexKeys(byNode, "node-a")
	if err != nil {
		return err
	}
	row(w, "IndexKeys(node, node-a)", onA)

	// ListIndexFuncValues: the values present, in map order.
	row(w, "ListIndexFuncValues(image)",
		sorted(idx.ListIndexFuncValues(byImage)))

	// Index(name, obj) runs the IndexFunc on obj and returns all that
	// share any of its values: api-1 runs api:2.4 and envoy:1.31.
	api, err := getPod(idx, "shop/api-1")
	if err != nil {
		return err
	}
	same, err := idx.Index(byImage, api)
	if err != nil {
		return err
	}
	row(w, "Index(image, shop/api-1)", keysOf(same))

	// An unknown value is an empty answer; an unknown index an error.
	none, err := idx.ByIndex(byApp, "nope")
	row(w, "ByIndex(app, nope)", keysOf(none), errText(err))
	_, err = idx.ByIndex("zone", "a")
	row(w, "ByIndex(zone, a)", errText(err))

	fmt.Fprintln(w, "  the indices: index name -> value -> keys")
	return printIndices(w, idx)
}

// printIndices reads the three maps back through the public API:
// GetIndexers for the names, ListIndexFuncValues for the values,
// IndexKeys for the set of keys under each value.
func printIndices(w io.Writer, idx cache.Indexer) error {
	fmt.Fprintln(w, "    index\tvalue\tkeys")
	for _, name := range slices.Sorted(maps.Keys(idx.GetIndexers())) {
		for i, v := range sorted(idx.ListIndexFuncValues(name)) {
			keys, err := idx.IndexKeys(name, v)
			if err != nil {
				return err
			}
			label := name
			if i > 0 {
				label = "" // each index name once
			}
			fmt.Fprintf(w, "    %s\t%s\t%s\n",
				label, v, strings.Join(keys, " "))
		}
	}
	return nil
}

// Step 3. Upkeep. Every write runs the IndexFuncs on the object the
// store held and on the new one, and moves the key between values.
func step3(w io.Writer, idx cache.Indexer) error {
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
	for _, q := range [][2]string{
		{byApp, "web"}, {byApp, "canary"},
		{byImage, "nginx:1.27"}, {byImage, "nginx:1.28"},
	} {
		keys, err := idx.IndexKeys(q[0], q[1])
		if err != nil {
			return err
		}
		row(w, "  IndexKeys("+q[0]+", "+q[1]+")", keys)
	}

	// Delete: the key leaves every value it had, and a value whose set
	// of keys is empty is removed from the index.
	db1, err := getPod(idx, "blog/db-1")
	if err != nil {
		return err
	}
	if err := idx.Delete(db1); err != nil {
		return err
	}
	fmt.Fprintln(w, "  Delete blog/db-1: values db and node-c are gone")
	row(w, "  ListIndexFuncValues(app)",
		sorted(idx.ListIndexFuncValues(byApp)))
	row(w, "  ListIndexFuncValues(node)",
		sorted(idx.ListIndexFuncValues(byNode)))

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
	fmt.Fprintln(w, "  Mutate cached shop/web-1 (app web -> blue), Update it:")
	stale, err := idx.ByIndex(byApp, "web")
	if err != nil {
		return err
	}
	row(w, "  ByIndex(app, web)", withApp(stale))
	blue, err := idx.ByIndex(byApp, "blue")
	if err != nil {
		return err
	}
	row(w, "  ByIndex(app, blue)", keysOf(blue))

	// Replace swaps in a whole new set of objects, as a relist does,
	// and rebuilds every index from scratch: that also repairs it.
	fresh := []any{
		newPod("shop", "web-1", "blue", "node-a",
			"nginx:1.27", "envoy:1.31"),
		newPod("shop", "web-2", "canary", "node-b",
			"nginx:1.28", "envoy:1.31"),
		newPod("shop", "api-1", "api", "node-a",
			"api:2.4", "envoy:1.31"),
		newPod("blog", "web-1", "web", "node-b", "nginx:1.27"),
	}
	if err := idx.Replace(fresh, ""); err != nil {
		return err
	}
	fmt.Fprintln(w, "  Replace with 4 fresh pods (no shop/job-1):")
	return printIndices(w, idx)
}

// Step 4. AddIndexers on a populated indexer indexes what is there at
// once; a name already in use is refused.
func step4(w io.Writer, idx cache.Indexer) error {
	fmt.Fprintln(w, "Step 4. AddIndexers on a populated indexer")

	// A composite value ("shop/web") answers "app X in namespace Y"
	// with one lookup instead of intersecting two.
	err := idx.AddIndexers(cache.Indexers{byNsApp: nsAppIndex})
	row(w, "AddIndexers(namespace/app)", errText(err))
	row(w, "  ListIndexFuncValues(namespace/app)",
		sorted(idx.ListIndexFuncValues(byNsApp)))
	keys, err := idx.IndexKeys(byNsApp, "shop/canary")
	if err != nil {
		return err
	}
	row(w, "  IndexKeys(namespace/app, shop/canary)", keys)

	// Index names are unique; the whole call is refused.
	err = idx.AddIndexers(cache.Indexers{byApp: appIndex})
	row(w, "AddIndexers(app) again", errText(err))

	// Two panics, pinned by tests in main_test.go, not triggered here.
	fmt.Fprintln(w, "  panics to avoid (pinned in main_test.go):")
	fmt.Fprintln(w, "    NewIndexer(keyFunc, nil), then AddIndexers:")
	fmt.Fprintln(w, "      assignment to entry in nil map;")
	fmt.Fprintln(w, "      pass cache.Indexers{} to mean \"none yet\"")
	fmt.Fprintln(w, "    an IndexFunc that returns an error:")
	fmt.Fprintln(w, "      Add/Update/Delete/Replace panic with it")
	return nil
}

func nsAppIndex(obj any) ([]string, error) {
	p, ok := obj.(*corev1.Pod)
	if !ok {
		return nil, fmt.Errorf("ns/app index: want *v1.Pod, got %T", obj)
	}
	if app, ok := p.Labels["app"]; ok {
		return []string{p.Namespace + "/" + app}, nil
	}
	return nil, nil
}

// Step 5. An informer keeps the same kind of Indexer filled from the
// cluster. Reads are then local: a thousand ByIndex calls send no
// request, where every List does.
func step5(ctx context.Context, w io.Writer, c *cluster.Cluster) error {
	fmt.Fprintln(w, "Step 5. The same indices in an informer, fed by the cluster")
	ctx, cancel := runner.WithTimeout(ctx, 30*time.Second)
	defer cancel()

	// Pods on the server, each gated so no scheduler or kubelet acts.
	// This step indexes by label and image, not by nodeName: a gated
	// pod cannot have a node, and on a real cluster a pod bound to a
	// node that does not exist is garbage-collected.
	pods := c.Client.CoreV1().Pods(c.Namespace)
	for _, p := range []*corev1.Pod{
		newPod("", "web-1", "web", "", "nginx:1.27", "envoy:1.31"),
		newPod("", "web-2", "web", "", "nginx:1.27", "envoy:1.31"),
		newPod("", "api-1", "api", "", "api:2.4", "envoy:1.31"),
	} {
		p.Labels = cluster.Labels("app", p.Labels["app"])
		p.Spec.SchedulingGates = []corev1.PodSchedulingGate{
			{Name: "walkthrough/hold"},
		}
		_, err := pods.Create(ctx, p, metav1.CreateOptions{})
		if err != nil {
			return fmt.Errorf("create pod %s: %w", p.Name, err)
		}
	}
	fmt.Fprintf(w, "  created pods web-1 web-2 api-1 in %s\n", c.Namespace)
	c.ResetRequests()

	// The ListWatch sees only the course's own pods.
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context,
			o metav1.ListOptions) (runtime.Object, error) {
			o.LabelSelector = cluster.OwnSelector
			return pods.List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context,
			o metav1.ListOptions) (watch.Interface, error) {
			o.LabelSelector = cluster.OwnSelector
			return pods.Watch(ctx, o)
		},
	}
	// The informer's store is NewIndexer(DeletionHandlingMeta-
	// NamespaceKeyFunc, these Indexers): the machine of steps 1-4.
	inf := cache.NewSharedIndexInformer(lw, &corev1.Pod{}, 0,
		cache.Indexers{
			cache.NamespaceIndex: cache.MetaNamespaceIndexFunc,
			byApp:                appIndex,
		})

	// A handler tells us when the informer has seen our patch. It is
	// called after the store was updated (processDeltas).
	canary := make(chan struct{})
	var once sync.Once
	_, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		UpdateFunc: func(_, obj any) {
			p, ok := obj.(*corev1.Pod)
			if ok && p.Name == "web-2" && p.Labels["app"] == "canary" {
				once.Do(func() { close(canary) })
			}
		},
	})
	if err != nil {
		return err
	}

	// Run until stopped; run waits for it to return.
	infCtx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { inf.RunWithContext(infCtx) })
	defer func() { stop(); wg.Wait() }()

	if !cache.WaitFor(ctx, "", inf.HasSyncedChecker()) {
		return errors.New("the informer did not sync")
	}
	fmt.Fprintln(w, "  informer synced; the requests it sent:")
	for _, r := range c.Requests() {
		fmt.Fprintf(w, "    %s %s%s\n",
			r.Verb, r.Resource, watchList(r.Query))
	}
	idx := inf.GetIndexer()

	// A thousand reads from the cache: the request log does not move.
	before := len(c.Requests())
	var web []any
	for range 1000 {
		if web, err = idx.ByIndex(byApp, "web"); err != nil {
			return err
		}
	}
	fmt.Fprintf(w, "  ByIndex(app, web) x1000\t%s\trequests %d -> %d\n",
		strings.Join(namesOf(web), " "), before, len(c.Requests()))

	// The same question asked of the server: a request per call.
	sel := metav1.ListOptions{
		LabelSelector: "app=web," + cluster.OwnSelector,
	}
	before = len(c.Requests())
	var list *corev1.PodList
	for range 3 {
		if list, err = pods.List(ctx, sel); err != nil {
			return err
		}
	}
	var listed []string
	for _, p := range list.Items {
		listed = append(listed, p.Name)
	}
	fmt.Fprintf(w, "  List(app=web) x3\t%s\trequests %d -> %d\n",
		strings.Join(sorted(listed), " "), before, len(c.Requests()))

	// AddIndexers on a running informer (allowed since client-go
	// v0.30): the objects already cached are indexed at once.
	err = inf.AddIndexers(cache.Indexers{byImage: imageIndex})
	row(w, "AddIndexers(image) while running", errText(err))
	envoy, err := idx.ByIndex(byImage, "envoy:1.31")
	if err != nil {
		return err
	}
	row(w, "ByIndex(image, envoy:1.31)", namesOf(envoy))

	// A change on the server reaches the index through the watch.
	patch := []byte(`{"metadata":{"labels":{"app":"canary"}}}`)
	_, err = pods.Patch(ctx, "web-2", types.MergePatchType, patch,
		metav1.PatchOptions{})
	if err != nil {
		return fmt.Errorf("patch web-2: %w", err)
	}
	select {
	case <-canary:
	case <-ctx.Done():
		return errors.New("the informer did not see the patch")
	}
	fmt.Fprintln(w, "  patched web-2 to app=canary; the watch brought it:")
	for _, app := range []string{"web", "canary"} {
		objs, err := idx.ByIndex(byApp, app)
		if err != nil {
			return err
		}
		row(w, "  ByIndex(app, "+app+")", namesOf(objs))
	}

	stop()
	wg.Wait()
	fmt.Fprintln(w, "  informer stopped")
	return nil
}

// watchList marks a watch that asked for the initial list too.
func watchList(q map[string][]string) string {
	if slices.Contains(q["sendInitialEvents"], "true") {
		return " (watch-list: the initial list comes on the watch)"
	}
	return ""
}

// Step 6. Keys for tombstones. When a relist finds an object gone, the
// informer hands OnDelete a DeletedFinalStateUnknown: not an API
// object, just the key and the last state the informer knew. Whether
// the informer's store is handed one too depends on the queue.
func step6(w io.Writer) error {
	fmt.Fprintln(w, "Step 6. Key functions and the DeletedFinalStateUnknown tombstone")
	last := newPod("shop", "web-1", "web", "node-a", "nginx:1.27")
	tomb := cache.DeletedFinalStateUnknown{Key: "shop/web-1", Obj: last}
	fmt.Fprintln(w, "  tomb = DeletedFinalStateUnknown{Key: shop/web-1, Obj: pod}")

	// MetaNamespaceKeyFunc needs object metadata; a tombstone has none.
	fmt.Fprintln(w, "  MetaNamespaceKeyFunc")
	k, err := cache.MetaNamespaceKeyFunc(last)
	if err != nil {
		return err
	}
	row(w, "  (pod)", k)
	_, err = cache.MetaNamespaceKeyFunc(tomb)
	row(w, "  (tomb)", errText(err))

	// The DeletionHandling variant returns the key the tombstone holds.
	fmt.Fprintln(w, "  DeletionHandlingMetaNamespaceKeyFunc")
	k, err = cache.DeletionHandlingMetaNamespaceKeyFunc(tomb)
	if err != nil {
		return err
	}
	row(w, "  (tomb)", k)

	// Every OnDelete handler may get a tombstone: unwrap it.
	fmt.Fprintln(w, "  an OnDelete handler unwraps it")
	p, ok := podFrom(tomb)
	if !ok {
		return errors.New("podFrom: no pod in the tombstone")
	}
	row(w, "  podFrom(tomb)", p.Namespace+"/"+p.Name+" (last known state)")

	// The store. With AtomicFIFO (beta, on by default) a relist reaches
	// the informer as one ReplacedAll: the store is Replaced wholesale
	// and the tombstone goes to OnDelete alone. With AtomicFIFO off (or
	// a hand-built DeltaFIFO) the queue makes the tombstone a Deleted
	// delta, and the informer calls store.Delete(tomb) before OnDelete.
	// TestRelistTombstone in main_test.go shows both on a real informer.
	fmt.Fprintln(w, "  only with AtomicFIFO off does an informer's store get Delete(tomb)")
	fmt.Fprintln(w, "  (on, the default: a relist Replaces the store; OnDelete gets the tomb)")

	// A store keyed by MetaNamespaceKeyFunc cannot delete by tomb:
	// Delete returns a KeyError. Its message prints the tombstone, a
	// pointer included, so the chapter prints only that it is one.
	plain := cache.NewIndexer(cache.MetaNamespaceKeyFunc, podIndexers())
	if err := plain.Add(last); err != nil {
		return err
	}
	fmt.Fprintln(w, "  a store keyed by MetaNamespaceKeyFunc")
	var keyErr cache.KeyError
	if err := plain.Delete(tomb); errors.As(err, &keyErr) {
		row(w, "  Delete(tomb)", "KeyError")
	} else {
		row(w, "  Delete(tomb)", errText(err))
	}
	row(w, "  ListKeys()", plain.ListKeys())

	// An informer's store uses DeletionHandlingMetaNamespaceKeyFunc.
	// Delete(tomb) works, and no IndexFunc sees the tombstone: the
	// store un-indexes the object it held under that key.
	inf := cache.NewIndexer(cache.DeletionHandlingMetaNamespaceKeyFunc,
		podIndexers())
	if err := inf.Add(last); err != nil {
		return err
	}
	fmt.Fprintln(w, "  a store keyed by DeletionHandlingMetaNamespaceKeyFunc (an informer's)")
	row(w, "  Delete(tomb)", errText(inf.Delete(tomb)))
	row(w, "  ListKeys()", inf.ListKeys())
	web, err := inf.IndexKeys(byApp, "web")
	if err != nil {
		return err
	}
	row(w, "  IndexKeys(app, web)", web)
	return nil
}

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

func podIndexers() cache.Indexers {
	return cache.Indexers{
		cache.NamespaceIndex: cache.MetaNamespaceIndexFunc,
		byApp:                appIndex,
		byImage:              imageIndex,
	}
}

// examplePods are the in-memory pods of steps 1 to 4: two namespaces,
// three nodes, three apps and a pod with neither app label nor node.
// They never reach a server, so they carry no course label.
func examplePods() []*corev1.Pod {
	return []*corev1.Pod{
		newPod("shop", "web-1", "web", "node-a", "nginx:1.27", "envoy:1.31"),
		newPod("shop", "web-2", "web", "node-b", "nginx:1.27", "envoy:1.31"),
		newPod("shop", "api-1", "api", "node-a", "api:2.4", "envoy:1.31"),
		newPod("shop", "job-1", "", "", "busybox:1.37"),
		newPod("blog", "web-1", "web", "node-b", "nginx:1.27"),
		newPod("blog", "db-1", "db", "node-c", "postgres:17"),
	}
}

func newPod(ns, name, app, node string, imgs ...string) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       corev1.PodSpec{NodeName: node},
	}
	if app != "" {
		p.Labels = map[string]string{"app": app}
	}
	for i, img := range imgs {
		p.Spec.Containers = append(p.Spec.Containers, corev1.Container{
			Name: fmt.Sprintf("c%d", i), Image: img,
		})
	}
	return p
}

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

// row prints "  what<TAB>result": the tabwriter aligns the results of
// consecutive rows. A []string result is joined, "(none)" if empty.
func row(w io.Writer, what string, result ...any) {
	var parts []string
	for _, r := range result {
		switch r := r.(type) {
		case []string:
			if len(r) == 0 {
				parts = append(parts, "(none)")
			} else {
				parts = append(parts, strings.Join(r, " "))
			}
		default:
			parts = append(parts, fmt.Sprint(r))
		}
	}
	fmt.Fprintf(w, "  %s\t%s\n", what, strings.Join(parts, ", "))
}

// errText is "no error" or "error: ...".
func errText(err error) string {
	if err == nil {
		return "no error"
	}
	return "error: " + err.Error()
}

// keysOf returns the sorted keys of objs. ByIndex and Index return
// objects in map order, so the chapter sorts what it prints.
func keysOf(objs []any) []string {
	keys := make([]string, 0, len(objs))
	for _, obj := range objs {
		k, err := cache.MetaNamespaceKeyFunc(obj)
		if err != nil {
			k = "?"
		}
		keys = append(keys, k)
	}
	return sorted(keys)
}

// withApp is keysOf with the app label each object carries now.
func withApp(objs []any) []string {
	var out []string
	for _, obj := range objs {
		if p, ok := podFrom(obj); ok {
			out = append(out, p.Namespace+"/"+p.Name+
				"(app="+p.Labels["app"]+")")
		}
	}
	return sorted(out)
}

// namesOf returns the sorted names of pods.
func namesOf(objs []any) []string {
	var names []string
	for _, obj := range objs {
		if p, ok := podFrom(obj); ok {
			names = append(names, p.Name)
		}
	}
	return sorted(names)
}

func sorted(s []string) []string {
	slices.Sort(s)
	return s
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
