package main

import (
	"testing"

	"github.com/informer-walkthrough/informer-walkthrough/internal/check/chaptertest"
)

// TestGolden runs the chapter as main does, on a fresh workshop cluster,
// and compares every line it prints with testdata/12-scale.golden.
func TestGolden(t *testing.T) { chaptertest.Golden(t, "12-scale", run) }

// TestREADME keeps the README's output blocks equal to the golden file
// and its code blocks equal to the chapter's code.
func TestREADME(t *testing.T) { chaptertest.README(t, "12-scale") }

// TestRealClusterShape runs the chapter as on a real cluster and checks
// that it prints the golden file's steps but for numbers.
func TestRealClusterShape(t *testing.T) {
	chaptertest.RealClusterShape(t, "12-scale", run)
}
