package main

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/watchlist"

	"github.com/informer-walkthrough/informer-walkthrough/internal/apiserver"
	"github.com/informer-walkthrough/informer-walkthrough/internal/check/chaptertest"
	"github.com/informer-walkthrough/informer-walkthrough/internal/show"
)

// TestGolden runs the chapter as main does, on a fresh workshop cluster,
// and compares every line it prints with testdata/03-reflector.golden.
func TestGolden(t *testing.T) { chaptertest.Golden(t, "03-reflector", run) }

// TestREADME keeps the README's output blocks equal to the golden file
// and its code blocks equal to the chapter's code.
func TestREADME(t *testing.T) { chaptertest.README(t, "03-reflector") }

// TestRealClusterShape runs the chapter as on a real cluster (no staged
// faults) and checks that it prints the golden file's steps but for
// numbers, and one "skipped" line where a step needs the workshop cluster.
func TestRealClusterShape(t *testing.T) { chaptertest.RealClusterShape(t, "03-reflector", run) }

// TestVeryShortWatchRelists pins what step 4 avoids: a watch that the
// server closes before it carried any event counts as a
// VeryShortWatchError (reflector.go handleAnyWatch). The reflector does
// not re-watch from its resourceVersion then; Run backs off and relists
// (a watch-list from that resourceVersion), and every pod comes back as
// Replaced. On the chapter's fake clock no time passes, so only the
// event count decides; with a real clock, a watch older than 1 s would
// simply be re-opened.
func TestVeryShortWatchRelists(t *testing.T) {
	c := chaptertest.Start(t) // also fails the test on leaked goroutines
	ctx := t.Context()
	if _, err := c.Client.CoreV1().Pods(c.Namespace).Create(ctx, webPod("web-1"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	lw := cache.NewListWatchFromClient(c.Client.CoreV1().RESTClient(),
		"pods", c.Namespace, fields.Everything())
	p := wire(lw, true, cache.ReflectorOptions{
		Name:    "pods (very short watch)",
		Clock:   newTappedClock(c),
		Backoff: &wait.Backoff{Duration: backoff},
	})
	p.start(ctx)
	defer p.stop()
	if err := p.discard(ctx, 3, 1); err != nil { // stream, ADDED, BOOKMARK
		t.Fatal(err)
	}

	c.ResetRequests()
	c.Server.DropWatches() // the stream has carried nothing since sync
	watched, err := p.watched.Await(ctx, 3)
	if err != nil {
		t.Fatal(err)
	}
	popped, err := p.popped.Await(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	got := append(append(show.Requests(c.Requests(), nil), watched...), popped...)
	want := []string{
		"GET /api/v1/namespaces/informer-walkthrough/pods?watch=true&resourceVersion=2&resourceVersionMatch=NotOlderThan&sendInitialEvents=true&allowWatchBookmarks=true",
		"(new stream)",
		"ADDED     pod/web-1  Pending  rv=2",
		"BOOKMARK  rv=2  k8s.io/initial-events-end=true",
		"Replaced  informer-walkthrough/web-1  Pending  rv=2  initial=false",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("after dropping an idle watch (-want +got):\n%s", diff)
	}
	p.stop()
	if err := p.leftovers(); err != nil {
		t.Error(err)
	}
}

// TestRealCluster429 pins what the real-cluster path relies on: there
// nothing steps the chapter's clock for a backoff, so a 429 on the
// watch-list (from kube-apiserver's flow control) must not wait on it
// (reflector.go watchList: <-r.clock.After(r.delayHandler())). The
// reflector backs off in real time, watch-lists again, and syncs.
func TestRealCluster429(t *testing.T) {
	c := chaptertest.Start(t)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if _, err := c.Client.CoreV1().Pods(c.Namespace).Create(ctx, webPod("web-1"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	c.Server.InjectFault(apiserver.Fault{
		Verb: "watch", Resource: "pods", Times: 1,
		Err: apierrors.NewTooManyRequests("Too many requests, please try again later.", 0),
	})
	srv := c.Server
	c.Server = nil // what a real cluster looks like to newTappedClock
	clk := newTappedClock(c)
	c.Server = srv
	lw := cache.NewListWatchFromClient(c.Client.CoreV1().RESTClient(),
		"pods", c.Namespace, fields.Everything())
	p := wire(lw, true, cache.ReflectorOptions{
		Name:    "pods (429 on a real cluster)",
		Clock:   clk,
		Backoff: &wait.Backoff{Duration: backoff},
	})
	p.start(ctx)
	defer p.stop()
	// the refused request, then the stream, ADDED, BOOKMARK; one pod popped
	if err := p.discard(ctx, 4, 1); err != nil {
		t.Fatalf("after a 429, on the real clock: %v", err)
	}
	if !p.fifo.HasSynced() {
		t.Error("the FIFO has not synced after the re-watch")
	}
}

// TestWatchListOptOut pins how step 2 chooses the path: the reflector
// asks watchlist.DoesClientNotSupportWatchListSemantics about the
// ListerWatcher it is given.
func TestWatchListOptOut(t *testing.T) {
	tp := &tap{ListWatch: &cache.ListWatch{}}
	if watchlist.DoesClientNotSupportWatchListSemantics(tp) {
		t.Error("the plain tap opts out of watch-list; it should not")
	}
	if !watchlist.DoesClientNotSupportWatchListSemantics(listThenWatch{tp}) {
		t.Error("listThenWatch does not opt out of watch-list")
	}
}
