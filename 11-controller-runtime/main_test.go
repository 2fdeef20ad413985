package main

import (
	"context"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	crcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/informer-walkthrough/informer-walkthrough/check/chaptertest"
)

// TestGolden runs the chapter as main does, on a fresh workshop cluster,
// and compares every line it prints with testdata/11-controller-runtime.golden.
func TestGolden(t *testing.T) { chaptertest.Golden(t, "11-controller-runtime", run) }

// TestREADME keeps the README's output blocks equal to the golden file
// and its code blocks equal to the chapter's code.
func TestREADME(t *testing.T) { chaptertest.README(t, "11-controller-runtime") }

// TestRealClusterShape runs the chapter as on a real cluster and checks
// that it prints the golden file's steps but for numbers.
func TestRealClusterShape(t *testing.T) {
	chaptertest.RealClusterShape(t, "11-controller-runtime", run)
}

// BenchmarkCachedGet measures a cached Get of a ConfigMap (step 2): the
// indexer's GetByKey and a deep copy, or, with UnsafeDisableDeepCopy,
// no copy. The difference is the copy's cost (BENCHMARKS.md).
//
//	go test ./11-controller-runtime -run '^$' -bench CachedGet -benchmem
func BenchmarkCachedGet(b *testing.B) {
	quietLogs()
	c := chaptertest.Start(b)
	ctx := b.Context()
	if err := createFixtures(ctx, c); err != nil {
		b.Fatal(err)
	}
	cache, err := crcache.New(c.Config, ownObjects(c))
	if err != nil {
		b.Fatal(err)
	}
	defer startCache(ctx, cache)()
	key := client.ObjectKey{Namespace: c.Namespace, Name: "web"}
	for _, bc := range []struct {
		name string
		opts []client.GetOption
	}{{"DeepCopy", nil}, {"UnsafeDisableDeepCopy", []client.GetOption{client.UnsafeDisableDeepCopy}}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			var cm corev1.ConfigMap
			for b.Loop() {
				if err := cache.Get(ctx, key, &cm, bc.opts...); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// startCache runs a cache for a test until the returned stop is called,
// which waits for its informers to end: as each step starts its cache,
// written out (cache.go), with the wait for Start that a read needs.
func startCache(ctx context.Context, cache crcache.Cache) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { _ = cache.Start(ctx) })
	cache.WaitForCacheSync(ctx)
	return func() { cancel(); wg.Wait() }
}
