package main

import (
	"bytes"
	"testing"

	"go.uber.org/goleak"

	"github.com/informer-walkthrough/informer-walkthrough/internal/cluster"
	"github.com/informer-walkthrough/informer-walkthrough/internal/golden"
)

// TestGolden runs the chapter exactly as main does, on a fresh workshop
// cluster, and compares every line it prints with testdata/01-watch.golden.
func TestGolden(t *testing.T) {
	// Registered first, so it runs last: after the cluster is closed,
	// nothing the chapter started may still be running.
	t.Cleanup(func() { goleak.VerifyNone(t, goleak.IgnoreCurrent()) })
	c := cluster.ForTest(t)
	var out bytes.Buffer
	if err := run(t.Context(), &out, c); err != nil {
		t.Fatal(err)
	}
	golden.Assert(t, "01-watch", out.Bytes())
}

// TestREADMEQuotesOutput keeps the README's output block equal to the
// golden file.
func TestREADMEQuotesOutput(t *testing.T) {
	golden.AssertQuoted(t, "01-watch")
}
