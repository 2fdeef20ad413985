package main

import (
	"context"
	"errors"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"

	"github.com/informer-walkthrough/informer-walkthrough/check/chaptertest"
	"github.com/informer-walkthrough/informer-walkthrough/internal/cluster"
	"github.com/informer-walkthrough/informer-walkthrough/internal/fixture"
)

// The checks of the exercises in exercises.go. Each is skipped while
// its function still returns errors.ErrUnsupported.

// notWritten skips t if err says the exercise is not written yet.
func notWritten(t *testing.T, err error, exercise string) {
	t.Helper()
	if errors.Is(err, errors.ErrUnsupported) {
		t.Skipf("%s is not written yet: write it in exercises.go "+
			"(reference answer: go test -tags solution ./06-factory -run Exercise)",
			exercise)
	}
}

// TestExercise1SyncedPodLister asks syncedPodLister for pods twice:
// from a factory nobody started, and from one already started with a
// deployment informer. Both times the lister must see the three pods.
func TestExercise1SyncedPodLister(t *testing.T) {
	for _, startedFirst := range []bool{false, true} {
		name := "fresh factory"
		if startedFirst {
			name = "factory already started"
		}
		t.Run(name, func(t *testing.T) {
			c := chaptertest.Start(t) // also fails the test on leaked goroutines
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			defer cancel()
			pods := c.Client.CoreV1().Pods(c.Namespace)
			for _, p := range []string{"web-1", "web-2", "api-1"} {
				if _, err := pods.Create(ctx, fixture.GatedPod(p, cluster.Labels("app", "web")), metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
			}

			infCtx, stop := context.WithCancel(ctx)
			factory := informers.NewSharedInformerFactoryWithOptions(
				c.Client, 0, informers.WithNamespace(c.Namespace))
			defer factory.Shutdown()
			defer stop()
			if startedFirst {
				factory.Apps().V1().Deployments().Informer()
				factory.Start(infCtx.Done())
				if err := factory.WaitForCacheSyncWithContext(ctx).AsError(); err != nil {
					t.Fatal(err)
				}
			}

			lister, err := syncedPodLister(infCtx, factory, c.Namespace)
			notWritten(t, err, "syncedPodLister")
			if err != nil {
				t.Fatalf("syncedPodLister: %v", err)
			}
			got, err := lister.List(labels.Everything())
			if err != nil {
				t.Fatal(err)
			}
			if n := names(got); n != "api-1 web-1 web-2" {
				t.Errorf("the lister lists %q, want \"api-1 web-1 web-2\" "+
					"(is the pod informer running? see step 4b)", n)
			}
		})
	}
}
