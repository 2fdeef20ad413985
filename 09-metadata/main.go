// Chapter 09-metadata: dynamic and metadata-only informers, and what
// each costs in memory.
//
// A controller of custom resources has no Go types to decode into: it
// uses the dynamic client and caches Unstructured maps. A controller
// that reads only names, labels, annotations and owners can ask the API
// server for the metadata alone and cache PartialObjectMetadata. The
// chapter runs both, looks at what their caches hold and at what the
// metadata informer asks for on the wire, measures five caches of the
// same pods side by side, and shows what a Transform receives.
//
// Read alongside (client-go v0.37.2): dynamic/simple.go,
// dynamic/dynamicinformer/informer.go, metadata/metadata.go,
// metadata/metadatainformer/informer.go, tools/cache/the_real_fifo.go
// (where a Transform is called). observe.go holds what only shows the
// informers at work (step 5 watches them through the course's taps,
// internal/tap), measure.go the heap measurement, objects.go and pod.go
// the objects the chapter creates.
package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	"github.com/informer-walkthrough/informer-walkthrough/internal/cluster"
	"github.com/informer-walkthrough/informer-walkthrough/internal/fixture"
	"github.com/informer-walkthrough/informer-walkthrough/internal/tap"
)

func main() { cluster.Main("09-metadata", run) }

// The resources the chapter's informers watch, named at run time: the
// dynamic and metadata clients have no typed accessors.
var (
	deploymentsGVR = appsv1.SchemeGroupVersion.WithResource("deployments")
	podsGVR        = corev1.SchemeGroupVersion.WithResource("pods")
)

// run is the chapter, one step after another. Each step starts its own
// informers and stops them before it returns. The deployment of step 1
// owns the pods that steps 2 and 4 create.
func run(ctx context.Context, out io.Writer, c *cluster.Cluster) error {
	var owner metav1.OwnerReference
	for _, step := range []func(context.Context, io.Writer, *cluster.Cluster, *metav1.OwnerReference) error{
		dynamicDeployments, // 1. a dynamicinformer caches Unstructured maps
		metadataPods,       // 2. a metadatainformer caches PartialObjectMetadata
		metadataWire,       // 3. what the metadata informer asks for on the wire
		memoryPerPod,       // 4. five caches of the same pods, measured
		transformSees,      // 5. what a Transform receives, and never receives
		cacheThenGet,       // 6. names and labels from the cache; the spec by a GET
	} {
		if err := step(ctx, out, c, &owner); err != nil {
			return err
		}
	}
	return nil
}

// dynamicDeployments caches deployments through the dynamic client,
// which knows no Go types: every object is an Unstructured, a
// map[string]any as the JSON decoder made it. It sets owner to the
// deployment, for the pods of the next steps.
func dynamicDeployments(ctx context.Context, out io.Writer, c *cluster.Cluster, owner *metav1.OwnerReference) error {
	fmt.Fprintln(out, "Step 1. Dynamic: a dynamicinformer caches deployments as Unstructured")
	// Paused with 0 replicas: on a real cluster no controller acts on it.
	created, err := c.Client.AppsV1().Deployments(c.Namespace).Create(ctx,
		fixture.PausedDeployment("web", "nginx:1.27"), metav1.CreateOptions{})
	if err != nil {
		return err
	}
	// Not metav1.NewControllerRef: its BlockOwnerDeletion needs a
	// permission on the deployment's finalizers on some clusters.
	*owner = metav1.OwnerReference{APIVersion: "apps/v1", Kind: "Deployment",
		Name: created.Name, UID: created.UID, Controller: ptr.To(true)}

	// !+dynamicInformer
	dc, err := dynamic.NewForConfig(c.Config)
	if err != nil {
		return err
	}
	factory := dynamicinformer.NewFilteredDynamicSharedInformerFactory(
		dc, 0, c.Namespace, nil)
	deployments := factory.ForResource(deploymentsGVR)
	ctx, cancel := context.WithCancel(ctx)
	defer factory.Shutdown() // runs second: waits for the informers
	defer cancel()           // runs first: stops them
	factory.Start(ctx.Done())
	if !cache.WaitFor(ctx, "", deployments.Informer().HasSyncedChecker()) {
		return context.Cause(ctx)
	}
	obj, err := deployments.Lister().ByNamespace(c.Namespace).Get("web")
	if err != nil {
		return err
	}
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return fmt.Errorf("the lister returned a %T", obj)
	}
	// !-dynamicInformer
	printUnstructured(out, u)

	// !+nested
	replicas, _, err := unstructured.NestedInt64(u.Object, "spec", "replicas")
	if err != nil {
		return err
	}
	containers, _, err := unstructured.NestedSlice(u.Object,
		"spec", "template", "spec", "containers")
	if err != nil || len(containers) == 0 {
		return fmt.Errorf("no containers (%v)", err)
	}
	first, ok := containers[0].(map[string]any)
	if !ok {
		return fmt.Errorf("a container is a %T", containers[0])
	}
	image, _, err := unstructured.NestedString(first, "image")
	if err != nil {
		return err
	}
	// The types are in the data, not in Go: asking for the wrong one
	// is an error at run time.
	_, _, wrongType := unstructured.NestedString(u.Object, "spec", "replicas")
	// !-nested
	fmt.Fprintf(out, "  NestedInt64 spec.replicas=%d, NestedString image=%s\n"+
		"  NestedString spec.replicas: %v\n", replicas, image, wrongType)

	// !+convert
	var d appsv1.Deployment
	err = runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &d)
	// !-convert
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "  FromUnstructured: %T paused=%t replicas=%d image=%s\n",
		&d, d.Spec.Paused, *d.Spec.Replicas, d.Spec.Template.Spec.Containers[0].Image)
	return nil
}

// metadataPods caches pods through the metadata client: the server
// sends only each object's metadata.
func metadataPods(ctx context.Context, out io.Writer, c *cluster.Cluster, owner *metav1.OwnerReference) error {
	fmt.Fprintln(out, "\nStep 2. Metadata only: a metadatainformer caches pods as PartialObjectMetadata")
	pods := c.Client.CoreV1().Pods(c.Namespace)
	for _, name := range []string{"web-1", "web-2"} {
		pod := fixture.GatedPod(name, cluster.Labels("app", "web"))
		pod.Annotations = map[string]string{"team": "storefront"}
		pod.OwnerReferences = []metav1.OwnerReference{*owner}
		if _, err := pods.Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			return err
		}
	}
	c.ResetRequests()

	// !+metadataInformer
	mc, err := metadata.NewForConfig(c.Config)
	if err != nil {
		return err
	}
	factory := metadatainformer.NewFilteredSharedInformerFactory(
		mc, 0, c.Namespace, nil)
	informer := factory.ForResource(podsGVR)
	ctx, cancel := context.WithCancel(ctx)
	defer factory.Shutdown()
	defer cancel()
	factory.Start(ctx.Done())
	if !cache.WaitFor(ctx, "", informer.Informer().HasSyncedChecker()) {
		return context.Cause(ctx)
	}
	obj, err := informer.Lister().ByNamespace(c.Namespace).Get("web-1")
	if err != nil {
		return err
	}
	m, ok := obj.(*metav1.PartialObjectMetadata)
	if !ok {
		return fmt.Errorf("the lister returned a %T", obj)
	}
	// !-metadataInformer
	printMetadata(out, m)
	return nil
}

// metadataWire shows the request the metadata informer of step 2 sent,
// then makes the same request by hand, asking for JSON, to read what
// comes back.
func metadataWire(ctx context.Context, out io.Writer, c *cluster.Cluster, _ *metav1.OwnerReference) error {
	fmt.Fprintln(out, "\nStep 3. The wire: the metadata informer asks for PartialObjectMetadata")
	printAccept(out, c.Requests())

	// !+rawMetadataWatch
	watchURL := c.Client.CoreV1().RESTClient().Get().
		Namespace(c.Namespace).Resource("pods").
		Param("watch", "true").Param("sendInitialEvents", "true").
		Param("resourceVersionMatch", "NotOlderThan").
		Param("allowWatchBookmarks", "true").URL()
	httpClient, err := rest.HTTPClientFor(c.Config)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, watchURL.String(), nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept",
		"application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1")
	resp, err := httpClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close() // ends the stream when we have read enough
	// !-rawMetadataWatch
	return printFrames(out, resp, 3) // web-1, web-2, the bookmark
}

// shapedPods is how many pods of pod.go's shape the memory step
// creates: enough that an informer's own fixed cost is small beside
// them, few enough that the chapter stays fast on a real cluster.
const shapedPods = 10

// memoryPerPod creates pods shaped like production ones and caches them
// five ways at once, then measures what each cache holds per pod.
func memoryPerPod(ctx context.Context, out io.Writer, c *cluster.Cluster, owner *metav1.OwnerReference) error {
	fmt.Fprintln(out, "\nStep 4. Memory per pod: five informers over the same pods, side by side")
	pods := c.Client.CoreV1().Pods(c.Namespace)
	for i := range shapedPods {
		// The server ignores the status of a new pod: a kubelet
		// writes it, through the status subresource.
		pod, status, err := shapedPod(i, *owner)
		if err != nil {
			return err
		}
		created, err := pods.Create(ctx, pod, metav1.CreateOptions{})
		if err != nil {
			return err
		}
		status.QOSClass = created.Status.QOSClass // immutable
		created.Status = status
		if _, err := pods.UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
			return err
		}
	}
	fmt.Fprintf(out, "  created %d pods of the shape in pod.go, each with its status\n", shapedPods)

	caches, err := fiveInformers(ctx, c)
	if err != nil {
		return err
	}
	printMemory(out, caches, shapedPods)
	return nil
}

// variants names the five caches fiveInformers builds, in its order.
var variants = []string{"typed", "typed + Transform", "dynamic",
	"metadata only", "metadata + Transform"}

// fiveInformers builds, runs and stops five informers over the pods of
// pod.go's shape, and returns them, synced: a typed one, a typed one
// with a Transform, a dynamic one, a metadata one, and a metadata one
// with the Transform. Their factories are gone once it returns, so the
// informers are the only references to what their caches hold.
func fiveInformers(ctx context.Context, c *cluster.Cluster) ([]cache.SharedIndexInformer, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	dc, err := dynamic.NewForConfig(c.Config)
	if err != nil {
		return nil, err
	}
	mc, err := metadata.NewForConfig(c.Config)
	if err != nil {
		return nil, err
	}
	// !+fiveInformers
	shaped := func(o *metav1.ListOptions) {
		o.LabelSelector = "app.kubernetes.io/name=shop"
	}
	ns, tweak := informers.WithNamespace(c.Namespace),
		informers.WithTweakListOptions(shaped)
	typed := informers.NewSharedInformerFactoryWithOptions(
		c.Client, 0, ns, tweak)
	typedLean := informers.NewSharedInformerFactoryWithOptions(
		c.Client, 0, ns, tweak, informers.WithTransform(dropManagedFields))
	dyn := dynamicinformer.NewFilteredDynamicSharedInformerFactory(
		dc, 0, c.Namespace, shaped)
	metadataOnly := metadatainformer.NewFilteredSharedInformerFactory(
		mc, 0, c.Namespace, shaped)
	metaLean := metadatainformer.NewFilteredSharedInformerFactory(
		mc, 0, c.Namespace, shaped)
	five := []cache.SharedIndexInformer{
		typed.Core().V1().Pods().Informer(),
		typedLean.Core().V1().Pods().Informer(),
		dyn.ForResource(podsGVR).Informer(),
		metadataOnly.ForResource(podsGVR).Informer(),
		metaLean.ForResource(podsGVR).Informer(),
	}
	// metadatainformer.WithTransform cannot be combined with a
	// namespace; SetTransform can, on an informer not yet started.
	if err := five[4].SetTransform(dropManagedFields); err != nil {
		return nil, err
	}
	// !-fiveInformers
	typed.Start(ctx.Done())
	typedLean.Start(ctx.Done())
	dyn.Start(ctx.Done())
	metadataOnly.Start(ctx.Done())
	metaLean.Start(ctx.Done())
	for _, informer := range five {
		if !cache.WaitFor(ctx, "", informer.HasSyncedChecker()) {
			return nil, context.Cause(ctx)
		}
	}
	cancel()
	for _, f := range []interface{ Shutdown() }{typed, typedLean, dyn, metadataOnly, metaLean} {
		f.Shutdown() // the caches stay, filled
	}
	return five, nil
}

// !+dropManagedFields
// dropManagedFields is a Transform for a program that never reads
// managedFields, as most controllers do not. It changes the object in
// place, which is allowed (the informer owns it until it is cached),
// and is idempotent, which the watch-list path makes necessary: see
// transformSees.
func dropManagedFields(obj any) (any, error) {
	if m, err := meta.Accessor(obj); err == nil {
		m.SetManagedFields(nil)
	}
	return obj, nil
}

// !-dropManagedFields

// transformSees runs an informer whose Transform and handler report
// every call: through a watch-list start, an update, a delete and a
// resync.
func transformSees(ctx context.Context, out io.Writer, c *cluster.Cluster, _ *metav1.OwnerReference) error {
	fmt.Fprintln(out, "\nStep 5. What a Transform receives, and what it never receives")
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() { cancel(); wg.Wait() }() // the informer has ended
	// The course's taps (internal/tap) record each call of the handler
	// and of the Transform, in the order they came.
	rec := recordCalls(ctx)
	// !+transformSees
	lw := cache.NewFilteredListWatchFromClient(
		c.Client.CoreV1().RESTClient(), "pods", c.Namespace,
		func(o *metav1.ListOptions) { o.LabelSelector = "app=web" })
	_, informer := cache.NewInformerWithOptions(cache.InformerOptions{
		ListerWatcher: lw,
		ObjectType:    &corev1.Pod{},
		Handler:       tap.Handler{Rec: rec},
		Transform:     tap.Transform(rec, dropManagedFields),
		ResyncPeriod:  resyncPeriod,
	})
	wg.Go(func() { informer.RunWithContext(ctx) })
	// !-transformSees
	if !cache.WaitFor(ctx, "", informer.HasSyncedChecker()) {
		return context.Cause(ctx)
	}
	fmt.Fprintln(out, "  start (watch-list): each object twice, the second time as the first call left it")
	if err := printAwaited(ctx, out, true, rec, 4, 2); err != nil {
		return err
	}

	pods := c.Client.CoreV1().Pods(c.Namespace)
	fmt.Fprintln(out, "  label web-1 tier=front: the new object, once")
	patch := []byte(`{"metadata":{"labels":{"tier":"front"}}}`)
	if _, err := pods.Patch(ctx, "web-1", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		return err
	}
	if err := printAwaited(ctx, out, false, rec, 1, 1); err != nil {
		return err
	}
	fmt.Fprintln(out, "  delete web-2: MODIFIED then DELETED, each once; OnDelete gets the transformed object")
	if err := pods.Delete(ctx, "web-2", metav1.DeleteOptions{}); err != nil {
		return err
	}
	if err := printAwaited(ctx, out, false, rec, 2, 2); err != nil {
		return err
	}
	fmt.Fprintf(out, "  resync every %v: OnUpdate(obj, obj) from the cache\n", resyncPeriod)
	return printResync(ctx, out, rec)
}

// cacheThenGet reads a pod's metadata from a metadata informer's cache,
// then, for what the cache does not hold, GETs the pod from the server.
func cacheThenGet(ctx context.Context, out io.Writer, c *cluster.Cluster, _ *metav1.OwnerReference) error {
	fmt.Fprintln(out, "\nStep 6. A metadata cache has names, labels and owners; the spec costs a GET")
	mc, err := metadata.NewForConfig(c.Config)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	factory := metadatainformer.NewFilteredSharedInformerFactory(mc, 0, c.Namespace, nil)
	informer := factory.ForResource(podsGVR).Informer()
	defer factory.Shutdown()
	defer cancel()
	factory.Start(ctx.Done())
	if !cache.WaitFor(ctx, "", informer.HasSyncedChecker()) {
		return context.Cause(ctx)
	}
	c.ResetRequests()
	// !+cacheThenGet
	obj, exists, err := informer.GetIndexer().GetByKey(c.Namespace + "/web-1")
	if err != nil || !exists {
		return fmt.Errorf("web-1 is not in the cache (%v)", err)
	}
	m, ok := obj.(*metav1.PartialObjectMetadata)
	if !ok {
		return fmt.Errorf("the cache holds a %T", obj)
	}
	pod, err := c.Client.CoreV1().Pods(m.Namespace).Get(ctx, m.Name,
		metav1.GetOptions{})
	// !-cacheThenGet
	if err != nil {
		return err
	}
	printCacheThenServer(out, m, pod, c.Requests())
	return nil
}
