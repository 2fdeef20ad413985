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

	"github.com/informer-walkthrough/informer-walkthrough/check/chaptertest"
	"github.com/informer-walkthrough/informer-walkthrough/check/leakcheck"
	"github.com/informer-walkthrough/informer-walkthrough/internal/apiserver"
	"github.com/informer-walkthrough/informer-walkthrough/internal/show"
	"github.com/informer-walkthrough/informer-walkthrough/internal/tap"
)

// TestGolden runs the chapter as main does, on a fresh workshop cluster,
// and compares every line it prints with testdata/03-reflector.golden.
func TestGolden(t *testing.T) { chaptertest.Golden(t, "03-reflector", run) }

// TestREADME keeps the README's output blocks equal to the golden file
// and its code blocks equal to the chapter's code.
func TestREADME(t *testing.T) { chaptertest.README(t, "03-reflector") }

// TestRealClusterShape runs the chapter as on a real cluster (Server
// nil) and checks that it prints the golden file's steps but for
// numbers: every fault the chapter stages is made by its own client, so
// no step is skipped.
func TestRealClusterShape(t *testing.T) { chaptertest.RealClusterShape(t, "03-reflector", run) }

// TestVeryShortWatchRelists pins what step 4 avoids: a watch that ends
// before it carried any event counts as a VeryShortWatchError
// (reflector.go handleAnyWatch). The reflector does not resume from its
// resourceVersion then; Run backs off and relists (a watch-list from
// that resourceVersion), and every pod comes back as Replaced. On the
// chapter's fake clock no time passes, so only the event count decides;
// with a real clock, a watch older than 1 s would simply be resumed.
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
		Clock:   newClock(),
		Backoff: &wait.Backoff{Duration: backoff},
	})
	p.start(ctx)
	defer p.stop()
	if err := p.discard(ctx, 3, 1); err != nil { // stream, ADDED, BOOKMARK
		t.Fatal(err)
	}

	c.ResetRequests()
	c.Faults().EndWatches() // the stream has carried nothing since sync
	watched, popped, err := p.next(ctx, 4, 1)
	if err != nil {
		t.Fatal(err)
	}
	got := append(append(show.Requests(c.Requests(), nil), watched...), popped...)
	want := []string{
		"GET /api/v1/namespaces/informer-walkthrough/pods?watch=true&resourceVersion=2&resourceVersionMatch=NotOlderThan&sendInitialEvents=true&allowWatchBookmarks=true",
		"(stream ended)",
		"(new stream)",
		"ADDED     pod/web-1  Pending  rv=2",
		"BOOKMARK  rv=2  k8s.io/initial-events-end=true",
		"Replaced  informer-walkthrough/web-1  Pending  rv=2  initial=false",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("after ending an idle watch (-want +got):\n%s", diff)
	}
	p.stop()
	if err := p.leftovers(); err != nil {
		t.Error(err)
	}
}

// TestUnexpectedBackoffWaitsRealTime pins what keeps a 429 that no step
// staged from stalling the chapter: nothing steps the clock for it, so
// the reflector's wait (reflector.go watchList:
// <-r.clock.After(r.delayHandler())) runs in real time. The reflector
// backs off, watch-lists again, and syncs.
func TestUnexpectedBackoffWaitsRealTime(t *testing.T) {
	c := chaptertest.Start(t)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if _, err := c.Client.CoreV1().Pods(c.Namespace).Create(ctx, webPod("web-1"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	c.Faults().Answer(func(r apiserver.Request) bool { return r.Verb == "watch" },
		apierrors.NewTooManyRequests("Too many requests, please try again later.", 0))
	lw := cache.NewListWatchFromClient(c.Client.CoreV1().RESTClient(),
		"pods", c.Namespace, fields.Everything())
	p := wire(lw, true, cache.ReflectorOptions{
		Name:    "pods (unexpected 429)",
		Clock:   newClock(),
		Backoff: &wait.Backoff{Duration: backoff},
	})
	p.start(ctx)
	defer p.stop()
	// the refused request, then the stream, ADDED, BOOKMARK; one pod popped
	if err := p.discard(ctx, 4, 1); err != nil {
		t.Fatalf("after a 429 no step expected: %v", err)
	}
	if !p.fifo.HasSynced() {
		t.Error("the FIFO has not synced after the backoff")
	}
}

// TestRetryAfterNeverReachesTheReflector pins what step 5 leaves out: a
// 429 with a Retry-After header, as API Priority and Fairness sends it,
// is waited out and retried by the rest client itself (rest/request.go
// Watch; with_retry.go checkWait). The reflector never sees it: the tap
// reports no refused request, only the stream the retry opened, and the
// request log holds the same watch-list twice. The test takes the
// second the header asks for.
func TestRetryAfterNeverReachesTheReflector(t *testing.T) {
	if leakcheck.RunApart(t) {
		return // it waits out a Retry-After, apart from the other tests
	}
	c := chaptertest.Start(t)
	ctx := t.Context()
	if _, err := c.Client.CoreV1().Pods(c.Namespace).Create(ctx, webPod("web-1"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	c.Faults().Answer(func(r apiserver.Request) bool { return r.Verb == "watch" },
		apierrors.NewTooManyRequests("Too many requests, please try again later.", 1))
	lw := cache.NewListWatchFromClient(c.Client.CoreV1().RESTClient(),
		"pods", c.Namespace, fields.Everything())
	p := wire(lw, true, cache.ReflectorOptions{
		Name:    "pods (429 with Retry-After)",
		Clock:   newClock(),
		Backoff: &wait.Backoff{Duration: backoff},
	})
	c.ResetRequests()
	p.start(ctx)
	defer p.stop()
	watched, err := p.watchLines(ctx, 3)
	if err != nil {
		t.Fatal(err)
	}
	watchList := "GET /api/v1/namespaces/informer-walkthrough/pods?watch=true&resourceVersionMatch=NotOlderThan&sendInitialEvents=true&allowWatchBookmarks=true"
	got := append(show.Requests(c.Requests(), nil), watched...)
	want := []string{
		watchList, watchList,
		"(new stream)",
		"ADDED     pod/web-1  Pending  rv=2",
		"BOOKMARK  rv=2  k8s.io/initial-events-end=true",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("after a 429 with Retry-After (-want +got):\n%s", diff)
	}
}

// TestWatchListOptOut pins how step 2 chooses the path: the reflector
// asks watchlist.DoesClientNotSupportWatchListSemantics about the
// ListerWatcher it is given.
func TestWatchListOptOut(t *testing.T) {
	tp := tap.NewListerWatcher(&cache.ListWatch{}, nil)
	if watchlist.DoesClientNotSupportWatchListSemantics(tp) {
		t.Error("the plain tap opts out of watch-list; it should not")
	}
	if !watchlist.DoesClientNotSupportWatchListSemantics(listThenWatch{tp}) {
		t.Error("listThenWatch does not opt out of watch-list")
	}
}
