// Package leakcheck fails a test that leaves goroutines behind, and runs
// a test in a process of its own (RunApart), where it counts only its own.
package leakcheck

import (
	"testing"

	"go.uber.org/goleak"
)

// Verify snapshots the goroutines running now and, when the test and all
// its later cleanups are done, fails it if any other goroutine is still
// running. Call it first in a test: cleanups run last-in first-out, so
// this check then runs after everything the test started was stopped.
//
// (goleak.IgnoreCurrent must be taken here, at the start: taken inside the
// cleanup it would also ignore the goroutines the test leaked.)
func Verify(t testing.TB) {
	t.Helper()
	before := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, before) })
}
