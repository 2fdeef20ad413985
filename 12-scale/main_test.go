package main

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/informer-walkthrough/informer-walkthrough/internal/check/chaptertest"
	"github.com/informer-walkthrough/informer-walkthrough/internal/cluster"
)

// TestGolden runs the chapter as main does, on a fresh workshop cluster,
// and compares every line it prints with testdata/12-scale.golden.
func TestGolden(t *testing.T) { chaptertest.GoldenWith(t, "12-scale", workshop, run) }

// workshop is the workshop cluster main starts: the gate on (extras).
var workshop = cluster.Options{Server: extras.Server}

// TestREADME keeps the README's output blocks equal to the golden file
// and its code blocks equal to the chapter's code.
func TestREADME(t *testing.T) { chaptertest.README(t, "12-scale") }

// TestRealClusterShape runs the chapter as on a real cluster and checks
// that it prints the golden file's steps but for numbers.
func TestRealClusterShape(t *testing.T) {
	chaptertest.RealClusterShapeWith(t, "12-scale", workshop, run)
}

// TestGateOff runs the chapter on a workshop cluster without the
// ShardedListAndWatch gate, kube-apiserver's default: step 2 says in one
// line that the server ignored the selector, and the run ends well.
func TestGateOff(t *testing.T) {
	c := chaptertest.Start(t)
	out := string(chaptertest.Run(t, "12-scale", func(ctx context.Context, w io.Writer) error {
		return run(ctx, w, c)
	}))
	_, step2, _ := strings.Cut(out, "Step 2.")
	want := "  the server ignored shardSelector (no metadata.shardInfo): its ShardedListAndWatch gate is off, so every shard would hold every pod\n"
	if _, after, _ := strings.Cut(step2, "\n"); after != want {
		t.Errorf("step 2 printed:\n%s\nwant its heading and:\n%s", step2, want)
	}
}
