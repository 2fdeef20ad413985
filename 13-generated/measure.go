package main

// What step 6 needs to measure the two caches, not what it teaches:
// chapter 09's measurement (09-metadata/measure.go), for two informers.
// The live heap after a full garbage collection, released one cache at
// a time, and the ratio printed on a coarse scale so that it reads the
// same on every run, under the race detector, and on a real cluster.
// The exact bytes are in BENCHMARKS.md (BenchmarkMemoCaches, in
// main_test.go).

import (
	"fmt"
	"runtime"

	"k8s.io/client-go/tools/cache"
)

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
// run to the next.
var scale = []float64{0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 50, 100}

// scale125 prints a ratio as "1" or as the interval of the 1-2-5 series
// it falls in, e.g. "2-5×".
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
