// Package heap is how chapters 09 and 13 weigh an informer's cache: the
// live heap after a full garbage collection, released one cache at a
// time, and a ratio printed on a coarse scale so that it reads the same
// on every run, under the race detector, and on a real cluster. It is
// measurement, not lesson: the exact bytes are in BENCHMARKS.md.
package heap

import (
	"fmt"
	"runtime"

	"k8s.io/client-go/tools/cache"
)

// ReleasePerObject drops the informers one at a time (it sets each
// element of caches to nil, so the caller must hold no other reference)
// and returns, for each, how much the live heap shrank, per object: what
// its cache (the objects, the indexer's maps, the informer itself) kept
// alive.
func ReleasePerObject(caches []cache.SharedIndexInformer, n int) []float64 {
	perObject := make([]float64, len(caches))
	before := Live()
	for i := range caches {
		caches[i] = nil
		after := Live()
		perObject[i] = float64(int64(before)-int64(after)) / float64(n)
		before = after
	}
	return perObject
}

// Live is the heap in use once garbage collection has nothing left to
// free. One collection is not always enough: an object with a finalizer
// (a closed connection's file) is freed by a later one.
func Live() uint64 {
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

// Scale is the 1-2-5 series: a ratio is printed as the interval of the
// series it falls in, coarse enough that the figures cannot flip from one
// run to the next (each measured ratio lies well inside its interval).
var Scale = []float64{0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 50, 100}

// Scale125 prints a ratio as "1" or as the interval of the 1-2-5 series
// it falls in, e.g. "0.2-0.5×".
func Scale125(r float64) string {
	if r > 0.999 && r < 1.001 {
		return "1"
	}
	for i := 1; i < len(Scale); i++ {
		if r < Scale[i] {
			return fmt.Sprintf("%g-%g×", Scale[i-1], Scale[i])
		}
	}
	return fmt.Sprintf("over %g×", Scale[len(Scale)-1])
}
