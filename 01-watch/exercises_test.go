package main

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/informer-walkthrough/informer-walkthrough/check/chaptertest"
	"github.com/informer-walkthrough/informer-walkthrough/internal/cluster"
	"github.com/informer-walkthrough/informer-walkthrough/internal/fixture"
	"github.com/informer-walkthrough/informer-walkthrough/internal/show"
)

// The checks of the exercises in exercises.go. Each is skipped while
// its function still returns errors.ErrUnsupported.

// notWritten skips t if err says the exercise is not written yet.
func notWritten(t *testing.T, err error, exercise string) {
	t.Helper()
	if errors.Is(err, errors.ErrUnsupported) {
		t.Skipf("%s is not written yet: write it in exercises.go "+
			"(reference answer: go test -tags solution ./01-watch -run Exercise)",
			exercise)
	}
}

// TestExercise1FrontTier runs step 2 with the learner's watch: two
// pods, a LIST, then two changes to web-2 *before* the watch starts,
// then step 2's changes. A last pod, labelled tier=front, marks the end:
// every event before it is the answer.
func TestExercise1FrontTier(t *testing.T) {
	c := chaptertest.Start(t)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	pods := c.Client.CoreV1().Pods(c.Namespace)
	for _, name := range []string{"web-1", "web-2"} {
		pod := fixture.GatedPod(name, cluster.Labels("app", "web"))
		if _, err := pods.Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	list, err := pods.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Changed after the list: a watch from the list's resourceVersion
	// replays both changes; a watch from "now" would not.
	for _, p := range []struct{ patch, sub string }{
		{`{"metadata":{"labels":{"tier":"front"}}}`, ""},
		{`{"status":{"phase":"Running"}}`, "status"},
	} {
		var sub []string
		if p.sub != "" {
			sub = []string{p.sub}
		}
		_, err := pods.Patch(ctx, "web-2", types.MergePatchType,
			[]byte(p.patch), metav1.PatchOptions{}, sub...)
		if err != nil {
			t.Fatal(err)
		}
	}

	w, err := frontTier(ctx, pods, list.ResourceVersion)
	notWritten(t, err, "frontTier")
	if err != nil {
		t.Fatalf("frontTier: %v", err)
	}
	defer w.Stop()
	if err := makeChanges(ctx, io.Discard, c); err != nil {
		t.Fatal(err)
	}
	marker := fixture.GatedPod("marker", cluster.Labels("app", "web"))
	marker.Labels["tier"] = "front"
	if _, err := pods.Create(ctx, marker, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	var got []string
	for {
		ev, err := receive(ctx, w, 1)
		if err != nil {
			t.Fatalf("%v; events so far: %q", err, got)
		}
		if p, ok := ev[0].Object.(*corev1.Pod); ok &&
			p.Name == "marker" && ev[0].Type == watch.Added {
			break
		}
		got = append(got, show.Event(ev[0]))
	}
	want := []string{
		"ADDED     pod/web-2  Pending  rv=4",
		"MODIFIED  pod/web-2  Running  rv=5",
		"ADDED     pod/web-1  Pending  rv=7",
		"MODIFIED  pod/web-1  Running  rv=8",
		"MODIFIED  pod/web-2  Running  rv=9  (deletionTimestamp set)",
		"DELETED   pod/web-2  Running  rv=10  (deletionTimestamp set)",
	}
	if len(got) != len(want) {
		t.Fatalf("got %d events before the marker, want %d:\n got  %q\n want %q",
			len(got), len(want), got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("event %d:\n got  %s\n want %s", i+1, got[i], want[i])
		}
	}
}
