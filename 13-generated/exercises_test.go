package main

import (
	"context"
	"errors"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	coursev1alpha1 "github.com/informer-walkthrough/informer-walkthrough/13-generated/apis/course/v1alpha1"
	"github.com/informer-walkthrough/informer-walkthrough/13-generated/generated/clientset/versioned"
	memoinformers "github.com/informer-walkthrough/informer-walkthrough/13-generated/generated/informers/externalversions/course/v1alpha1"
	"github.com/informer-walkthrough/informer-walkthrough/check/chaptertest"
	"github.com/informer-walkthrough/informer-walkthrough/internal/cluster"
)

// The checks of the exercises in exercises.go. Each is skipped while
// its function still returns errors.ErrUnsupported.

// notWritten skips t if err says the exercise is not written yet.
func notWritten(t *testing.T, err error, exercise string) {
	t.Helper()
	if errors.Is(err, errors.ErrUnsupported) {
		t.Skipf("%s is not written yet: write it in exercises.go "+
			"(reference answer: go test -tags solution ./13-generated -run Exercise)",
			exercise)
	}
}

// withMemos starts a workshop cluster serving the CRD, with step 1's
// three memos, and returns it with a generated clientset.
func withMemos(t testing.TB) (*cluster.Cluster, versioned.Interface) {
	t.Helper()
	c := chaptertest.StartWith(t, options) // also fails the test on leaked goroutines
	ctx := t.Context()
	if _, err := installCRD(ctx, io.Discard, c); err != nil {
		t.Fatal(err)
	}
	client, err := versioned.NewForConfig(c.Config)
	if err != nil {
		t.Fatal(err)
	}
	memos := client.CourseV1alpha1().Memos(c.Namespace)
	for _, m := range [][3]string{
		{"welcome", "a", "Welcome"}, {"standup", "a", "Stand-up"}, {"lunch", "b", "Lunch"},
	} {
		if _, err := memos.Create(ctx, newMemo(m[0], m[1], m[2]), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	return c, client
}

// TestExercise1TeamInformer runs teamInformer's informer for team a: its
// cache must hold welcome and standup only, indexed by namespace, and the
// server must have been asked for team=a.
func TestExercise1TeamInformer(t *testing.T) {
	c, client := withMemos(t)
	inf, err := teamInformer(client, c.Namespace, "a")
	notWritten(t, err, "teamInformer")
	if err != nil {
		t.Fatalf("teamInformer: %v", err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	c.ResetRequests()
	wg.Go(func() { inf.RunWithContext(ctx) })
	if !cache.WaitFor(ctx, "", inf.HasSyncedChecker()) {
		t.Fatal("the informer did not sync")
	}
	keys, err := inf.GetIndexer().IndexKeys(cache.NamespaceIndex, c.Namespace)
	if err != nil {
		t.Fatalf("no namespace index: %v", err)
	}
	slices.Sort(keys)
	want := []string{c.Namespace + "/standup", c.Namespace + "/welcome"}
	if !slices.Equal(keys, want) {
		t.Errorf("the cache holds %v, want %v", keys, want)
	}
	asked := false
	for _, r := range c.Requests() {
		if r.Resource == "memos.course.example.com" && strings.Contains(r.Query.Get("labelSelector"), "team=a") {
			asked = true
		}
	}
	if !asked {
		t.Error("no list or watch asked the server for team=a: filter on the server, with the tweak")
	}
}

// TestExercise2ByTeam runs a generated informer indexed with byTeam: team
// a's memos come out of the index, and a memo without a team label is
// under no value.
func TestExercise2ByTeam(t *testing.T) {
	if _, err := byTeam(newMemo("probe", "a", "")); errors.Is(err, errors.ErrUnsupported) {
		notWritten(t, err, "byTeam")
	}
	c, client := withMemos(t)
	untagged := newMemo("untagged", "a", "No team")
	delete(untagged.Labels, "team")
	if _, err := client.CourseV1alpha1().Memos(c.Namespace).Create(t.Context(), untagged, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	informer := memoinformers.NewFilteredMemoInformer(client, c.Namespace, 0,
		cache.Indexers{"team": byTeam}, nil)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	wg.Go(func() { informer.RunWithContext(ctx) })
	if !cache.WaitFor(ctx, "", informer.HasSyncedChecker()) {
		t.Fatal("the informer did not sync")
	}
	teamA, err := informer.GetIndexer().ByIndex("team", "a")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, obj := range teamA {
		names = append(names, obj.(*coursev1alpha1.Memo).Name)
	}
	slices.Sort(names)
	if want := []string{"standup", "welcome"}; !slices.Equal(names, want) {
		t.Errorf("ByIndex(team, a) = %v, want %v", names, want)
	}
	values := informer.GetIndexer().ListIndexFuncValues("team")
	slices.Sort(values)
	if want := []string{"a", "b"}; !slices.Equal(values, want) {
		t.Errorf("the team index's values are %v, want %v (a memo without the label is under none)", values, want)
	}
}
