package main

// Steps 4 and 5: controller-runtime's client. It reads from the cache,
// but what it is told not to, and writes to the server; a read after a
// write can wait for the write to reach the cache.

import (
	"context"
	"fmt"
	"io"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	crcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/informer-walkthrough/informer-walkthrough/internal/cluster"
	"github.com/informer-walkthrough/informer-walkthrough/internal/tap/crtap"
)

// readers are step 4's cache, started, and its two clients: both parts
// of the step read through them, and run stops the cache after both.
type readers struct {
	cache     crcache.Cache
	cl        client.Client // reads from the cache, but pods
	apiReader client.Client // reads from the server
	stop      func()        // stops the cache and waits for its informers
}

// cachedClient reads through the client: from the cache, or from the
// server for what the cache is told not to hold; writes go to the server.
// It returns the cache still running, for indexedList.
func cachedClient(ctx context.Context, out io.Writer, c *cluster.Cluster) (_ *readers, err error) {
	fmt.Fprintln(out, "\nStep 4. The client: reads from the cache, writes to the server")
	cache, err := crcache.New(c.Config, ownObjects(c))
	if err != nil {
		return nil, err
	}

	// Started as in step 1. On an error it is stopped here; otherwise
	// run stops it, once indexedList is done with it too.
	cacheCtx, stopCache := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { _ = cache.Start(cacheCtx) })
	stop := func() { stopCache(); wg.Wait() }
	defer func() {
		if err != nil {
			stop()
		}
	}()
	cache.WaitForCacheSync(ctx)

	// A client that reads from the cache, but pods, and one that has
	// no cache at all: the manager's APIReader is built the same way.
	// !+client
	cl, err := client.New(c.Config, client.Options{Cache: &client.CacheOptions{
		Reader:     cache,
		DisableFor: []client.Object{&corev1.Pod{}}, // always read live
	}})
	if err != nil {
		return nil, err
	}
	apiReader, err := client.New(c.Config, client.Options{}) // no cache: mgr.GetAPIReader()
	// !-client
	if err != nil {
		return nil, err
	}

	// The first Get starts the configmaps informer; once it has synced,
	// a Get sends nothing. An Update goes to the server.
	key := client.ObjectKey{Namespace: c.Namespace, Name: "web"}
	var cm corev1.ConfigMap
	if err := cl.Get(ctx, key, &cm); err != nil {
		return nil, err
	}
	c.ResetRequests()
	if err := cl.Get(ctx, key, &cm); err != nil {
		return nil, err
	}
	printRequests(out, "Get configmap/web (its informer synced):", c)
	cm.Data["mode"] = "v2"
	if err := cl.Update(ctx, &cm); err != nil {
		return nil, err
	}
	printRequests(out, "Update configmap/web:", c)
	if err := crtap.AwaitCached(ctx, cache, &cm); err != nil { // the watch brings it
		return nil, err
	}

	// Reads that bypass the cache: a kind in DisableFor, an
	// unstructured object, and the APIReader.
	var pod corev1.Pod
	if err := cl.Get(ctx, client.ObjectKey{Namespace: c.Namespace, Name: "web-1"}, &pod); err != nil {
		return nil, err
	}
	printRequests(out, "Get pod/web-1 (DisableFor):", c)
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ConfigMap"))
	if err := cl.Get(ctx, key, u); err != nil {
		return nil, err
	}
	printRequests(out, "Get configmap/web as unstructured:", c)
	if err := apiReader.Get(ctx, key, &cm); err != nil {
		return nil, err
	}
	printRequests(out, "APIReader Get configmap/web:", c)
	return &readers{cache: cache, cl: cl, apiReader: apiReader, stop: stop}, nil
}

// indexedList lists by a field: the cache needs an index (04's IndexFunc).
func indexedList(ctx context.Context, out io.Writer, c *cluster.Cluster, r *readers) error {
	cache, cl, apiReader := r.cache, r.cl, r.apiReader

	// Without an index, the cache refuses the field; the server refuses
	// it too, for its own reason: data.mode is no field it selects on.
	var list corev1.ConfigMapList
	byMode := client.MatchingFields{"data.mode": "v1"}
	err := cl.List(ctx, &list, client.InNamespace(c.Namespace), byMode)
	fmt.Fprintf(out, "  List MatchingFields data.mode=v1, from the cache: %v\n", err)
	err = apiReader.List(ctx, &list, client.InNamespace(c.Namespace), byMode)
	fmt.Fprintf(out, "  the same from the APIReader, to the server: %s (no field selector on data.mode)\n",
		apierrors.ReasonForError(err))

	// IndexField adds the index to the running informer; the List is
	// then answered from memory.
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
	cacheCtx, stopCache := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { _ = cache.Start(cacheCtx) })
	defer wg.Wait()
	defer stopCache()
	cache.WaitForCacheSync(ctx)

	// A consistent client, a first read (the informer starts), then an
	// Update the informer cannot see: the client's transport holds the
	// watch's bytes. A read that skips the wait gets the cache's object,
	// stale.
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

	// The consistent read waits until the informer has seen the
	// Update's resourceVersion: on a goroutine, so that the step can
	// show it waiting, then let the watch go.
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
