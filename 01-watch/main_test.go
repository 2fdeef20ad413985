package main

import (
	"bytes"
	"testing"

	"github.com/informer-walkthrough/informer-walkthrough/internal/clustertest"
	"github.com/informer-walkthrough/informer-walkthrough/internal/golden"
)

// TestGolden runs the chapter exactly as main does, on a fresh workshop
// cluster, and compares every line it prints with testdata/01-watch.golden.
func TestGolden(t *testing.T) {
	c := clustertest.Start(t) // also fails the test on leaked goroutines
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
