package main

// What the memory step needs to measure the caches, not what it
// teaches: the live heap after a full garbage collection, released one
// cache at a time, and the ratios printed on a coarse scale so that they
// read the same on every run, under the race detector, and on a real
// cluster. The exact bytes are in BENCHMARKS.md
// (check/bench, BenchmarkInformerMemoryByKind).

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"

	"k8s.io/client-go/tools/cache"

	"github.com/informer-walkthrough/informer-walkthrough/internal/heap"
)

// printMemory prints, for each informer, what its cache holds and how
// much heap it keeps per object as a ratio to the first (typed), then
// the informers from the smallest cache to the largest. It releases the
// informers: caches holds nil afterwards.
func printMemory(out io.Writer, caches []cache.SharedIndexInformer, n int) {
	held := cachedTypes(caches)
	perObject := heap.ReleasePerObject(caches, n)
	fmt.Fprintf(out, "  %-22s %-46s %s\n", "informer", "its cache holds", "heap per pod, vs typed")
	for i, name := range variants {
		fmt.Fprintf(out, "  %-22s %-46s %s\n", name, held[i], heap.Scale125(perObject[i]/perObject[0]))
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
