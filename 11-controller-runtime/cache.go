package main

// Steps 1-3: controller-runtime's cache. It is a map of client-go
// SharedIndexInformers, one per kind, each started at the first read of
// its kind; its options are the list options, namespaces and transforms
// of earlier chapters.

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
	"k8s.io/apimachinery/pkg/labels"
	toolscache "k8s.io/client-go/tools/cache"
	crcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/informer-walkthrough/informer-walkthrough/internal/apiserver"
	"github.com/informer-walkthrough/informer-walkthrough/internal/cluster"
	"github.com/informer-walkthrough/informer-walkthrough/internal/show"
	"github.com/informer-walkthrough/informer-walkthrough/internal/tap"
)

// lazyCache starts a cache: nothing is listed until the first read of
// a kind, which starts that kind's informer and waits for its sync.
func lazyCache(ctx context.Context, out io.Writer, c *cluster.Cluster) error {
	fmt.Fprintln(out, "Step 1. The cache is lazy: a kind's informer starts at its first read")
	if err := createFixtures(ctx, c); err != nil {
		return err
	}
	c.ResetRequests()

	// New builds the cache and starts nothing. Start runs it until its
	// context ends, then waits for its informers: it runs on a goroutine
	// of its own, stopped and waited for when the step returns, as the
	// course runs every informer. A read before Start has begun fails
	// (ErrCacheNotStarted); WaitForCacheSync waits for Start first, then
	// for the informers the cache has, none yet.
	// !+lazy
	cache, err := crcache.New(c.Config, ownObjects(c))
	if err != nil {
		return err
	}
	cacheCtx, stopCache := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { _ = cache.Start(cacheCtx) })
	defer wg.Wait()
	defer stopCache()
	synced := cache.WaitForCacheSync(ctx) // no informer yet: at once
	// !-lazy
	printRequests(out, fmt.Sprintf("started, WaitForCacheSync %t:", synced), c)

	// The first read of a kind starts its informer and waits for its
	// sync; the next read of the same kind is a lookup in its indexer.
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

	// A second kind is a second informer, with a watch of its own.
	var pod corev1.Pod
	key.Name = "web-1"
	if err := cache.Get(ctx, key, &pod); err != nil {
		return err
	}
	printRequests(out, "Get pod/web-1, a second kind:", c)

	// Lazy start refused: a read of a kind nobody asked for is an error.
	// The cache is never started: the read fails before it would wait.
	strict, err := crcache.New(c.Config, crcache.Options{ReaderFailOnMissingInformer: true})
	if err != nil {
		return err
	}
	err = strict.Get(ctx, key, &pod)
	fmt.Fprintf(out, "  ReaderFailOnMissingInformer: Get pod/web-1: %v (ErrResourceNotCached %t)\n",
		err, errors.As(err, new(*crcache.ErrResourceNotCached)))
	return nil
}

// forbiddenKind reads a kind the user may not list. The client's
// transport refuses the list (cluster.ClientFaults.Answer), as RBAC
// would: the reflector retries for ever and the Get waits with it, until
// a watch error handler (chapter 10) ends the wait with the reason.
func forbiddenKind(ctx context.Context, out io.Writer, c *cluster.Cluster) error {
	// The refusal: the watch-list's WATCH first, then the LIST the
	// reflector falls back to.
	deployments := func(r apiserver.Request) bool { return r.Resource == "deployments.apps" }
	refused := apierrors.NewForbidden(appsv1.Resource("deployments"), "", errors.New("no RBAC grant"))
	c.Faults().Answer(deployments, refused) // the watch-list's WATCH
	c.Faults().Answer(deployments, refused) // its fallback LIST

	// The handler ends the Get's context with the 403 as its cause:
	// retrying will not grant the permission.
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
	cacheCtx, stopCache := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { _ = cache.Start(cacheCtx) })
	defer wg.Wait()
	defer stopCache()
	cache.WaitForCacheSync(ctx)
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
	cacheCtx, stopCache := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { _ = cache.Start(cacheCtx) })
	defer wg.Wait()
	defer stopCache()
	cache.WaitForCacheSync(ctx)

	// GetInformer hands out the kind's informer, started and synced: a
	// handler added to it gets the cache as adds (chapter 05), and its
	// indexer is chapter 04's.
	// !+informer
	informer, err := cache.GetInformer(ctx, &corev1.ConfigMap{}) // waits for sync
	if err != nil {
		return err
	}
	rec := tap.NewRecorder(ctx) // the course's tap: records each call
	reg, err := informer.AddEventHandler(tap.Handler{Rec: rec})
	if err != nil {
		return err
	}
	toolscache.WaitFor(ctx, "", reg.HasSyncedChecker())
	indexer := informer.(toolscache.SharedIndexInformer).GetIndexer()
	// !-informer
	fmt.Fprintf(out, "  GetInformer: %T, HasSynced %t\n", informer, informer.HasSynced())
	if err := show.Sorted(ctx, out, show.Block{Heading: "  a handler added now gets the cache as adds:", Indent: "    ", From: rec.Render(addLine), N: 2}); err != nil {
		return err
	}

	// The object in the indexer, then two reads of it: one with the
	// deep copy a Get makes by default, one without, each edited.
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

	// The edit without the copy is in the cache: the next reader gets
	// it, while the server never saw it.
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

	// One namespace, the course's label on every kind but configmaps,
	// whose own selector replaces it, and managedFields stripped from
	// every object before it is stored.
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
	cacheCtx, stopCache := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { _ = cache.Start(cacheCtx) })
	defer wg.Wait()
	defer stopCache()
	cache.WaitForCacheSync(ctx)

	// Two reads, two informers: their requests carry the selectors.
	var blue corev1.ConfigMapList
	if err := cache.List(ctx, &blue); err != nil {
		return err
	}
	var pod corev1.Pod
	if err := cache.Get(ctx, client.ObjectKey{Namespace: c.Namespace, Name: "web-1"}, &pod); err != nil {
		return err
	}
	printRequests(out, fmt.Sprintf("List configmaps: %v; Get pod/web-1:", names(&blue)), c)

	// With DefaultNamespaces the informer is a wrapper, one informer
	// per namespace, no longer client-go's type.
	informer, err := cache.GetInformer(ctx, &corev1.Pod{})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "  with DefaultNamespaces, GetInformer gives a %T: one informer per namespace\n", informer)

	// The transform ran before the pod was stored: the server has its
	// managedFields, the cache does not.
	onServer, err := c.Client.CoreV1().Pods(c.Namespace).Get(ctx, "web-1", metav1.GetOptions{})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "  TransformStripManagedFields: managedFields on the server %d, in the cache %d\n",
		len(onServer.ManagedFields), len(pod.ManagedFields))
	return nil
}
