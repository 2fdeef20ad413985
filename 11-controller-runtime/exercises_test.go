package main

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	crcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/informer-walkthrough/informer-walkthrough/check/chaptertest"
)

// The checks of the exercises in exercises.go. Each is skipped while
// its function still returns errors.ErrUnsupported.

// notWritten skips t if err says the exercise is not written yet.
func notWritten(t *testing.T, err error, exercise string) {
	t.Helper()
	if errors.Is(err, errors.ErrUnsupported) {
		t.Skipf("%s is not written yet: write it in exercises.go "+
			"(reference answer: go test -tags solution ./11-controller-runtime -run Exercise)",
			exercise)
	}
}

// exerciseCache starts a cache of the chapter's objects on a fresh
// workshop cluster that holds configmaps web (team blue), db (team red)
// and a pod.
func exerciseCache(t *testing.T) (context.Context, crcache.Cache, string) {
	quietLogs()
	c := chaptertest.Start(t)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	t.Cleanup(cancel)
	if err := createFixtures(ctx, c); err != nil {
		t.Fatal(err)
	}
	cache, err := crcache.New(c.Config, ownObjects(c))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(startCache(ctx, cache))
	return ctx, cache, c.Namespace
}

// TestExercise1IndexByTeam lists by team before and after a ConfigMap
// changes team: the index must follow.
func TestExercise1IndexByTeam(t *testing.T) {
	ctx, cache, ns := exerciseCache(t)
	err := indexByTeam(ctx, cache)
	notWritten(t, err, "indexByTeam")
	if err != nil {
		t.Fatalf("indexByTeam: %v", err)
	}
	for team, want := range map[string][]string{"blue": {"web"}, "red": {"db"}, "green": nil} {
		var list corev1.ConfigMapList
		if err := cache.List(ctx, &list, client.InNamespace(ns), client.MatchingFields{"team": team}); err != nil {
			t.Fatalf("List team=%s: %v", team, err)
		}
		if got := names(&list); !slices.Equal(got, want) {
			t.Errorf("List team=%s: %v, want %v", team, got, want)
		}
	}
}

// TestExercise2WithMode checks the returned ConfigMap and that the
// cache's own object is untouched.
func TestExercise2WithMode(t *testing.T) {
	ctx, cache, ns := exerciseCache(t)
	key := client.ObjectKey{Namespace: ns, Name: "web"}
	cm, err := withMode(ctx, cache, key, "v9")
	notWritten(t, err, "withMode")
	if err != nil {
		t.Fatalf("withMode: %v", err)
	}
	if cm.Name != "web" || cm.Data["mode"] != "v9" {
		t.Errorf("withMode returned %s mode=%s, want web mode=v9", cm.Name, cm.Data["mode"])
	}
	var cached corev1.ConfigMap
	if err := cache.Get(ctx, key, &cached); err != nil {
		t.Fatal(err)
	}
	if cached.Data["mode"] != "v1" {
		t.Errorf("the cache now holds mode=%s: withMode wrote into the cache's object", cached.Data["mode"])
	}
}
