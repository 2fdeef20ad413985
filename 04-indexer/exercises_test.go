package main

import (
	"errors"
	"maps"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"
)

// The checks of the exercises in exercises.go. Each is skipped while
// its function still returns errors.ErrUnsupported.

// notWritten skips t if err says the exercise is not written yet.
func notWritten(t *testing.T, err error, exercise string) {
	t.Helper()
	if errors.Is(err, errors.ErrUnsupported) {
		t.Skipf("%s is not written yet: write it in exercises.go "+
			"(reference answer: go test -tags solution ./04-indexer -run Exercise)",
			exercise)
	}
}

// TestExercise1PhaseIndex checks phaseIndex on its own, then in an
// Indexer over step 1's pods with phases set, through an Update that
// moves a pod from one phase to another.
func TestExercise1PhaseIndex(t *testing.T) {
	running := newPod("shop", "web-1", "web", "node-a", "nginx:1.27")
	running.Status.Phase = corev1.PodRunning
	_, err := phaseIndex(running)
	notWritten(t, err, "phaseIndex")

	for _, tc := range []struct {
		phase corev1.PodPhase
		want  []string
	}{
		{corev1.PodRunning, []string{"Running"}},
		{corev1.PodPending, []string{"Pending"}},
		{"", nil},
	} {
		p := newPod("shop", "web-1", "web", "", "nginx:1.27")
		p.Status.Phase = tc.phase
		got, err := phaseIndex(p)
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("phaseIndex(pod with phase %q) = %q, %v; want %q, nil",
				tc.phase, got, err, tc.want)
		}
	}
	if _, err := phaseIndex(&corev1.ConfigMap{}); err == nil {
		t.Error("phaseIndex(a ConfigMap) gave no error: the store would " +
			"file what is not a pod without a word")
	}

	idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc,
		cache.Indexers{"phase": phaseIndex})
	// By name: web-1 is in both namespaces. job-1 gets no phase.
	phases := map[string]corev1.PodPhase{
		"web-1": corev1.PodRunning, "web-2": corev1.PodRunning,
		"api-1": corev1.PodPending, "db-1": corev1.PodFailed,
	}
	for _, p := range examplePods() {
		p.Status.Phase = phases[p.Name]
		if err := idx.Add(p); err != nil {
			t.Fatal(err)
		}
	}
	check := func(when string, want map[string][]string) {
		t.Helper()
		values := sorted(idx.ListIndexFuncValues("phase"))
		if !slices.Equal(values, slices.Sorted(maps.Keys(want))) {
			t.Errorf("%s: phase values %q, want %q", when, values,
				slices.Sorted(maps.Keys(want)))
		}
		for phase, keys := range want {
			got, err := idx.IndexKeys("phase", phase)
			if err != nil || !slices.Equal(got, keys) {
				t.Errorf("%s: IndexKeys(phase, %s) = %q, %v; want %q",
					when, phase, got, err, keys)
			}
		}
	}
	// job-1 has no phase, so it is under no value at all.
	check("after Add", map[string][]string{
		"Running": {"blog/web-1", "shop/web-1", "shop/web-2"},
		"Pending": {"shop/api-1"},
		"Failed":  {"blog/db-1"},
	})

	// A copy with a new phase moves the key (never change the cached pod).
	api, err := getPod(idx, "shop/api-1")
	if err != nil {
		t.Fatal(err)
	}
	api = api.DeepCopy()
	api.Status.Phase = corev1.PodRunning
	if err := idx.Update(api); err != nil {
		t.Fatal(err)
	}
	check("after api-1 turned Running", map[string][]string{
		"Running": {"blog/web-1", "shop/api-1", "shop/web-1", "shop/web-2"},
		"Failed":  {"blog/db-1"},
	})
}
