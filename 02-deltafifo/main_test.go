package main

import (
	"testing"

	"github.com/informer-walkthrough/informer-walkthrough/check/chaptertest"
	"github.com/informer-walkthrough/informer-walkthrough/check/golden"
)

// TestGolden runs the chapter as main does and compares every line it
// prints with testdata/02-deltafifo.golden.
func TestGolden(t *testing.T) { chaptertest.GoldenInMemory(t, "02-deltafifo", run) }

// TestREADME keeps the README's output blocks equal to the golden file
// and its code blocks equal to the chapter's code, or to the copy of
// client-go's unexported code in internal/cachecopy that it teaches.
func TestREADME(t *testing.T) {
	golden.AssertQuoted(t, "02-deltafifo")
	golden.AssertCodeQuoted(t, "../internal/cachecopy")
}
