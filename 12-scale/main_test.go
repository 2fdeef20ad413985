package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"

	"github.com/informer-walkthrough/informer-walkthrough/check/chaptertest"
	"github.com/informer-walkthrough/informer-walkthrough/check/golden"
	"github.com/informer-walkthrough/informer-walkthrough/check/leakcheck"
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
// line that the server ignored the selector, and the run goes on to
// step 3 and ends well.
func TestGateOff(t *testing.T) {
	if leakcheck.RunApart(t) {
		return // a whole run of the chapter, apart from the other tests
	}
	c := chaptertest.Start(t)
	out := string(chaptertest.Run(t, "12-scale", func(ctx context.Context, w io.Writer) error {
		return run(ctx, w, c)
	}))
	_, step2, _ := strings.Cut(out, "Step 2.")
	step2, _, _ = strings.Cut(step2, "\nStep 3.")
	want := "  the server ignored shardSelector (no metadata.shardInfo): its ShardedListAndWatch gate is off, so every shard would hold every pod\n"
	if _, after, _ := strings.Cut(step2, "\n"); after != want {
		t.Errorf("step 2 printed:\n%s\nwant its heading and:\n%s", step2, want)
	}
	// The whole run as on most real clusters, which have the gate off:
	// the real-cluster check (check/reliability) accepts it.
	golden.Assert(t, "12-scale-gate-off", []byte(out))
}

// TestInterruptStep3 presses Ctrl-C (cancels run's context) while
// replica-b leads: the run must end, its leader must release the Lease
// (holder "") before the chapter deletes it, and nothing may be left:
// no Lease, no goroutine.
func TestInterruptStep3(t *testing.T) {
	leakcheck.Verify(t)
	c := chaptertest.StartWith(t, workshop)
	leases := c.Client.CoordinationV1().Leases(c.Namespace)
	w, err := leases.Watch(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	out := &cancelAt{line: "replica-b leads", cancel: cancel}
	if err := run(ctx, out, c); !errors.Is(err, context.Canceled) {
		t.Fatalf("run returned %v, want context.Canceled; output:\n%s", err, out.buf.String())
	}
	var last *coordinationv1.Lease        // the Lease as it was deleted
	bound := time.After(10 * time.Second) // a Lease never deleted fails, not hangs
	for last == nil {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Fatal("the Lease watch ended before the Lease was deleted")
			}
			if ev.Type == watch.Deleted {
				last = ev.Object.(*coordinationv1.Lease)
			}
		case <-bound:
			t.Fatal("the Lease was not deleted within 10 s of the interrupt")
		}
	}
	if holder := ptr.Deref(last.Spec.HolderIdentity, "?"); holder != "" {
		t.Errorf("the Lease was deleted held by %q: not released", holder)
	}
	left, err := leases.List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(left.Items) > 0 {
		t.Errorf("left behind: %d Leases", len(left.Items))
	}
}

// cancelAt is the output of a run that cancels it once a line containing
// line has been printed.
type cancelAt struct {
	line   string
	cancel context.CancelFunc
	buf    bytes.Buffer
}

func (c *cancelAt) Write(p []byte) (int, error) {
	c.buf.Write(p)
	if strings.Contains(c.buf.String(), c.line) {
		c.cancel()
	}
	return len(p), nil
}
