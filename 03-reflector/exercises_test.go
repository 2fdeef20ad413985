package main

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"

	"github.com/informer-walkthrough/informer-walkthrough/check/chaptertest"
	"github.com/informer-walkthrough/informer-walkthrough/internal/cluster"
	"github.com/informer-walkthrough/informer-walkthrough/internal/fixture"
)

// The checks of the exercises in exercises.go. Each is skipped while
// its function still returns errors.ErrUnsupported.

// webPod is a pod like the chapter's own.
func webPod(name string) *corev1.Pod {
	return fixture.GatedPod(name, cluster.Labels("app", "web"))
}

// makeChanges makes step 3's changes: it creates web-4, sets web-1
// Running and deletes web-2.
func makeChanges(ctx context.Context, c *cluster.Cluster) error {
	pods := c.Client.CoreV1().Pods(c.Namespace)
	if _, err := pods.Create(ctx, webPod("web-4"), metav1.CreateOptions{}); err != nil {
		return err
	}
	if err := setRunning(ctx, c, "web-1"); err != nil {
		return err
	}
	return pods.Delete(ctx, "web-2", metav1.DeleteOptions{})
}

// notWritten skips t if err says the exercise is not written yet.
func notWritten(t *testing.T, err error, exercise string) {
	t.Helper()
	if errors.Is(err, errors.ErrUnsupported) {
		t.Skipf("%s is not written yet: write it in exercises.go "+
			"(reference answer: go test -tags solution ./03-reflector -run Exercise)",
			exercise)
	}
}

// TestExercise4ListAndWatch runs the learner's listAndWatch while the
// pods change, then checks that its store holds what the server holds,
// and that it reports an expired resourceVersion as an error.
func TestExercise4ListAndWatch(t *testing.T) {
	t.Run("the store follows the server", func(t *testing.T) {
		c := chaptertest.Start(t) // also fails the test on leaked goroutines
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		defer cancel()
		pods := c.Client.CoreV1().Pods(c.Namespace)
		for _, name := range []string{"web-1", "web-2", "web-3"} {
			if _, err := pods.Create(ctx, webPod(name), metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		lw := cache.NewListWatchFromClient(c.Client.CoreV1().RESTClient(),
			"pods", c.Namespace, fields.Everything())
		store := &markerStore{Store: cache.NewStore(cache.MetaNamespaceKeyFunc),
			marker: "marker", seen: make(chan struct{})}

		runCtx, stop := context.WithCancel(ctx)
		defer stop()
		type result struct {
			rv  string
			err error
		}
		done := make(chan result, 1)
		go func() {
			rv, err := listAndWatch(runCtx, lw, store)
			done <- result{rv, err}
		}()

		// Step 3's changes, then a marker pod. Whether a change reaches
		// the store through the list or the watch, the store must end
		// up as the server is.
		if err := makeChanges(ctx, c); err != nil {
			t.Fatal(err)
		}
		marker, err := pods.Create(ctx, webPod("marker"), metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		select {
		case <-store.seen:
		case r := <-done:
			notWritten(t, r.err, "listAndWatch")
			t.Fatalf("listAndWatch returned before the marker pod "+
				"reached the store: rv=%q err=%v", r.rv, r.err)
		case <-ctx.Done():
			t.Fatal("the marker pod never reached the store")
		}
		stop()
		var r result
		select {
		case r = <-done:
		case <-ctx.Done():
			t.Fatal("listAndWatch did not return when its context ended")
		}
		if r.err != nil {
			t.Errorf("listAndWatch returned %v, want nil when its context ends", r.err)
		}
		if r.rv != marker.ResourceVersion {
			t.Errorf("last resourceVersion %q, want %q (the marker pod's)",
				r.rv, marker.ResourceVersion)
		}
		same, err := matchesServer(ctx, c, store)
		if err != nil {
			t.Fatal(err)
		}
		if !same {
			t.Errorf("the store differs from a fresh LIST: store has %s",
				describeStore(store))
		}
	})

	t.Run("410 Expired is an error", func(t *testing.T) {
		c := chaptertest.Start(t)
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		defer cancel()
		pods := c.Client.CoreV1().Pods(c.Namespace)
		if _, err := pods.Create(ctx, webPod("web-1"), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		lw := &compactingLW{
			ListWatch: cache.NewListWatchFromClient(c.Client.CoreV1().RESTClient(),
				"pods", c.Namespace, fields.Everything()),
			c: c.Server, pods: pods,
		}
		_, err := listAndWatch(ctx, lw, cache.NewStore(cache.MetaNamespaceKeyFunc))
		notWritten(t, err, "listAndWatch")
		if !apierrors.IsResourceExpired(err) && !apierrors.IsGone(err) {
			t.Errorf("listAndWatch returned %v, want the 410 Expired error "+
				"(did it watch from the list's resourceVersion?)", err)
		}
	})
}

// markerStore is a Store that says when the marker pod arrives.
type markerStore struct {
	cache.Store
	marker string
	seen   chan struct{}
	once   sync.Once
}

func (s *markerStore) check(obj any) {
	if m, err := meta.Accessor(obj); err == nil && m.GetName() == s.marker {
		s.once.Do(func() { close(s.seen) })
	}
}

func (s *markerStore) Add(obj any) error {
	defer s.check(obj)
	return s.Store.Add(obj)
}

func (s *markerStore) Update(obj any) error {
	defer s.check(obj)
	return s.Store.Update(obj)
}

func (s *markerStore) Replace(items []any, rv string) error {
	defer func() {
		for _, obj := range items {
			s.check(obj)
		}
	}()
	return s.Store.Replace(items, rv)
}

// compactingLW makes the history before the list disappear between the
// LIST and the WATCH: a change, then a compaction. A watch from the
// list's resourceVersion then gets ERROR 410 Expired.
type compactingLW struct {
	*cache.ListWatch
	c    interface{ CompactHistory() string }
	pods interface {
		Create(context.Context, *corev1.Pod, metav1.CreateOptions) (*corev1.Pod, error)
	}
}

func (lw *compactingLW) WatchWithContext(ctx context.Context,
	opts metav1.ListOptions) (watch.Interface, error) {
	if _, err := lw.pods.Create(ctx, webPod("late"), metav1.CreateOptions{}); err != nil {
		return nil, err
	}
	lw.c.CompactHistory()
	return lw.ListWatch.WatchWithContext(ctx, opts)
}
