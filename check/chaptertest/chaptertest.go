// Package chaptertest runs a chapter in its tests exactly as its main
// does: on a fresh embedded workshop cluster, under the runner's guard,
// with its output compared with the golden file and its README checked
// against both the output and the code; and as on a real cluster, where
// no step can stage a fault. Each test also fails if it leaves a
// goroutine behind.
//
// Golden, GoldenWith, GoldenInMemory, RealClusterShape and
// RealClusterShapeWith are each the whole of a test: they run it in a
// process of its own (leakcheck.RunApart), so that a package's chapter
// runs, which wait on client-go's timers, wait at the same time.
package chaptertest

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/informer-walkthrough/informer-walkthrough/check/golden"
	"github.com/informer-walkthrough/informer-walkthrough/check/leakcheck"
	"github.com/informer-walkthrough/informer-walkthrough/internal/cluster"
	"github.com/informer-walkthrough/informer-walkthrough/internal/runner"
	"github.com/informer-walkthrough/informer-walkthrough/internal/trace"
)

// Start connects t to a new workshop cluster, closed when t ends. It
// also fails t if goroutines started during it are still running once
// the cluster is closed.
func Start(t testing.TB) *cluster.Cluster {
	t.Helper()
	return StartWith(t, cluster.Options{})
}

// StartWith is Start for a chapter whose main passes options to the
// cluster (cluster.MainWith's Extras.Server, in o.Server).
func StartWith(t testing.TB, o cluster.Options) *cluster.Cluster {
	t.Helper()
	leakcheck.Verify(t) // first, so its check runs after Close
	c, err := cluster.Connect(context.Background(), o)
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
	GoldenWith(t, chapter, cluster.Options{}, run)
}

// GoldenWith is Golden on a workshop cluster started with o (StartWith).
// The run is recorded as --trace records it, from the cluster's
// connection on, as main connects it, and the trace is compared with
// testdata/<chapter>.trace.golden.
func GoldenWith(t *testing.T, chapter string, o cluster.Options, run cluster.RunFunc) {
	t.Helper()
	if leakcheck.RunApart(t) {
		return
	}
	rec, uninstall := installTrace(t, chapter)
	defer uninstall()
	c := StartWith(t, o)
	out := Run(t, chapter, func(ctx context.Context, out io.Writer) error {
		return run(ctx, trace.Tap(out, rec), c)
	})
	rec.End()
	golden.Assert(t, chapter, out)
	golden.Assert(t, chapter+".trace", []byte(trace.Format(rec.Trace())))
}

// GoldenInMemory is Golden for a chapter that needs no cluster.
func GoldenInMemory(t *testing.T, chapter string, run func(context.Context, io.Writer) error) {
	t.Helper()
	if leakcheck.RunApart(t) {
		return
	}
	leakcheck.Verify(t)
	out, tr := RunTraced(t, chapter, run)
	golden.Assert(t, chapter, out)
	golden.Assert(t, chapter+".trace", []byte(trace.Format(tr)))
}

// RunTraced is Run with the run recorded as --trace records it: the
// chapter's output is the same (the golden files pin both), and the
// trace is what the page would show.
func RunTraced(t *testing.T, chapter string, run func(context.Context, io.Writer) error) ([]byte, trace.Trace) {
	t.Helper()
	rec, uninstall := installTrace(t, chapter)
	defer uninstall()
	out := Run(t, chapter, func(ctx context.Context, out io.Writer) error {
		return run(ctx, trace.Tap(out, rec))
	})
	rec.End()
	return out, rec.Trace()
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

func installTrace(t *testing.T, chapter string) (*trace.Recorder, func()) {
	t.Helper()
	rec := trace.New(chapter)
	uninstall, err := trace.Install(rec)
	if err != nil {
		t.Fatal(err)
	}
	return rec, uninstall
}

// README checks that the chapter's README.md quotes only what the
// chapter prints (its ```text blocks, from the golden file) and only the
// chapter's own code (its ```go blocks, from marked regions).
func README(t *testing.T, chapter string) {
	t.Helper()
	golden.AssertQuoted(t, chapter)
	golden.AssertCodeQuoted(t)
}

// RealClusterShape runs the chapter as it runs on a real cluster: on a
// workshop cluster the chapter is not told about (c.Server is nil, as
// with --kubeconfig), so that no step can use the workshop server's own
// hooks. It checks that the chapter prints the golden file's steps, each
// the same but for numbers (resourceVersions differ on a real cluster).
// No step may skip: a fault a step needs is made by the chapter's own
// client (cluster.ClientFaults) or by a second writer, the same on any
// cluster. Steps are separated by a blank line.
func RealClusterShape(t *testing.T, chapter string, run cluster.RunFunc) {
	t.Helper()
	RealClusterShapeWith(t, chapter, cluster.Options{}, run)
}

// RealClusterShapeWith is RealClusterShape on a workshop cluster started
// with o (StartWith): a real cluster configured as o configures it.
func RealClusterShapeWith(t *testing.T, chapter string, o cluster.Options, run cluster.RunFunc) {
	t.Helper()
	if leakcheck.RunApart(t) {
		return
	}
	c := StartWith(t, o)
	srv := c.Server
	c.Server = nil                       // what a real cluster looks like to run
	t.Cleanup(func() { c.Server = srv }) // so that Close stops it
	got := Run(t, chapter, func(ctx context.Context, out io.Writer) error {
		return run(ctx, out, c)
	})
	want, err := os.ReadFile(filepath.Join("testdata", chapter+".golden"))
	if err != nil {
		t.Fatal(err)
	}
	for _, problem := range golden.RealShape(got, want) {
		t.Error(problem)
	}
}
