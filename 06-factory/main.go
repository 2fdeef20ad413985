// Chapter 06-factory: the shared informer factory, listers, and sharing
// you can see.
//
// This is how almost every program uses informers: a factory hands out
// one informer per type, however many parts of the program ask for it;
// listers read its cache; Start and WaitForCacheSync run it. The chapter
// shows the sharing in the request log, the factory's options (namespace,
// label selector, transform, ForResource), the pitfalls people hit, and
// what a resync really is: a replay from memory, with no request at all.
//
// Read alongside (client-go v0.37.2): informers/factory.go,
// informers/generic.go, informers/core/v1/pod.go,
// listers/generic_helpers.go, tools/cache/shared_informer.go.
package main

import (
	"context"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	corev1informers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	"github.com/informer-walkthrough/informer-walkthrough/internal/apiserver"
	"github.com/informer-walkthrough/informer-walkthrough/internal/cluster"
	"github.com/informer-walkthrough/informer-walkthrough/internal/runner"
)

func main() { cluster.Main("06-factory", run) }

// run is the chapter: a setup, then five steps, each printing a heading.
// Every step builds its own factory and stops it before it returns.
func run(ctx context.Context, out io.Writer, c *cluster.Cluster) error {
	// No step may wait forever: if an expected event never comes, fail
	// with an error instead of hanging.
	ctx, cancel := runner.WithTimeout(ctx, 30*time.Second)
	defer cancel()

	// Setup. Two deployments and three pods. The deployments are paused
	// with 0 replicas and the pods carry a scheduling gate, so on a real
	// cluster no controller, scheduler or kubelet acts on them.
	if err := setup(ctx, out, c); err != nil {
		return err
	}

	// Step 1. The factory as tutorials use it: typed informers and
	// listers, event handlers, Start, WaitForCacheSync, lister queries.
	if err := basics(ctx, out, c); err != nil {
		return err
	}

	// Step 2. Sharing. Three consumers ask the factory for the pod
	// informer and get one informer: one watch in the request log.
	// Three independent informers make three.
	if err := sharing(ctx, out, c); err != nil {
		return err
	}

	// Step 3. Options that apply to every informer of a factory:
	// namespace, label selector, transform. And ForResource, for a
	// resource named only at run time.
	if err := options(ctx, out, c); err != nil {
		return err
	}

	// Step 4. Four pitfalls, each made visible.
	if err := pitfalls(ctx, out, c); err != nil {
		return err
	}

	// Step 5. Resync, set on the factory or per handler: a replay of
	// the cache, with no request to the API server.
	return resync(ctx, out, c)
}

// setup creates the objects every step looks at.
func setup(ctx context.Context, out io.Writer, c *cluster.Cluster) error {
	fmt.Fprintln(out, "Setup. Two paused deployments, three gated pods")
	deploys := c.Client.AppsV1().Deployments(c.Namespace)
	for _, d := range []*appsv1.Deployment{
		newDeployment("web", "nginx:1.27"),
		newDeployment("api", "httpd:2.4"),
	} {
		d, err := deploys.Create(ctx, d, metav1.CreateOptions{})
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "  created deployment/%s  gen=%d  rv=%s\n",
			d.Name, d.Generation, d.ResourceVersion)
	}
	pods := c.Client.CoreV1().Pods(c.Namespace)
	for _, p := range []*corev1.Pod{
		newPod("web-1", "web"), newPod("web-2", "web"),
		newPod("api-1", "api"),
	} {
		p, err := pods.Create(ctx, p, metav1.CreateOptions{})
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "  created pod/%s  rv=%s\n", p.Name, p.ResourceVersion)
	}
	return nil
}

// basics is step 1.
func basics(ctx context.Context, out io.Writer, c *cluster.Cluster) error {
	fmt.Fprintln(out, "\nStep 1. A factory: informers, handlers, Start, listers")

	// The context stops the informers; Shutdown waits until they have
	// stopped. Defers run last-in first-out, so cancel runs first: the
	// other order never returns (step 4d).
	ctx, cancel := context.WithCancel(ctx)
	// Tutorials write informers.NewSharedInformerFactory(client, 0),
	// which watches every namespace. We stay in ours (see step 3).
	factory := informers.NewSharedInformerFactoryWithOptions(
		c.Client, 0, informers.WithNamespace(c.Namespace))
	defer factory.Shutdown()
	defer cancel()

	// Deployments() and Pods() are cheap accessors. The informer
	// itself is made, once per type, by the first Informer(),
	// TypedInformer() or Lister() call; nothing runs yet.
	deployments := factory.Apps().V1().Deployments()
	pods := factory.Core().V1().Pods()

	// Handlers run on the informers' goroutines. They do not print:
	// they send a line to run, which prints in an order it controls.
	depEvents := make(chan string, 64)
	depReg, err := deployments.Informer().AddEventHandler(
		deploymentHandler(ctx, depEvents))
	if err != nil {
		return err
	}
	podEvents := make(chan string, 64)
	podReg, err := pods.TypedInformer().AddTypedEventHandler(
		podHandler(ctx, podEvents))
	if err != nil {
		return err
	}

	// Start runs every informer made so far, each on its own
	// goroutines, and returns at once.
	factory.Start(ctx.Done())

	// WaitForCacheSync blocks until each started informer has its
	// first full list, and returns a map. Check it: false means the
	// context ended first.
	synced := factory.WaitForCacheSync(ctx.Done())
	fmt.Fprintf(out, "  WaitForCacheSync: %s\n", syncedString(synced))
	for typ, ok := range synced {
		if !ok {
			return fmt.Errorf("cache of %v did not sync", typ)
		}
	}

	// A synced informer does not mean a handler has been given the
	// initial list yet: the registration's HasSynced says that.
	if !cache.WaitFor(ctx, "", depReg.HasSyncedChecker(),
		podReg.HasSyncedChecker()) {
		return fmt.Errorf("handlers did not sync: %w", context.Cause(ctx))
	}
	fmt.Fprintln(out, "  the handlers got the initial list"+
		" (in no defined order; sorted here):")
	printLines(out, append(drain(depEvents), drain(podEvents)...))

	// Listers read the informer's cache, never the server.
	// Deployments(ns) narrows to a namespace, a selector to labels.
	fmt.Fprintln(out, "  listers read the cache:")
	depLister := deployments.Lister().Deployments(c.Namespace)
	ds, err := depLister.List(labels.Everything())
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "    %-32s %s\n",
		"Deployments(ns).List(everything)", names(ds))
	web, err := depLister.Get("web")
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "    %-32s gen=%d paused=%t replicas=%d image=%s\n",
		`Deployments(ns).Get("web")`, web.Generation, web.Spec.Paused,
		*web.Spec.Replicas, web.Spec.Template.Spec.Containers[0].Image)
	podLister := pods.Lister().Pods(c.Namespace)
	ps, err := podLister.List(labels.SelectorFromSet(
		labels.Set{"app": "web"}))
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "    %-32s %s\n", "Pods(ns).List(app=web)", names(ps))
	_, err = podLister.Get("web-9")
	fmt.Fprintf(out, "    %-32s %v (IsNotFound=%t)\n",
		`Pods(ns).Get("web-9")`, err, apierrors.IsNotFound(err))

	// Changes arrive through the handlers. A paused deployment does
	// not roll out a new pod template: no ReplicaSet, no pods.
	fmt.Fprintln(out, "  changes arrive through the handlers:")
	fmt.Fprintln(out, "    patch deployment/web image nginx:1.28")
	patch := `{"spec":{"template":{"spec":{"containers":` +
		`[{"name":"app","image":"nginx:1.28"}]}}}}`
	_, err = c.Client.AppsV1().Deployments(c.Namespace).Patch(ctx,
		"web", types.StrategicMergePatchType, []byte(patch),
		metav1.PatchOptions{})
	if err != nil {
		return err
	}
	if err := printNext(ctx, out, depEvents, 1); err != nil {
		return err
	}
	fmt.Fprintln(out, "    create pod/web-3, delete pod/web-2")
	podClient := c.Client.CoreV1().Pods(c.Namespace)
	_, err = podClient.Create(ctx, newPod("web-3", "web"),
		metav1.CreateOptions{})
	if err != nil {
		return err
	}
	err = podClient.Delete(ctx, "web-2", metav1.DeleteOptions{})
	if err != nil {
		return err
	}
	// ADDED, then the two steps of a pod's deletion.
	return printNext(ctx, out, podEvents, 3)
}

// deploymentHandler is written the way most code in the wild is: an
// untyped handler whose type assertions must also expect a
// DeletedFinalStateUnknown tombstone in OnDelete.
func deploymentHandler(ctx context.Context,
	ch chan<- string) cache.ResourceEventHandler {
	return cache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(obj any, initial bool) {
			if d, ok := obj.(*appsv1.Deployment); ok {
				emit(ctx, ch, deployLine("ADDED", d, initialNote(initial)))
			}
		},
		UpdateFunc: func(oldObj, newObj any) {
			old, ok1 := oldObj.(*appsv1.Deployment)
			d, ok2 := newObj.(*appsv1.Deployment)
			// The deployment controller writes status (observed
			// generation, conditions) even for a paused deployment.
			// Only a spec change bumps metadata.generation: act on
			// that, and the output is the same on a real cluster.
			if ok1 && ok2 && old.Generation != d.Generation {
				emit(ctx, ch, deployLine("UPDATED", d, ""))
			}
		},
		DeleteFunc: func(obj any) {
			if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = tomb.Obj
			}
			if d, ok := obj.(*appsv1.Deployment); ok {
				emit(ctx, ch, deployLine("DELETED", d, ""))
			}
		},
	}
}

// podHandler uses the typed handlers new in client-go v0.37: no type
// assertions, and OnDelete gets a DeletedPod that says whether the
// final state is known.
func podHandler(ctx context.Context,
	ch chan<- string) corev1informers.PodDetailedHandlerFuncs {
	return corev1informers.PodDetailedHandlerFuncs{
		AddFunc: func(p *corev1.Pod, initial bool) {
			emit(ctx, ch, podLine("ADDED", p, initialNote(initial)))
		},
		UpdateFunc: func(_, p *corev1.Pod) {
			emit(ctx, ch, podLine("UPDATED", p, deletingNote(p)))
		},
		DeleteFunc: func(d corev1informers.DeletedPod) {
			if d.FinalStateUnknown != nil || d.OptionalObj == nil {
				emit(ctx, ch, "    DELETED   pod/"+d.GetName()+
					"  (final state unknown)")
				return
			}
			emit(ctx, ch, podLine("DELETED", d.OptionalObj, ""))
		},
	}
}

// sharing is step 2.
func sharing(ctx context.Context, out io.Writer, c *cluster.Cluster) error {
	fmt.Fprintln(out, "\nStep 2. Sharing: three consumers, one informer, one watch")
	ctx, cancel := context.WithCancel(ctx)
	factory := informers.NewSharedInformerFactoryWithOptions(
		c.Client, 0, informers.WithNamespace(c.Namespace))
	defer factory.Shutdown()
	defer cancel()

	// Three parts of a program, written without knowing of each other,
	// each ask the factory for the pod informer and add a handler. The
	// factory keeps one informer per Go type (*v1.Pod): all three get
	// the same one.
	consumers := []string{"audit", "metrics", "cleanup"}
	adds := make(chan string, 64)
	var infs []cache.SharedIndexInformer
	var regs []cache.DoneChecker
	for _, name := range consumers {
		inf := factory.Core().V1().Pods().Informer()
		reg, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc: func(any) { emit(ctx, adds, name) },
		})
		if err != nil {
			return err
		}
		infs = append(infs, inf)
		regs = append(regs, reg.HasSyncedChecker())
	}
	// Informer() wraps the shared informer in a new typed view on each
	// call, so compare what is behind it: the cache.
	fmt.Fprintf(out, "  %s: each calls factory.Core().V1().Pods().Informer()\n",
		strings.Join(consumers, ", "))
	fmt.Fprintf(out, "    the same cache behind all three: %t\n",
		infs[0].GetStore() == infs[1].GetStore() &&
			infs[1].GetStore() == infs[2].GetStore())
	fmt.Fprintf(out, "    the Informer() values are equal: %t\n",
		infs[0] == infs[1] && infs[1] == infs[2])

	c.ResetRequests()
	factory.Start(ctx.Done())
	// WaitForCacheSyncWithContext is the newer form: its AsError
	// checks the map for you.
	if err := factory.WaitForCacheSyncWithContext(ctx).AsError(); err != nil {
		return err
	}
	if !cache.WaitFor(ctx, "", regs...) {
		return fmt.Errorf("handlers did not sync: %w", context.Cause(ctx))
	}
	counts := map[string]int{} // ADDED events per consumer
	for _, name := range drain(adds) {
		counts[name]++
	}
	fmt.Fprintf(out, "  initial ADDED events: audit=%d metrics=%d cleanup=%d\n",
		counts["audit"], counts["metrics"], counts["cleanup"])
	printRequests(out, "  requests for pods:", requestsFor(c, "pods"))

	// The contrast: three informers built directly, as code that
	// bypasses the factory does. Each lists and watches on its own,
	// and keeps its own copy of every pod.
	c.ResetRequests()
	var wg sync.WaitGroup
	var checks []cache.DoneChecker
	for range 3 {
		inf := corev1informers.NewPodInformer(
			c.Client, c.Namespace, 0, cache.Indexers{})
		wg.Go(func() { inf.RunWithContext(ctx) })
		checks = append(checks, inf.HasSyncedChecker())
	}
	ok := cache.WaitFor(ctx, "", checks...)
	reqs := requestsFor(c, "pods")
	cancel()
	wg.Wait()
	if !ok {
		return fmt.Errorf("independent informers did not sync")
	}
	printRequests(out, "  three NewPodInformer, requests for pods:", reqs)
	return nil
}

// options is step 3.
func options(ctx context.Context, out io.Writer, c *cluster.Cluster) error {
	fmt.Fprintln(out, "\nStep 3. Factory options; ForResource")
	ctx, cancel := context.WithCancel(ctx)

	// WithNamespace: list and watch one namespace. WithTweakListOptions:
	// edit every list and watch request, here to add a label selector
	// the server applies. WithTransform: edit every object before it
	// is cached, here to drop what this program never reads.
	factory := informers.NewSharedInformerFactoryWithOptions(c.Client, 0,
		informers.WithNamespace(c.Namespace),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.LabelSelector = "app=web"
		}),
		informers.WithTransform(dropPodSpec),
	)
	defer factory.Shutdown()
	defer cancel()

	// ForResource takes a GroupVersionResource known only at run time,
	// say from a flag, and returns the shared informer of that type
	// with a GenericLister of runtime.Objects.
	gvr, _ := schema.ParseResourceArg("deployments.v1.apps")
	generic, err := factory.ForResource(*gvr)
	if err != nil {
		return err
	}
	typed := factory.Apps().V1().Deployments().Informer()
	fmt.Fprintf(out, "  ForResource(%s)\n", gvr)
	fmt.Fprintf(out, "    same cache as Apps().V1().Deployments(): %t\n",
		generic.Informer().GetStore() == typed.GetStore())
	// It knows only the types compiled into client-go. For others,
	// custom resources, there is the dynamic informer factory.
	widgets := schema.GroupVersionResource{
		Group: "example.com", Version: "v1", Resource: "widgets"}
	if _, err := factory.ForResource(widgets); err != nil {
		fmt.Fprintf(out, "  ForResource(%s)\n    %v\n", widgets, err)
	}
	// Pods() alone makes nothing: create the informer before Start.
	pods := factory.Core().V1().Pods()
	pods.Informer()

	c.ResetRequests()
	factory.Start(ctx.Done())
	if err := factory.WaitForCacheSyncWithContext(ctx).AsError(); err != nil {
		return err
	}
	// Two informers start at once: their requests come in no fixed
	// order, so they are sorted.
	reqs := append(requestsFor(c, "deployments.apps"),
		requestsFor(c, "pods")...)
	slices.Sort(reqs)
	printRequests(out, "  requests (the server applies the selector):", reqs)

	objs, err := generic.Lister().ByNamespace(c.Namespace).
		List(labels.Everything())
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "  %-30s %s\n", "generic lister, deployments:",
		objectNames(objs))
	podLister := pods.Lister().Pods(c.Namespace)
	ps, err := podLister.List(labels.Everything())
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "  %-30s %s\n", "typed lister, pods:", names(ps))

	cached, err := podLister.Get("web-1")
	if err != nil {
		return err
	}
	live, err := c.Client.CoreV1().Pods(c.Namespace).
		Get(ctx, "web-1", metav1.GetOptions{})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "  pod/web-1 containers: API %d, cache %d"+
		" (the transform dropped .spec)\n",
		len(live.Spec.Containers), len(cached.Spec.Containers))
	return nil
}

// dropPodSpec is a transform: it runs on every object before it enters
// the cache. This program reads only names, labels and resourceVersions
// of pods, so it drops the rest and saves the memory. A transform sees
// every type the factory makes: pass the others through.
func dropPodSpec(obj any) (any, error) {
	if p, ok := obj.(*corev1.Pod); ok {
		p.Spec = corev1.PodSpec{}
		p.ManagedFields = nil
	}
	return obj, nil
}

// pitfalls is step 4.
func pitfalls(ctx context.Context, out io.Writer, c *cluster.Cluster) error {
	fmt.Fprintln(out, "\nStep 4. Pitfalls")
	ctx, cancel := context.WithCancel(ctx)

	// 4c needs to hold one change back on its way into the cache. A
	// transform runs on the reflector's goroutine before the cache is
	// written, so it can: it stops the pod labelled tier=gold at this
	// gate until release is closed. (Never block in a real transform:
	// it stalls the informer. Here that is the point.)
	held, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	gate := func(obj any) (any, error) {
		if p, ok := obj.(*corev1.Pod); ok && p.Labels["tier"] == "gold" {
			once.Do(func() { close(held) })
			select {
			case <-release:
			case <-ctx.Done():
			}
		}
		return obj, nil
	}
	factory := informers.NewSharedInformerFactoryWithOptions(c.Client, 0,
		informers.WithNamespace(c.Namespace), informers.WithTransform(gate))
	// 4d calls Shutdown itself; these cover an early return. Shutdown
	// may be called more than once.
	defer factory.Shutdown()
	defer cancel()

	deployments := factory.Apps().V1().Deployments()
	deployments.Informer() // make it now, so that Start runs it
	pods := factory.Core().V1().Pods()
	updates := make(chan string, 64)
	_, err := pods.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		UpdateFunc: func(_, obj any) {
			if p, ok := obj.(*corev1.Pod); ok && p.Name == "web-1" {
				emit(ctx, updates, p.ResourceVersion)
			}
		},
	})
	if err != nil {
		return err
	}
	factory.Start(ctx.Done())
	if err := factory.WaitForCacheSyncWithContext(ctx).AsError(); err != nil {
		return err
	}

	// 4a. The client's decoder clears kind and apiVersion, so objects
	// in the cache have none. The scheme maps the Go type back to its
	// GroupVersionKind. (Set it on a copy: cached objects are shared.)
	fmt.Fprintln(out, "  4a. objects from a lister have no kind or apiVersion")
	web, err := deployments.Lister().Deployments(c.Namespace).Get("web")
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "    deployment/web: kind=%q apiVersion=%q\n",
		web.Kind, web.APIVersion)
	gvks, _, err := scheme.Scheme.ObjectKinds(web)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "    scheme.Scheme.ObjectKinds: %s\n", gvks[0])

	// 4b. Start runs the informers made so far. One made later exists
	// but does not run, and WaitForCacheSync ignores it: it waits only
	// for started informers. Start again to run it.
	fmt.Fprintln(out, "  4b. an informer made after Start runs only after another Start")
	c.ResetRequests()
	configMaps := factory.Core().V1().ConfigMaps().Informer()
	synced := factory.WaitForCacheSync(ctx.Done())
	fmt.Fprintf(out, "    ConfigMaps():  WaitForCacheSync: %s\n",
		syncedString(synced))
	fmt.Fprintf(out, "                   configmaps synced=%t, requests=%d\n",
		configMaps.HasSynced(), len(requestsFor(c, "configmaps")))
	factory.Start(ctx.Done())
	synced = factory.WaitForCacheSync(ctx.Done())
	fmt.Fprintf(out, "    Start again:   WaitForCacheSync: %s\n",
		syncedString(synced))
	fmt.Fprintf(out, "                   configmaps synced=%t, requests=%d\n",
		configMaps.HasSynced(), len(requestsFor(c, "configmaps")))

	// 4c. A write returns when the API server has stored it; the cache
	// has it only once the watch event is processed. Read the lister
	// right after writing and you may get the old object. The gate
	// holds the event, so here you always do.
	fmt.Fprintln(out, "  4c. reading your own write through the cache can be stale")
	patched, err := c.Client.CoreV1().Pods(c.Namespace).Patch(ctx,
		"web-1", types.StrategicMergePatchType,
		[]byte(`{"metadata":{"labels":{"tier":"gold"}}}`),
		metav1.PatchOptions{})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "    patch pod/web-1 tier=gold: the API answers rv=%s\n",
		patched.ResourceVersion)
	select { // the event has reached the informer, not its cache
	case <-held:
	case <-ctx.Done():
		return context.Cause(ctx)
	}
	podLister := pods.Lister().Pods(c.Namespace)
	stale, err := podLister.Get("web-1")
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "    lister, event still on its way: rv=%s tier=%q\n",
		stale.ResourceVersion, stale.Labels["tier"])
	close(release)
	// A handler is called after the cache is written: once it has seen
	// our resourceVersion, the lister has it too.
	for rv := ""; rv != patched.ResourceVersion; {
		if rv, err = next(ctx, updates); err != nil {
			return err
		}
	}
	fresh, err := podLister.Get("web-1")
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "    lister, once the handler saw it: rv=%s tier=%q\n",
		fresh.ResourceVersion, fresh.Labels["tier"])

	// 4d. Shutdown marks the factory as shutting down and waits for its
	// informers to return, which they do only when their context ends.
	// Shutdown before cancel blocks, so a deferred Shutdown must be
	// deferred before the cancel: defers run last-in first-out.
	fmt.Fprintln(out, "  4d. Shutdown waits for the informers; only cancel stops them")
	done := make(chan struct{})
	go func() {
		factory.Shutdown()
		close(done)
	}()
	inf := deployments.Informer()
	fmt.Fprintf(out, "    %-17s Shutdown returned=%t, informer stopped=%t\n",
		"Shutdown() first:", closed(done), inf.IsStopped())
	cancel()
	<-done
	fmt.Fprintf(out, "    %-17s Shutdown returned=%t, informer stopped=%t\n",
		"then cancel():", closed(done), inf.IsStopped())
	_, err = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{})
	fmt.Fprintf(out, "    AddEventHandler on a stopped informer fails: %t\n",
		err != nil)
	return nil
}

// resync is step 5.
func resync(ctx context.Context, out io.Writer, c *cluster.Cluster) error {
	fmt.Fprintln(out, "\nStep 5. Resync: a replay of the cache, per handler, no requests")
	ctx, cancel := context.WithCancel(ctx)

	// The factory's resync period is every handler's default. A handler
	// may ask for its own; the informer then checks that often. The
	// minimum is 1 s, so this step takes a second. A second factory,
	// with resync 0, never resyncs, whatever its handlers ask for
	// (client-go logs a warning on stderr).
	factory := informers.NewSharedInformerFactoryWithOptions(c.Client,
		10*time.Minute, informers.WithNamespace(c.Namespace))
	noResync := informers.NewSharedInformerFactoryWithOptions(c.Client,
		0, informers.WithNamespace(c.Namespace))
	defer noResync.Shutdown()
	defer factory.Shutdown()
	defer cancel()

	quiet, eager, ignored := make(chan string, 64),
		make(chan string, 64), make(chan string, 64)
	pods := factory.Core().V1().Pods().Informer()
	_, err := pods.AddEventHandler(updateHandler(ctx, quiet))
	if err != nil {
		return err
	}
	_, err = pods.AddEventHandlerWithResyncPeriod(
		updateHandler(ctx, eager), time.Second)
	if err != nil {
		return err
	}
	_, err = noResync.Core().V1().Pods().Informer().
		AddEventHandlerWithResyncPeriod(
			updateHandler(ctx, ignored), time.Second)
	if err != nil {
		return err
	}
	fmt.Fprintln(out, "  factory resync 10m: handler quiet (the default), eager (1s)")
	fmt.Fprintln(out, "  factory resync 0:   handler ignored (asks for 1s)")
	factory.Start(ctx.Done())
	noResync.Start(ctx.Done())
	for _, f := range []informers.SharedInformerFactory{factory, noResync} {
		if err := f.WaitForCacheSyncWithContext(ctx).AsError(); err != nil {
			return err
		}
	}

	// A resync hands every cached object to the handlers due one, as
	// OnUpdate(old, new) with old and new the same object. Nothing
	// changed and nothing is fetched: the request log stays empty.
	c.ResetRequests()
	n := len(pods.GetStore().List())
	var lines []string
	for range n {
		l, err := next(ctx, eager)
		if err != nil {
			return err
		}
		lines = append(lines, l)
	}
	slices.Sort(lines) // the cache is a map: no order
	fmt.Fprintf(out, "  eager, a second later: OnUpdate for the %d cached pods\n", n)
	printLines(out, lines)
	fmt.Fprintf(out, "  requests sent for the resync: %d\n", len(c.Requests()))

	// The other handlers got no resync: the first update each is
	// given is a real change.
	patched, err := c.Client.CoreV1().Pods(c.Namespace).Patch(ctx,
		"web-1", types.StrategicMergePatchType,
		[]byte(`{"metadata":{"labels":{"tier":"silver"}}}`),
		metav1.PatchOptions{})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "  patch pod/web-1 (rv=%s); the first update the others got:\n",
		patched.ResourceVersion)
	for _, h := range []struct {
		name string
		ch   <-chan string
	}{{"quiet", quiet}, {"ignored", ignored}} {
		l, err := next(ctx, h.ch)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "    %-8s%s\n", h.name, strings.TrimSpace(l))
	}
	return nil
}

// updateHandler reports OnUpdate calls. The informer calls an update
// whose old and new resourceVersion are equal a sync: in this step, a
// resync. After a relist it is also an object that did not change, and
// reaches the same handlers (README, step 5).
func updateHandler(ctx context.Context,
	ch chan<- string) cache.ResourceEventHandler {
	return cache.ResourceEventHandlerFuncs{
		UpdateFunc: func(oldObj, newObj any) {
			old, ok1 := oldObj.(*corev1.Pod)
			p, ok2 := newObj.(*corev1.Pod)
			if !ok1 || !ok2 {
				return
			}
			event := "UPDATED"
			if old.ResourceVersion == p.ResourceVersion {
				event = "RESYNC"
			}
			emit(ctx, ch, fmt.Sprintf("    %-9s pod/%s  rv=%s->%s",
				event, p.Name, old.ResourceVersion, p.ResourceVersion))
		},
	}
}

// emit hands a line from a handler, on an informer goroutine, to run.
// It gives up when the context ends, so that a handler never holds up
// the informer's shutdown.
func emit(ctx context.Context, ch chan<- string, line string) {
	select {
	case ch <- line:
	case <-ctx.Done():
	}
}

// next waits for the next line a handler sent.
func next(ctx context.Context, ch <-chan string) (string, error) {
	select {
	case l := <-ch:
		return l, nil
	case <-ctx.Done():
		return "", fmt.Errorf("waiting for an event: %w", context.Cause(ctx))
	}
}

// printNext prints the next n lines handlers send, in arrival order.
func printNext(ctx context.Context, out io.Writer, ch <-chan string,
	n int) error {
	for range n {
		l, err := next(ctx, ch)
		if err != nil {
			return err
		}
		fmt.Fprintln(out, l)
	}
	return nil
}

// drain returns, sorted, the lines already waiting in ch.
func drain(ch <-chan string) []string {
	var lines []string
	for len(ch) > 0 {
		lines = append(lines, <-ch)
	}
	slices.Sort(lines)
	return lines
}

func printLines(out io.Writer, lines []string) {
	for _, l := range lines {
		fmt.Fprintln(out, l)
	}
}

// closed reports, without blocking, whether ch is closed.
func closed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// syncedString renders WaitForCacheSync's map in a fixed order.
func syncedString(m map[reflect.Type]bool) string {
	var parts []string
	for typ, ok := range m {
		parts = append(parts, fmt.Sprintf("%v=%t", typ, ok))
	}
	slices.Sort(parts)
	return strings.Join(parts, " ")
}

// requestsFor returns the list and watch requests for one resource
// since the last ResetRequests, from the client-side request log.
func requestsFor(c *cluster.Cluster, resource string) []string {
	var lines []string
	for _, r := range c.Requests() {
		if r.Resource == resource &&
			(r.Verb == "list" || r.Verb == "watch") {
			lines = append(lines, describeRequest(r))
		}
	}
	return lines
}

// describeRequest renders a logged request in one short line. A watch
// with sendInitialEvents=true is a watch-list: the current objects,
// then the changes, on one stream.
func describeRequest(r apiserver.Request) string {
	s := strings.ToUpper(r.Verb) + " " + r.Resource
	if sel := r.Query.Get("labelSelector"); sel != "" {
		s += " labelSelector=" + sel
	}
	if r.Query.Get("sendInitialEvents") == "true" {
		s += "  (watch-list)"
	}
	return s
}

// printRequests prints a heading with the count, then the requests.
func printRequests(out io.Writer, heading string, reqs []string) {
	fmt.Fprintf(out, "%s %d\n", heading, len(reqs))
	for _, r := range reqs {
		fmt.Fprintln(out, "    "+r)
	}
}

func deployLine(event string, d *appsv1.Deployment, note string) string {
	l := fmt.Sprintf("    %-9s deployment/%s  gen=%d  rv=%s",
		event, d.Name, d.Generation, d.ResourceVersion)
	if note != "" {
		l += "  (" + note + ")"
	}
	return l
}

func podLine(event string, p *corev1.Pod, note string) string {
	l := fmt.Sprintf("    %-9s pod/%s  rv=%s",
		event, p.Name, p.ResourceVersion)
	if note != "" {
		l += "  (" + note + ")"
	}
	return l
}

func initialNote(initial bool) string {
	if initial {
		return "initial list"
	}
	return ""
}

func deletingNote(p *corev1.Pod) string {
	if p.DeletionTimestamp != nil {
		return "deletionTimestamp set"
	}
	return ""
}

// names lists the names of typed objects, sorted: a lister returns
// them in no particular order.
func names[T metav1.Object](objs []T) string {
	var ns []string
	for _, o := range objs {
		ns = append(ns, o.GetName())
	}
	slices.Sort(ns)
	return strings.Join(ns, " ")
}

// objectNames is names for what a GenericLister returns.
func objectNames(objs []runtime.Object) string {
	var ns []string
	for _, o := range objs {
		if m, err := meta.Accessor(o); err == nil {
			ns = append(ns, m.GetName())
		}
	}
	slices.Sort(ns)
	return strings.Join(ns, " ")
}

// newDeployment is paused and has 0 replicas: on a real cluster the
// deployment controller creates no ReplicaSet for it; it only writes
// its status.
func newDeployment(name, image string) *appsv1.Deployment {
	sel := map[string]string{"deployment": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Labels: cluster.Labels("app", name),
		},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](0),
			Paused:   true,
			Selector: &metav1.LabelSelector{MatchLabels: sel},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{
					Labels: cluster.Labels("deployment", name),
				},
				Spec: corev1.PodSpec{Containers: []corev1.Container{
					{Name: "app", Image: image},
				}},
			},
		},
	}
}

// newPod carries a scheduling gate, so that no scheduler or kubelet
// touches it on a real cluster.
func newPod(name, app string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Labels: cluster.Labels("app", app),
		},
		Spec: corev1.PodSpec{
			SchedulingGates: []corev1.PodSchedulingGate{
				{Name: "walkthrough/hold"},
			},
			Containers: []corev1.Container{
				{Name: "app", Image: "nginx:1.27"},
			},
		},
	}
}
