// Chapter 06-factory: the shared informer factory, listers, and sharing you can see.
//
// This is how almost every program uses informers: a factory hands out
// one informer per type, however many parts of the program ask for it;
// listers read its cache; Start and WaitForCacheSync run it. The chapter
// shows the sharing in the request log, the factory's options, the
// pitfalls people hit, and what a resync really is: a replay from memory.
// handlers.go: step 1's event handlers, in both styles; objects.go: the
// objects the steps look at; observe.go: the lines printed from what the
// course's taps (internal/tap) record, and the rest of the show.
//
// Read alongside (client-go v0.37.2): informers/factory.go, generic.go,
// core/v1/pod.go; listers/generic_helpers.go; tools/cache/shared_informer.go.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	corev1informers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/cache"

	"github.com/informer-walkthrough/informer-walkthrough/internal/cluster"
	"github.com/informer-walkthrough/informer-walkthrough/internal/fixture"
	"github.com/informer-walkthrough/informer-walkthrough/internal/show"
	"github.com/informer-walkthrough/informer-walkthrough/internal/tap"
)

func main() { cluster.Main("06-factory", run) }

// run is the chapter: a setup, then five steps, each printing a heading.
// Every step builds its own factory and stops it before it returns.
func run(ctx context.Context, out io.Writer, c *cluster.Cluster) error {
	for _, step := range []cluster.RunFunc{
		setup,    // (objects.go) two paused deployments, three gated pods
		basics,   // 1. informers, handlers, Start, WaitForCacheSync, listers
		sharing,  // 2. three consumers, one informer, one watch
		options,  // 3. namespace, label selector, transform; ForResource
		pitfalls, // 4. four mistakes, each made visible
		resync,   // 5. a replay of the cache, per handler, no requests
	} {
		if err := step(ctx, out, c); err != nil {
			return err
		}
	}
	return nil
}

// basics uses the factory as tutorials do: informers, handlers, Start, listers.
func basics(ctx context.Context, out io.Writer, c *cluster.Cluster) error {
	fmt.Fprintln(out, "\nStep 1. A factory: informers, handlers, Start, listers")
	// The context stops the informers; Shutdown waits until they have
	// stopped. Defers run last-in first-out: cancel first (step 4d).
	// !+shutdown
	ctx, cancel := context.WithCancel(ctx)
	factory := informers.NewSharedInformerFactoryWithOptions(
		c.Client, 0, informers.WithNamespace(c.Namespace))
	defer factory.Shutdown() // runs second
	defer cancel()           // runs first
	// !-shutdown

	// !+start
	// Deployments() and Pods() are cheap accessors. The informer is made,
	// once per type, by the first Informer(), TypedInformer() or Lister().
	deployments := factory.Apps().V1().Deployments()
	pods := factory.Core().V1().Pods()
	report := tap.Handler{Rec: tap.NewRecorder(ctx)} // what the handlers act on
	depReg, err1 := deployments.Informer().AddEventHandler(deploymentHandler(report))
	podReg, err2 := pods.TypedInformer().AddTypedEventHandler(podHandler(report))
	if err := errors.Join(err1, err2); err != nil {
		return err
	}

	// Start runs every informer made so far and returns at once. WaitForCacheSync
	// waits for each started one's first full list: false if ctx ended first.
	factory.Start(ctx.Done())
	synced := factory.WaitForCacheSync(ctx.Done())
	// !-start
	fmt.Fprintf(out, "  WaitForCacheSync: %s\n", syncedString(synced))
	for typ, ok := range synced {
		if !ok {
			return fmt.Errorf("cache of %v did not sync", typ)
		}
	}

	// A synced informer does not mean a handler has been given the
	// initial list yet: the registration's HasSynced says that.
	if !cache.WaitFor(ctx, "", depReg.HasSyncedChecker(), podReg.HasSyncedChecker()) {
		return fmt.Errorf("handlers did not sync: %w", context.Cause(ctx))
	}
	show.Under(out, "  the handlers got the initial list (in no defined order; sorted here):",
		drainLines(report.Rec))

	// Listers read the informer's cache, never the server. A miss is a
	// NotFound error, as from the API.
	depLister := deployments.Lister().Deployments(c.Namespace)
	podLister := pods.Lister().Pods(c.Namespace)
	ds, err1 := depLister.List(labels.Everything())
	web, err2 := depLister.Get("web")
	ps, err3 := podLister.List(labels.SelectorFromSet(labels.Set{"app": "web"}))
	_, notFound := podLister.Get("web-9")
	if err := errors.Join(err1, err2, err3); err != nil {
		return err
	}
	printListerReads(out, ds, web, ps, notFound)

	// Changes arrive through the handlers. A paused deployment does not
	// roll out a new pod template: no ReplicaSet, no pods.
	fmt.Fprintln(out, "  changes arrive through the handlers:")
	events := report.Rec.CallLines(handlerLine)
	image := `{"spec":{"template":{"spec":{"containers":[{"name":"web","image":"nginx:1.28"}]}}}}`
	_, err := c.Client.AppsV1().Deployments(c.Namespace).Patch(ctx, "web",
		types.StrategicMergePatchType, []byte(image), metav1.PatchOptions{})
	if err != nil {
		return err
	}
	if err := show.Next(ctx, out, show.Block{Heading: "    patch deployment/web image nginx:1.28", Indent: "    ", From: events, N: 1}); err != nil {
		return err
	}
	podClient := c.Client.CoreV1().Pods(c.Namespace)
	web3 := fixture.GatedPod("web-3", cluster.Labels("app", "web"))
	if _, err := podClient.Create(ctx, web3, metav1.CreateOptions{}); err != nil {
		return err
	}
	if err := podClient.Delete(ctx, "web-2", metav1.DeleteOptions{}); err != nil {
		return err
	}
	// ADDED, then the two steps of a deletion.
	return show.Next(ctx, out, show.Block{Heading: "    create pod/web-3, delete pod/web-2", Indent: "    ", From: events, N: 3})
}

// sharing: three consumers get one informer and one watch; three informers, three.
func sharing(ctx context.Context, out io.Writer, c *cluster.Cluster) error {
	fmt.Fprintln(out, "\nStep 2. Sharing: three consumers, one informer, one watch")
	ctx, cancel := context.WithCancel(ctx)
	factory := informers.NewSharedInformerFactoryWithOptions(
		c.Client, 0, informers.WithNamespace(c.Namespace))
	var wg sync.WaitGroup // the informers built without the factory, below
	defer wg.Wait()
	defer factory.Shutdown()
	defer cancel()

	// Three parts of a program, written without knowing of each other,
	// each ask the factory for the pod informer and add a handler. The
	// factory keeps one informer per Go type: all three get the same.
	// Each adds a reporting handler (internal/tap) that says its name.
	consumers := []string{"audit", "metrics", "cleanup"}
	rec := tap.NewRecorder(ctx)
	var infs []cache.SharedIndexInformer
	var regs []cache.DoneChecker
	for _, name := range consumers {
		inf := factory.Core().V1().Pods().Informer()
		reg, err := inf.AddEventHandler(tap.Handler{Rec: rec, Name: name})
		if err != nil {
			return err
		}
		infs = append(infs, inf)
		regs = append(regs, reg.HasSyncedChecker())
	}
	// Informer() wraps the informer in a new view each call: compare the caches.
	sameCache := infs[0].GetStore() == infs[1].GetStore() && infs[1].GetStore() == infs[2].GetStore()
	sameInformer := infs[0] == infs[1] && infs[1] == infs[2]
	printShared(out, sameCache, sameInformer)

	c.ResetRequests()
	factory.Start(ctx.Done())
	// WaitForCacheSyncWithContext is the newer form: AsError checks the map.
	if err := factory.WaitForCacheSyncWithContext(ctx).AsError(); err != nil {
		return err
	}
	if !cache.WaitFor(ctx, "", regs...) {
		return fmt.Errorf("handlers did not sync: %w", context.Cause(ctx))
	}
	fmt.Fprintf(out, "  initial ADDED events: %s\n", countEach(rec.Drain(), consumers))
	reqs := show.Brief(c.Requests(), show.ListsAndWatchesOf("pods"))
	show.Under(out, fmt.Sprintf("  requests for pods: %d", len(reqs)), reqs)

	// The contrast: three informers built directly, bypassing the factory.
	// Each lists and watches on its own, and keeps its own copy of every pod.
	c.ResetRequests()
	var checks []cache.DoneChecker
	for range 3 {
		inf := corev1informers.NewPodInformer(c.Client, c.Namespace, 0, cache.Indexers{})
		wg.Go(func() { inf.RunWithContext(ctx) })
		checks = append(checks, inf.HasSyncedChecker())
	}
	if !cache.WaitFor(ctx, "", checks...) {
		return fmt.Errorf("independent informers did not sync: %w", context.Cause(ctx))
	}
	reqs = show.Brief(c.Requests(), show.ListsAndWatchesOf("pods"))
	show.Under(out, fmt.Sprintf("  three NewPodInformer, requests for pods: %d", len(reqs)), reqs)
	return nil
}

// options shows what applies to every informer of a factory, and
// ForResource, for a resource named only at run time.
func options(ctx context.Context, out io.Writer, c *cluster.Cluster) error {
	fmt.Fprintln(out, "\nStep 3. Factory options; ForResource")
	ctx, cancel := context.WithCancel(ctx)

	// WithNamespace: watch one namespace. WithTweakListOptions: edit every
	// list and watch request, here to add a label selector the server
	// applies. WithTransform: edit every object before it is cached.
	factory := informers.NewSharedInformerFactoryWithOptions(c.Client, 0,
		informers.WithNamespace(c.Namespace),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = "app=web" }),
		informers.WithTransform(dropPodSpec),
	)
	defer factory.Shutdown()
	defer cancel()

	// ForResource takes a resource known only at run time and returns its
	// shared informer with a GenericLister; it knows only built-in types.
	gvr, _ := schema.ParseResourceArg("deployments.v1.apps")
	generic, err := factory.ForResource(*gvr)
	if err != nil {
		return err
	}
	typed := factory.Apps().V1().Deployments().Informer()
	sameCache := generic.Informer().GetStore() == typed.GetStore()
	widgets := schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}
	_, unknown := factory.ForResource(widgets)
	printForResource(out, *gvr, sameCache, widgets, unknown)
	pods := factory.Core().V1().Pods()
	pods.Informer() // Pods() alone makes nothing: make the informer before Start

	c.ResetRequests()
	factory.Start(ctx.Done())
	if err := factory.WaitForCacheSyncWithContext(ctx).AsError(); err != nil {
		return err
	}
	// Two informers start at once: their requests come in no fixed order
	// (show.Brief sorts them).
	reqs := show.Brief(c.Requests(), show.ListsAndWatchesOf("deployments.apps", "pods"))
	show.Under(out, fmt.Sprintf("  requests (the server applies the selector): %d", len(reqs)), reqs)

	podLister := pods.Lister().Pods(c.Namespace)
	objs, err1 := generic.Lister().ByNamespace(c.Namespace).List(labels.Everything())
	ps, err2 := podLister.List(labels.Everything())
	cached, err3 := podLister.Get("web-1")
	live, err4 := c.Client.CoreV1().Pods(c.Namespace).Get(ctx, "web-1", metav1.GetOptions{})
	if err := errors.Join(err1, err2, err3, err4); err != nil {
		return err
	}
	printTransformed(out, objs, ps, live, cached)
	return nil
}

// dropPodSpec is a transform: it runs on every object before it enters
// the cache. This program reads only the metadata of pods, so it drops
// the rest. A transform sees every type the factory makes: pass others.
func dropPodSpec(obj any) (any, error) {
	if p, ok := obj.(*corev1.Pod); ok {
		p.Spec = corev1.PodSpec{}
		p.ManagedFields = nil
	}
	return obj, nil
}

// pitfalls makes four mistakes visible.
func pitfalls(ctx context.Context, out io.Writer, c *cluster.Cluster) error {
	fmt.Fprintln(out, "\nStep 4. Pitfalls")
	ctx, cancel := context.WithCancel(ctx)

	// 4c holds one change back on its way into the cache: a transform
	// runs before the cache is written, and the course's (internal/tap)
	// can hold a call there. (Never block in a real transform.)
	rec := tap.NewRecorder(ctx)
	factory := informers.NewSharedInformerFactoryWithOptions(c.Client, 0,
		informers.WithNamespace(c.Namespace), informers.WithTransform(tap.Transform(rec, nil)))
	defer factory.Shutdown() // 4d calls it too: Shutdown may be called more than once
	defer cancel()

	deployments := factory.Apps().V1().Deployments()
	inf := deployments.Informer() // make it now, so that Start runs it
	pods := factory.Core().V1().Pods()
	// A reporting handler (internal/tap): 4c waits until it sees a write.
	if _, err := pods.Informer().AddEventHandler(tap.Handler{Rec: rec}); err != nil {
		return err
	}
	factory.Start(ctx.Done())
	if err := factory.WaitForCacheSyncWithContext(ctx).AsError(); err != nil {
		return err
	}

	// 4a. The client's decoder clears kind and apiVersion; the scheme maps
	// the Go type back to them. (Set them on a copy: the cache is shared.)
	fmt.Fprintln(out, "  4a. objects from a lister have no kind or apiVersion")
	web, err1 := deployments.Lister().Deployments(c.Namespace).Get("web")
	gvks, _, err2 := scheme.Scheme.ObjectKinds(web)
	if err := errors.Join(err1, err2); err != nil {
		return err
	}
	printKinds(out, web, gvks[0])

	// 4b. Start runs the informers made so far. One made later does not
	// run, and WaitForCacheSync, which waits only for started ones, ignores it.
	fmt.Fprintln(out, "  4b. an informer made after Start runs only after another Start")
	c.ResetRequests()
	cms := factory.Core().V1().ConfigMaps().Informer()
	synced := factory.WaitForCacheSync(ctx.Done())
	printLate(out, "ConfigMaps(): ", synced, cms.HasSynced(), show.Brief(c.Requests(), show.ListsAndWatchesOf("configmaps")))
	factory.Start(ctx.Done())
	synced = factory.WaitForCacheSync(ctx.Done())
	printLate(out, "Start again:  ", synced, cms.HasSynced(), show.Brief(c.Requests(), show.ListsAndWatchesOf("configmaps")))

	// 4c. The cache has a write only once its watch event is processed: a
	// lister read right after it may get the old object (with the gate, always).
	fmt.Fprintln(out, "  4c. reading your own write through the cache can be stale")
	// The patch below labels the pod tier=gold: hold its transform.
	gate := rec.Hold(1, tierGold)
	defer gate.Open() // if the step fails, let it go
	patched, err := c.Client.CoreV1().Pods(c.Namespace).Patch(ctx, "web-1",
		types.StrategicMergePatchType, []byte(`{"metadata":{"labels":{"tier":"gold"}}}`),
		metav1.PatchOptions{})
	if err != nil {
		return err
	}
	if err := await(ctx, rec, held); err != nil { // the event is in the informer, not its cache
		return err
	}
	podLister := pods.Lister().Pods(c.Namespace)
	stale, err1 := podLister.Get("web-1")
	gate.Release()
	// A handler is called after the cache is written: once it has seen
	// our resourceVersion, the lister has it too.
	if err := await(ctx, rec, updatedTo(patched)); err != nil {
		return err
	}
	fresh, err2 := podLister.Get("web-1")
	if err := errors.Join(err1, err2); err != nil {
		return err
	}
	printOwnWrite(out, patched, stale, fresh)

	// 4d. Shutdown waits for the informers, which return only when their
	// context ends: defer Shutdown before cancel (defers run last-in first-out).
	fmt.Fprintln(out, "  4d. Shutdown waits for the informers; only cancel stops them")
	var wg sync.WaitGroup
	var returned atomic.Bool
	wg.Go(func() { factory.Shutdown(); returned.Store(true) })
	printStopped(out, "Shutdown() first:", returned.Load(), inf.IsStopped())
	cancel()
	wg.Wait()
	printStopped(out, "then cancel():   ", returned.Load(), inf.IsStopped())
	_, err = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{})
	fmt.Fprintf(out, "    AddEventHandler on a stopped informer fails: %t\n", err != nil)
	return nil
}

// resync shows a resync, per factory or handler: a replay of the cache, no requests.
func resync(ctx context.Context, out io.Writer, c *cluster.Cluster) error {
	fmt.Fprintln(out, "\nStep 5. Resync: a replay of the cache, per handler, no requests")
	ctx, cancel := context.WithCancel(ctx)

	// !+resync
	// The factory's resync period is every handler's default; a handler
	// may ask for its own (at least 1 s: this step takes a second). A
	// factory with resync 0 never resyncs, whatever its handlers ask for
	// (client-go logs a warning on stderr).
	factory := informers.NewSharedInformerFactoryWithOptions(c.Client,
		10*time.Minute, informers.WithNamespace(c.Namespace))
	noResync := informers.NewSharedInformerFactoryWithOptions(c.Client,
		0, informers.WithNamespace(c.Namespace))
	defer noResync.Shutdown()
	defer factory.Shutdown()
	defer cancel()

	// Three reporting handlers (internal/tap), each with its own recorder.
	quiet, eager := reporter(ctx, "quiet"), reporter(ctx, "eager")
	ignored := reporter(ctx, "ignored")
	pods := factory.Core().V1().Pods().Informer()
	_, err1 := pods.AddEventHandler(quiet)
	_, err2 := pods.AddEventHandlerWithResyncPeriod(eager, time.Second)
	_, err3 := noResync.Core().V1().Pods().Informer().
		AddEventHandlerWithResyncPeriod(ignored, time.Second)
	// !-resync
	if err := errors.Join(err1, err2, err3); err != nil {
		return err
	}
	fmt.Fprintln(out, "  factory resync 10m: handler quiet (the default), eager (1s)")
	fmt.Fprintln(out, "  factory resync 0:   handler ignored (asks for 1s)")
	factory.Start(ctx.Done())
	noResync.Start(ctx.Done())
	if err := errors.Join(factory.WaitForCacheSyncWithContext(ctx).AsError(),
		noResync.WaitForCacheSyncWithContext(ctx).AsError()); err != nil {
		return err
	}

	// A resync hands every cached object to the handlers due one, as
	// OnUpdate(obj, obj): nothing is fetched, the request log stays empty.
	c.ResetRequests()
	n := len(pods.GetStore().List())
	if err := printResync(ctx, out, eager.Rec, n); err != nil {
		return err
	}
	fmt.Fprintf(out, "  requests sent for the resync: %d\n", len(c.Requests()))

	// The other handlers got no resync: their first update is a change.
	patched, err := c.Client.CoreV1().Pods(c.Namespace).Patch(ctx, "web-1",
		types.StrategicMergePatchType, []byte(`{"metadata":{"labels":{"tier":"silver"}}}`),
		metav1.PatchOptions{})
	if err != nil {
		return err
	}
	return printFirstUpdates(ctx, out, patched, quiet.Rec, eager.Rec, ignored.Rec)
}
