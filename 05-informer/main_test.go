package main

import (
	"testing"

	"github.com/informer-walkthrough/informer-walkthrough/check/chaptertest"
)

// TestGolden runs the chapter as main does, on a fresh workshop cluster,
// and compares every line it prints with testdata/05-informer.golden.
func TestGolden(t *testing.T) { chaptertest.Golden(t, "05-informer", run) }

// TestREADME keeps the README's output blocks equal to the golden file
// and its code blocks equal to the chapter's code.
func TestREADME(t *testing.T) { chaptertest.README(t, "05-informer") }

// TestRealClusterShape runs the chapter as on a real cluster (no
// workshop-server hooks) and checks that it prints the golden file's
// steps but for numbers: no step is skipped.
func TestRealClusterShape(t *testing.T) { chaptertest.RealClusterShape(t, "05-informer", run) }
