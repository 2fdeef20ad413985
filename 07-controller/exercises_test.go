package main

import (
	"errors"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/util/workqueue"
)

// The checks of the exercises in exercises.go. Each is skipped while
// its function still returns errors.ErrUnsupported.

// notWritten skips t if err says the exercise is not written yet.
func notWritten(t *testing.T, err error, exercise string) {
	t.Helper()
	if errors.Is(err, errors.ErrUnsupported) {
		t.Skipf("%s is not written yet: write it in exercises.go "+
			"(reference answer: go test -tags solution ./07-controller -run Exercise)",
			exercise)
	}
}

// TestExercise2Finish runs worker turns with finish on a queue whose
// rate limiter waits 0 s (AddRateLimited then adds at once, so the
// check never waits) and counts what finish asked of it.
func TestExercise2Finish(t *testing.T) {
	errSync := errors.New("sync failed")
	for _, tc := range []struct {
		name     string
		failures int // syncs that fail before one succeeds; -1: all
		tries    int
		dropped  bool
	}{
		{"fails twice, then works", 2, 3, false},
		{"never works", -1, 6, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			limiter := &countingLimiter{}
			q := workqueue.NewTypedRateLimitingQueue[string](limiter)
			defer q.ShutDown()
			const key, maxRetries = "ns/web", 5
			q.Add(key)

			tries := 0
			var dropErr error
			for q.Len() > 0 {
				k, _ := q.Get()
				tries++
				var err error
				if tc.failures < 0 || tries <= tc.failures {
					err = errSync
				}
				dropErr = finish(q, k, err, maxRetries)
				q.Done(k)
				notWritten(t, dropErr, "finish")
				if tries > 2*maxRetries {
					t.Fatalf("still requeued after %d tries", tries)
				}
			}
			if tries != tc.tries {
				t.Errorf("%d tries, want %d", tries, tc.tries)
			}
			switch {
			case tc.dropped && !errors.Is(dropErr, errSync):
				t.Errorf("last finish returned %v, want an error wrapping %q",
					dropErr, errSync)
			case !tc.dropped && dropErr != nil:
				t.Errorf("last finish returned %v, want nil", dropErr)
			}
			if n := q.NumRequeues(key); n != 0 {
				t.Errorf("NumRequeues after the last try = %d, want 0: "+
					"Forget was not called", n)
			}
			if limiter.whens != tc.tries-1 {
				t.Errorf("AddRateLimited called %d times, want %d",
					limiter.whens, tc.tries-1)
			}
		})
	}
}

// countingLimiter is a rate limiter that never makes a key wait and
// counts failures the way the real ones do: When adds one, Forget
// clears them.
type countingLimiter struct {
	mu       sync.Mutex
	failures map[string]int
	whens    int
}

func (l *countingLimiter) When(key string) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.failures == nil {
		l.failures = map[string]int{}
	}
	l.failures[key]++
	l.whens++
	return 0
}

func (l *countingLimiter) NumRequeues(key string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.failures[key]
}

func (l *countingLimiter) Forget(key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.failures, key)
}
