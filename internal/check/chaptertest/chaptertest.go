// Package chaptertest runs a chapter in its tests exactly as its main
// does: on a fresh embedded workshop cluster, under the runner's guard,
// with its output compared with the golden file and its README checked
// against both the output and the code. Each test also fails if it leaves
// a goroutine behind.
package chaptertest

import (
	"bytes"
	"context"
	"io"
	"testing"

	"github.com/informer-walkthrough/informer-walkthrough/internal/check/golden"
	"github.com/informer-walkthrough/informer-walkthrough/internal/check/leakcheck"
	"github.com/informer-walkthrough/informer-walkthrough/internal/cluster"
	"github.com/informer-walkthrough/informer-walkthrough/internal/runner"
)

// Start connects t to a new workshop cluster, closed when t ends. It
// also fails t if goroutines started during it are still running once
// the cluster is closed.
func Start(t testing.TB) *cluster.Cluster {
	t.Helper()
	leakcheck.Verify(t) // first, so its check runs after Close
	c, err := cluster.Connect(context.Background(), cluster.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// Golden runs the chapter on a fresh workshop cluster and compares what
// it printed with testdata/<chapter>.golden.
func Golden(t *testing.T, chapter string, run cluster.RunFunc) {
	t.Helper()
	c := Start(t)
	golden.Assert(t, chapter, Run(t, chapter, func(ctx context.Context, out io.Writer) error {
		return run(ctx, out, c)
	}))
}

// GoldenInMemory is Golden for a chapter that needs no cluster.
func GoldenInMemory(t *testing.T, chapter string, run func(context.Context, io.Writer) error) {
	t.Helper()
	leakcheck.Verify(t)
	golden.Assert(t, chapter, Run(t, chapter, run))
}

// Run runs a chapter under the runner's guard, as main does, and returns
// what it printed; an error fails t.
func Run(t *testing.T, chapter string, run func(context.Context, io.Writer) error) []byte {
	t.Helper()
	ctx, cancel := runner.Guard(t.Context(), chapter)
	defer cancel()
	var out bytes.Buffer
	if err := run(ctx, &out); err != nil {
		t.Fatalf("%v\noutput so far:\n%s", err, out.Bytes())
	}
	return out.Bytes()
}

// README checks that the chapter's README.md quotes only what the
// chapter prints (its ```text blocks, from the golden file) and only the
// chapter's own code (its ```go blocks, from marked regions).
func README(t *testing.T, chapter string) {
	t.Helper()
	golden.AssertQuoted(t, chapter)
	golden.AssertCodeQuoted(t)
}
