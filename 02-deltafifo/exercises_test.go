package main

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"k8s.io/client-go/tools/cache"
)

// The checks of the exercises in exercises.go. Each is skipped while
// its function still returns errors.ErrUnsupported.

// notWritten skips t if err says the exercise is not written yet.
func notWritten(t *testing.T, err error, exercise string) {
	t.Helper()
	if errors.Is(err, errors.ErrUnsupported) {
		t.Skipf("%s is not written yet: write it in exercises.go "+
			"(reference answer: go test -tags solution ./02-deltafifo -run Exercise)",
			exercise)
	}
}

// TestExercise3PopBatch queues the calls of steps 1 to 3 on a RealFIFO
// built as informers build it, and drains it with the learner's
// drainBatches. A batch holds distinct keys only, and ends at the first
// repeated key or at an entry that cannot be batched (ReplacedAll,
// SyncAll, Bookmark); a batch of one goes to processSingle.
func TestExercise3PopBatch(t *testing.T) {
	for _, tc := range []struct {
		name  string
		calls func(cache.Queue) error
		want  []string
	}{
		{"step 1", tutorialCalls, []string{
			"batch [Added pod-1 v1] [Added pod-2 v1] [Added pod-3 v1]",
			"single [Updated pod-1 v2]",
			"single [Deleted pod-1 v2]",
		}},
		{"step 2", deleteCalls, []string{
			"batch [Deleted pod-9 v1] [Added pod-1 v1]",
			"single [Deleted pod-1 v1]",
			"single [Deleted pod-1 v1]",
			"single [Added pod-1 v2]",
			"single [Deleted pod-1 v2]",
		}},
		{"step 3", stepThreeCalls, []string{
			"single [ReplacedAll rv=10 pod-1 v1, pod-2 v1, pod-3 v1]",
			"single [Updated pod-1 v2]",
			"single [ReplacedAll rv=20 pod-1 v3, pod-2 v1]",
			"single [Bookmark rv=25]",
			"single [Updated pod-2 v2]",
			"single [SyncAll]",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := atomicFIFO()
			if err := tc.calls(q); err != nil {
				t.Fatal(err)
			}
			got, err := drainBatches(q)
			notWritten(t, err, "drainBatches")
			if err != nil {
				t.Fatalf("drainBatches: %v", err)
			}
			if !slices.Equal(words(got), tc.want) {
				t.Errorf("PopBatch calls:\n got  %q\n want %q", got, tc.want)
			}
			if !q.IsClosed() {
				t.Error("drainBatches left the queue open")
			}
		})
	}
}

// stepThreeCalls are step 3's calls, all on one queue.
func stepThreeCalls(q cache.Queue) error {
	return errors.Join(initialList(q), relist(q), resyncCalls(q))
}

// words normalises spacing: one space between words.
func words(lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = strings.Join(strings.Fields(l), " ")
	}
	return out
}

// The RealFIFO informers use supports batches; DeltaFIFO does not.
var _ cache.QueueWithBatch = (*cache.RealFIFO)(nil)
