package main

import (
	"context"
	"errors"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/resourceversion"
	"k8s.io/client-go/informers"

	"github.com/informer-walkthrough/informer-walkthrough/check/chaptertest"
	"github.com/informer-walkthrough/informer-walkthrough/internal/apiserver"
)

// The checks of the exercises in exercises.go. Each is skipped while
// its function still returns errors.ErrUnsupported.

// notWritten skips t if err says the exercise is not written yet.
func notWritten(t *testing.T, err error, exercise string) {
	t.Helper()
	if errors.Is(err, errors.ErrUnsupported) {
		t.Skipf("%s is not written yet: write it in exercises.go "+
			"(reference answer: go test -tags solution ./10-lifecycle -run Exercise)",
			exercise)
	}
}

// TestExercise1FailFast runs a configmaps informer with the learner's
// handler against three refusals: 401 and 403 must end the wait with
// that error; a 500, once, must be retried until the informer syncs
// (after the reflector's backoff: 0.8-1.6 s).
func TestExercise1FailFast(t *testing.T) {
	configmaps := schema.GroupResource{Resource: "configmaps"}
	for _, tc := range []struct {
		name  string
		err   error
		times int // 0: every request
		stops func(error) bool
	}{
		{"401", apierrors.NewUnauthorized("token expired"), 0, apierrors.IsUnauthorized},
		{"403", apierrors.NewForbidden(configmaps, "", errors.New("no grant")), 0, apierrors.IsForbidden},
		{"500 once", apierrors.NewInternalError(errors.New("etcd timed out")), 1, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := chaptertest.Start(t)
			for _, verb := range []string{"watch", "list"} {
				c.Server.InjectFault(apiserver.Fault{Verb: verb, Resource: "configmaps",
					Times: tc.times, Err: tc.err})
			}
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			defer cancel()
			ctx, stop := context.WithCancelCause(ctx)
			factory := informers.NewSharedInformerFactoryWithOptions(c.Client, 0,
				informers.WithNamespace(c.Namespace))
			defer factory.Shutdown()
			defer stop(nil)
			err := failFast(factory.Core().V1().ConfigMaps().Informer(), stop)
			notWritten(t, err, "failFast")
			if err != nil {
				t.Fatalf("failFast: %v", err)
			}
			factory.StartWithContext(ctx)
			res := factory.WaitForCacheSyncWithContext(ctx)
			switch {
			case tc.stops == nil && res.Err != nil:
				t.Errorf("a %s should be retried until the informer syncs; the wait ended: %v",
					tc.name, res.Err)
			case tc.stops != nil && !tc.stops(res.Err):
				t.Errorf("after a %s the wait should end with it; got %v", tc.name, res.Err)
			}
		})
	}
}

// TestExercise2UpdateAndRead holds back, in the client, what the
// informer's watch sends (as step 5 does), so its store cannot catch up:
// updateAndRead must then wait (until its context ends), not return what
// the store had. Once the watch's bytes are let go, it must return the
// new version.
func TestExercise2UpdateAndRead(t *testing.T) {
	c := chaptertest.Start(t)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if _, err := createPods(ctx, c, "web-1"); err != nil {
		t.Fatal(err)
	}
	factory := informers.NewSharedInformerFactoryWithOptions(c.Client, 0,
		informers.WithNamespace(c.Namespace))
	defer factory.Shutdown()
	defer cancel()
	store := factory.Core().V1().Pods().Informer().GetStore()
	factory.StartWithContext(ctx)
	if err := factory.WaitForCacheSyncWithContext(ctx).AsError(); err != nil {
		t.Fatal(err)
	}
	pods := c.Client.CoreV1().Pods(c.Namespace)

	pod, err := updateAndRead(ctx, pods, store, "web-1", "v1")
	notWritten(t, err, "updateAndRead")
	if err != nil || pod.Labels["release"] != "v1" {
		t.Fatalf("updateAndRead v1: %v, %v", podLabels(pod), err)
	}

	c.Faults().HoldWatches()
	defer c.Faults().ReleaseWatches()
	short, cancelShort := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancelShort()
	pod, err = updateAndRead(short, pods, store, "web-1", "v2")
	if err == nil {
		t.Fatalf("with the watch held, updateAndRead returned %v: the store could not have the write yet",
			podLabels(pod))
	}
	c.Faults().ReleaseWatches()

	pod, err = updateAndRead(ctx, pods, store, "web-1", "v3")
	if err != nil || pod.Labels["release"] != "v3" {
		t.Fatalf("updateAndRead v3: %v, %v", podLabels(pod), err)
	}
	cached, _, _ := store.Get(pod)
	if cached != any(pod) {
		t.Error("updateAndRead returned a pod that is not the store's")
	}
	if order, err := resourceversion.CompareResourceVersion(store.LastStoreSyncResourceVersion(),
		pod.ResourceVersion); err != nil || order < 0 {
		t.Errorf("the store is at %s, behind the pod returned (%s)",
			store.LastStoreSyncResourceVersion(), pod.ResourceVersion)
	}
}

// podLabels prints a pod's labels, or that there is no pod.
func podLabels(pod *corev1.Pod) any {
	if pod == nil {
		return "no pod"
	}
	return pod.Labels
}
