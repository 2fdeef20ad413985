package main

// What the memory step needs to measure the caches, not what it
// teaches: the live heap after a full garbage collection, released one
// cache at a time, and the ratios printed on a coarse scale so that they
// read the same on every run, under the race detector, and on a real
// cluster. The exact bytes are in BENCHMARKS.md
// (internal/check/bench, BenchmarkInformerMemoryByKind).

import (
	"cmp"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"

	"k8s.io/client-go/tools/cache"
)

// printMemory prints, for each informer, what its cache holds and how
// much heap it keeps per object as a ratio to the first (typed), then
// the informers from the smallest cache to the largest. It releases the
// informers: caches holds nil afterwards.
func printMemory(out io.Writer, caches []cache.SharedIndexInformer, n int) {
	held := cachedTypes(caches)
	perObject := releasePerObject(caches, n)
	fmt.Fprintf(out, "  %-22s %-46s %s\n", "informer", "its cache holds", "heap per pod, vs typed")
	for i, name := range variants {
		fmt.Fprintf(out, "  %-22s %-46s %s\n", name, held[i], scale125(perObject[i]/perObject[0]))
	}
	order := slices.Clone(variants)
	slices.SortFunc(order, func(a, b string) int {
		return cmp.Compare(perObject[slices.Index(variants, a)], perObject[slices.Index(variants, b)])
	})
	fmt.Fprintf(out, "  smallest to largest: %s\n", strings.Join(order, " < "))
}

// cachedTypes describes what each cache holds, from one of its objects.
func cachedTypes(caches []cache.SharedIndexInformer) []string {
	held := make([]string, len(caches))
	for i, informer := range caches {
		if objs := informer.GetStore().List(); len(objs) > 0 {
			held[i] = typeName(objs[0])
		}
	}
	return held
}

// releasePerObject drops the informers one at a time and returns, for
// each, how much the live heap shrank, per object: what its cache (the
// objects, the indexer's maps, the informer itself) kept alive.
func releasePerObject(caches []cache.SharedIndexInformer, n int) []float64 {
	perObject := make([]float64, len(caches))
	before := liveHeap()
	for i := range caches {
		caches[i] = nil
		after := liveHeap()
		perObject[i] = float64(int64(before)-int64(after)) / float64(n)
		before = after
	}
	return perObject
}

// liveHeap is the heap in use once garbage collection has nothing left
// to free. One collection is not always enough: an object with a
// finalizer (a closed connection's file) is freed by a later one.
func liveHeap() uint64 {
	var m runtime.MemStats
	var last uint64
	for range 20 {
		runtime.GC()
		runtime.ReadMemStats(&m)
		if m.HeapAlloc == last {
			break
		}
		last = m.HeapAlloc
	}
	return m.HeapAlloc
}

// scale is the 1-2-5 series: a ratio is printed as the interval of the
// series it falls in, coarse enough that the figures cannot flip from one
// run to the next (each measured ratio lies well inside its interval).
var scale = []float64{0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 50, 100}

// scale125 prints a ratio as "1" or as the interval of the 1-2-5 series
// it falls in, e.g. "0.2-0.5×".
func scale125(r float64) string {
	if r > 0.999 && r < 1.001 {
		return "1"
	}
	for i := 1; i < len(scale); i++ {
		if r < scale[i] {
			return fmt.Sprintf("%g-%g×", scale[i-1], scale[i])
		}
	}
	return fmt.Sprintf("over %g×", scale[len(scale)-1])
}
