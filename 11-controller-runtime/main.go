// Chapter 11-controller-runtime: the same informers, inside controller-
// runtime's cache and client. Its cache is client-go SharedIndexInformers
// (chapters 01-07), one per kind, started lazily; its client reads from
// the cache and writes to the server; its controllers are chapter 07's
// workqueue and worker. Each step shows a part by requests and handlers.
//
// Read alongside (controller-runtime v0.25.2): pkg/cache/cache.go,
// informer_cache.go, internal/informers.go, internal/cache_reader.go,
// pkg/client/client.go, consistency.go, pkg/internal/controller/
// controller.go. observe.go holds what only shows them at work.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	crcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/informer-walkthrough/informer-walkthrough/internal/apiserver"
	"github.com/informer-walkthrough/informer-walkthrough/internal/cluster"
	"github.com/informer-walkthrough/informer-walkthrough/internal/fixture"
	"github.com/informer-walkthrough/informer-walkthrough/internal/show"
)

func main() { cluster.Main("11-controller-runtime", run) }

// run is the chapter, one step after another. Each step starts its own
// cache (or manager) and stops it, waiting, before it returns.
func run(ctx context.Context, out io.Writer, c *cluster.Cluster) error {
	quietLogs() // controller-runtime logs through logr: not to stdout
	for _, step := range []func(context.Context, io.Writer, *cluster.Cluster) error{
		lazyCache, underneath, optionsAreChapters, cachedClient, readYourWrites, reconcilerIsChapter07,
	} {
		if err := step(ctx, out, c); err != nil {
			return err
		}
	}
	return nil
}

// ownObjects is the cache's options for the chapter's own objects, in
// its namespace (its RBAC on a real cluster): a metadata.namespace field
// selector makes the informers list and watch there.
func ownObjects(c *cluster.Cluster) crcache.Options {
	return crcache.Options{
		DefaultFieldSelector: fields.OneTermEqualSelector("metadata.namespace", c.Namespace),
		DefaultLabelSelector: labels.SelectorFromSet(cluster.Labels()),
	}
}

// lazyCache starts a cache: nothing is listed until the first read of
// a kind, which starts that kind's informer and waits for its sync.
func lazyCache(ctx context.Context, out io.Writer, c *cluster.Cluster) error {
	fmt.Fprintln(out, "Step 1. The cache is lazy: a kind's informer starts at its first read")
	if err := createFixtures(ctx, c); err != nil {
		return err
	}
	c.ResetRequests()
	// !+lazy
	cache, err := crcache.New(c.Config, ownObjects(c))
	if err != nil {
		return err
	}
	defer startCache(ctx, cache)()
	synced := cache.WaitForCacheSync(ctx) // no informer yet: at once
	// !-lazy
	printRequests(out, fmt.Sprintf("started, WaitForCacheSync %t:", synced), c)
	key := client.ObjectKey{Namespace: c.Namespace, Name: "web"}
	var cm corev1.ConfigMap
	if err := cache.Get(ctx, key, &cm); err != nil {
		return err
	}
	printRequests(out, "Get configmap/web "+describe(&cm)+":", c)
	key.Name = "db"
	if err := cache.Get(ctx, key, &cm); err != nil {
		return err
	}
	printRequests(out, "Get configmap/db "+describe(&cm)+":", c)
	var pod corev1.Pod
	key.Name = "web-1"
	if err := cache.Get(ctx, key, &pod); err != nil {
		return err
	}
	printRequests(out, "Get pod/web-1, a second kind:", c)

	// Lazy start refused: a read of a kind nobody asked for is an error.
	strict, err := crcache.New(c.Config, crcache.Options{ReaderFailOnMissingInformer: true})
	if err != nil {
		return err
	}
	err = strict.Get(ctx, key, &pod)
	fmt.Fprintf(out, "  ReaderFailOnMissingInformer: Get pod/web-1: %v (ErrResourceNotCached %t)\n",
		err, errors.As(err, new(*crcache.ErrResourceNotCached)))
	return forbiddenKind(ctx, out, c)
}

// forbiddenKind reads a kind the user may not list. The client's
// transport refuses the list (cluster.ClientFaults.Answer), as RBAC
// would: the reflector retries for ever and the Get waits with it, until
// a watch error handler (chapter 10) ends the wait with the reason.
func forbiddenKind(ctx context.Context, out io.Writer, c *cluster.Cluster) error {
	deployments := func(r apiserver.Request) bool { return r.Resource == "deployments.apps" }
	refused := apierrors.NewForbidden(appsv1.Resource("deployments"), "", errors.New("no RBAC grant"))
	c.Faults().Answer(deployments, refused) // the watch-list's WATCH
	c.Faults().Answer(deployments, refused) // its fallback LIST
	// !+forbidden
	ctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	opts := ownObjects(c)
	opts.DefaultWatchErrorHandler = func(_ context.Context, _ *toolscache.Reflector, err error) {
		if apierrors.IsForbidden(err) {
			stop(err) // retrying will not grant the permission
		}
	}
	cache, err := crcache.New(c.UnguardedConfig(), opts)
	if err != nil {
		return err
	}
	defer startCache(ctx, cache)()
	var d appsv1.Deployment
	err = cache.Get(ctx, client.ObjectKey{Namespace: c.Namespace, Name: "web"}, &d)
	// !-forbidden
	printRequests(out, "Get deployment/web; the client's transport answers 403 Forbidden to:", c)
	fmt.Fprintf(out, "    Get: %v\n    why (the handler's cause): %v\n", err, context.Cause(ctx))
	return nil
}

// underneath opens the cache: its informer is client-go's, a Get is the
// indexer's GetByKey and a deep copy, and without the copy the reader
// holds the cache's own maps.
func underneath(ctx context.Context, out io.Writer, c *cluster.Cluster) error {
	fmt.Fprintln(out, "\nStep 2. Underneath: a client-go SharedIndexInformer, GetByKey and a deep copy")
	cache, err := crcache.New(c.Config, ownObjects(c))
	if err != nil {
		return err
	}
	defer startCache(ctx, cache)()
	// !+informer
	informer, err := cache.GetInformer(ctx, &corev1.ConfigMap{}) // waits for sync
	if err != nil {
		return err
	}
	lines := show.NewLines(ctx)
	reg, err := informer.AddEventHandler(reporter(lines))
	if err != nil {
		return err
	}
	toolscache.WaitFor(ctx, "", reg.HasSyncedChecker())
	indexer := informer.(toolscache.SharedIndexInformer).GetIndexer()
	// !-informer
	fmt.Fprintf(out, "  GetInformer: %T, HasSynced %t\n", informer, informer.HasSynced())
	show.Sorted(ctx, out, "  a handler added now gets the cache as adds:", "    ", lines, 2)

	// !+deepCopy
	key := client.ObjectKey{Namespace: c.Namespace, Name: "web"}
	stored, _, err := indexer.GetByKey(key.String())
	if err != nil {
		return err
	}
	var copied, aliased corev1.ConfigMap
	if err := cache.Get(ctx, key, &copied); err != nil {
		return err
	}
	copied.Data["mode"] = "edited" // a copy: the cache is untouched
	if err := cache.Get(ctx, key, &aliased, client.UnsafeDisableDeepCopy); err != nil {
		return err
	}
	aliased.Data["mode"] = "corrupted" // the cache's own map
	// !-deepCopy
	printAliasing(out, stored.(*corev1.ConfigMap), &copied, &aliased)
	var next corev1.ConfigMap
	if err := cache.Get(ctx, key, &next); err != nil {
		return err
	}
	onServer, err := c.Client.CoreV1().ConfigMaps(c.Namespace).Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "  the next reader's Get: mode=%s; the server's: mode=%s\n", next.Data["mode"], onServer.Data["mode"])
	return nil
}

// optionsAreChapters sets the cache's options, each an earlier chapter:
// selectors (03), namespaces, a Transform (05, 09).
func optionsAreChapters(ctx context.Context, out io.Writer, c *cluster.Cluster) error {
	fmt.Fprintln(out, "\nStep 3. Cache options are chapters: selectors, namespaces, a Transform")
	c.ResetRequests()
	// !+options
	cache, err := crcache.New(c.Config, crcache.Options{
		DefaultNamespaces:    map[string]crcache.Config{c.Namespace: {}},
		DefaultLabelSelector: labels.SelectorFromSet(cluster.Labels()),
		ByObject: map[client.Object]crcache.ByObject{&corev1.ConfigMap{}: {
			Label: labels.SelectorFromSet(cluster.Labels("team", "blue")),
		}},
		DefaultTransform: crcache.TransformStripManagedFields(),
	})
	// !-options
	if err != nil {
		return err
	}
	defer startCache(ctx, cache)()
	var blue corev1.ConfigMapList
	if err := cache.List(ctx, &blue); err != nil {
		return err
	}
	var pod corev1.Pod
	if err := cache.Get(ctx, client.ObjectKey{Namespace: c.Namespace, Name: "web-1"}, &pod); err != nil {
		return err
	}
	printRequests(out, fmt.Sprintf("List configmaps: %v; Get pod/web-1:", names(&blue)), c)
	informer, err := cache.GetInformer(ctx, &corev1.Pod{})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "  with DefaultNamespaces, GetInformer gives a %T: one informer per namespace\n", informer)
	onServer, err := c.Client.CoreV1().Pods(c.Namespace).Get(ctx, "web-1", metav1.GetOptions{})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "  TransformStripManagedFields: managedFields on the server %d, in the cache %d\n",
		len(onServer.ManagedFields), len(pod.ManagedFields))

	return nil
}

// cachedClient reads through the client: from the cache, or from the
// server for what the cache is told not to hold; writes go to the server.
func cachedClient(ctx context.Context, out io.Writer, c *cluster.Cluster) error {
	fmt.Fprintln(out, "\nStep 4. The client: reads from the cache, writes to the server")
	cache, err := crcache.New(c.Config, ownObjects(c))
	if err != nil {
		return err
	}
	defer startCache(ctx, cache)()
	// !+client
	cl, err := client.New(c.Config, client.Options{Cache: &client.CacheOptions{
		Reader:     cache,
		DisableFor: []client.Object{&corev1.Pod{}}, // always read live
	}})
	if err != nil {
		return err
	}
	apiReader, err := client.New(c.Config, client.Options{}) // no cache: mgr.GetAPIReader()
	// !-client
	if err != nil {
		return err
	}
	key := client.ObjectKey{Namespace: c.Namespace, Name: "web"}
	var cm corev1.ConfigMap
	if err := cl.Get(ctx, key, &cm); err != nil {
		return err
	}
	c.ResetRequests()
	if err := cl.Get(ctx, key, &cm); err != nil {
		return err
	}
	printRequests(out, "Get configmap/web (its informer synced):", c)
	cm.Data["mode"] = "v2"
	if err := cl.Update(ctx, &cm); err != nil {
		return err
	}
	printRequests(out, "Update configmap/web:", c)
	if err := awaitCached(ctx, cache, &cm); err != nil { // the watch brings it
		return err
	}
	var pod corev1.Pod
	if err := cl.Get(ctx, client.ObjectKey{Namespace: c.Namespace, Name: "web-1"}, &pod); err != nil {
		return err
	}
	printRequests(out, "Get pod/web-1 (DisableFor):", c)
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ConfigMap"))
	if err := cl.Get(ctx, key, u); err != nil {
		return err
	}
	printRequests(out, "Get configmap/web as unstructured:", c)
	if err := apiReader.Get(ctx, key, &cm); err != nil {
		return err
	}
	printRequests(out, "APIReader Get configmap/web:", c)
	return indexedList(ctx, out, c, cache, cl, apiReader)
}

// indexedList lists by a field: the cache needs an index (04's IndexFunc).
func indexedList(ctx context.Context, out io.Writer, c *cluster.Cluster, cache crcache.Cache, cl, apiReader client.Client) error {
	var list corev1.ConfigMapList
	byMode := client.MatchingFields{"data.mode": "v1"}
	err := cl.List(ctx, &list, client.InNamespace(c.Namespace), byMode)
	fmt.Fprintf(out, "  List MatchingFields data.mode=v1, from the cache: %v\n", err)
	err = apiReader.List(ctx, &list, client.InNamespace(c.Namespace), byMode)
	fmt.Fprintf(out, "  the same from the APIReader, to the server: %s (no field selector on data.mode)\n",
		apierrors.ReasonForError(err))
	// !+indexField
	err = cache.IndexField(ctx, &corev1.ConfigMap{}, "data.mode", func(o client.Object) []string {
		return []string{o.(*corev1.ConfigMap).Data["mode"]}
	})
	if err != nil {
		return err
	}
	c.ResetRequests()
	err = cl.List(ctx, &list, client.InNamespace(c.Namespace), byMode)
	// !-indexField
	if err != nil {
		return err
	}
	printRequests(out, fmt.Sprintf("after IndexField: List data.mode=v1 %v:", names(&list)), c)
	return nil
}

// readYourWrites updates an object and reads it back from the cache
// while the client holds the informer's watch: the plain read is stale;
// with read-your-writes consistency the Get waits for the write's
// resourceVersion to reach the informer.
func readYourWrites(ctx context.Context, out io.Writer, c *cluster.Cluster) error {
	fmt.Fprintln(out, "\nStep 5. Read your own writes: EnableReadYourWritesConsistency waits for the write")
	cache, err := crcache.New(c.Config, ownObjects(c))
	if err != nil {
		return err
	}
	defer startCache(ctx, cache)()
	// !+consistent
	cl, err := client.New(c.Config, client.Options{Cache: &client.CacheOptions{
		Reader:                          cache,
		EnableReadYourWritesConsistency: ptr.To(true),
	}})
	if err != nil {
		return err
	}
	key := client.ObjectKey{Namespace: c.Namespace, Name: "db"}
	var cm corev1.ConfigMap
	if err := cl.Get(ctx, key, &cm); err != nil {
		return err
	}
	c.Faults().HoldWatches() // the informer sees nothing new
	defer c.Faults().ReleaseWatches()
	cm.Data["mode"] = "v2"
	if err := cl.Update(ctx, &cm); err != nil {
		return err
	}
	var stale corev1.ConfigMap
	err = cl.Get(ctx, key, &stale, client.DisableReadYourWritesConsistency)
	// !-consistent
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "  the client holds the watch; Update configmap/db mode=v2: rv=%s\n", cm.ResourceVersion)
	fmt.Fprintf(out, "  Get with DisableReadYourWritesConsistency: %s (stale)\n", describe(&stale))
	// !+waits
	got := make(chan string, 1)
	go func() {
		var fresh corev1.ConfigMap
		err := cl.Get(ctx, key, &fresh)
		got <- fmt.Sprint(describe(&fresh), " ", err)
	}()
	// !-waits
	printWaiting(out, got)
	c.Faults().ReleaseWatches()
	fmt.Fprintln(out, "  the client releases the watch:")
	return printResult(ctx, out, got)
}

// reconcilerIsChapter07 runs a controller on a manager: its informers
// are the cache's, its queue is client-go's workqueue, and its worker is
// chapter 07's loop.
func reconcilerIsChapter07(ctx context.Context, out io.Writer, c *cluster.Cluster) error {
	fmt.Fprintln(out, "\nStep 6. A reconciler is chapter 07: one workqueue, dedup, rate-limited retries")
	web, err := c.Client.AppsV1().Deployments(c.Namespace).Create(ctx, fixture.PausedDeployment("web", "nginx:1.27"), metav1.CreateOptions{})
	if err != nil {
		return err
	}
	c.ResetRequests()
	lines := show.NewLines(ctx)
	// !+manager
	mgr, err := ctrl.NewManager(c.Config, ctrl.Options{
		Cache:      ownObjects(c),
		Metrics:    metricsserver.Options{BindAddress: "0"}, // no port
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		return err
	}
	r := &stepReconciler{client: mgr.GetClient(), lines: lines, proceed: make(chan error)}
	var queue workqueue.TypedRateLimitingInterface[reconcile.Request]
	err = ctrl.NewControllerManagedBy(mgr).
		For(&appsv1.Deployment{}).
		Owns(&corev1.ConfigMap{}). // its events enqueue the owner
		WithOptions(controller.Options{
			UsePriorityQueue: ptr.To(false), // client-go's workqueue
			NewQueue: func(name string, rl workqueue.TypedRateLimiter[reconcile.Request]) workqueue.TypedRateLimitingInterface[reconcile.Request] {
				queue = workqueue.NewTypedRateLimitingQueueWithConfig(rl,
					workqueue.TypedRateLimitingQueueConfig[reconcile.Request]{Name: name})
				return recording(queue, lines) // reports Add, Done, Forget
			},
		}).
		Complete(r)
	// !-manager
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { _ = mgr.Start(ctx) })
	defer wg.Wait()
	defer cancel()
	show.Sorted(ctx, out, "  started: the initial list adds the deployment", "    ", lines, 2)

	// A burst of three events while reconcile 1 runs: one key, dirty once.
	for _, release := range []string{"v1", "v2", "v3"} {
		if err := setRelease(ctx, c, release); err != nil {
			return err
		}
	}
	show.Next(ctx, out, "  three patches while reconcile 1 runs:", "    ", lines, 3)
	r.let(ctx, nil)
	show.Next(ctx, out, "  reconcile 1 returns: the dirty key is queued once more", "    ", lines, 3)
	r.let(ctx, nil)
	show.Next(ctx, out, "  reconcile 2 returns:", "    ", lines, 2)
	fmt.Fprintf(out, "  queue.Len() %d: three events, one more reconcile\n", queue.Len())

	// An owned ConfigMap enqueues its owner; the reconciler fails once.
	if _, err := c.Client.CoreV1().ConfigMaps(c.Namespace).Create(ctx, ownedConfigMap(web), metav1.CreateOptions{}); err != nil {
		return err
	}
	show.Sorted(ctx, out, "  create configmap/web-config, owned by deployment/web:", "    ", lines, 2)
	r.let(ctx, errors.New("flaky"))
	show.Next(ctx, out, "  reconcile 3 fails: the rate limiter requeues it", "    ", lines, 3)
	r.let(ctx, nil)
	show.Next(ctx, out, "  reconcile 4 returns:", "    ", lines, 2)
	printLists(out, "the manager's lists and watches (the controller's and the client's):", c)
	return nil
}
