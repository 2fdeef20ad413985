package main

import (
	"bytes"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/watchlist"

	"github.com/informer-walkthrough/informer-walkthrough/internal/check/chaptertest"
	"github.com/informer-walkthrough/informer-walkthrough/internal/check/golden"
)

// TestGolden runs the chapter exactly as main does, on a fresh workshop
// cluster, and compares every line it prints with
// testdata/03-reflector.golden.
func TestGolden(t *testing.T) {
	// Registered first, so it runs last: after the cluster is closed,
	// nothing the chapter started may still be running.
	c := chaptertest.Start(t) // also fails the test on leaked goroutines
	var out bytes.Buffer
	if err := run(t.Context(), &out, c); err != nil {
		t.Fatalf("%v\noutput so far:\n%s", err, out.Bytes())
	}
	golden.Assert(t, "03-reflector", out.Bytes())
}

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
	if _, err := c.Client.CoreV1().Pods(c.Namespace).Create(ctx, newPod("web-1"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	lw := cache.NewListWatchFromClient(c.Client.CoreV1().RESTClient(),
		"pods", c.Namespace, fields.Everything())
	p := wire(lw, true, cache.ReflectorOptions{
		Name:    "pods (very short watch)",
		Clock:   newResyncClock(),
		Backoff: &wait.Backoff{Duration: backoff},
	})
	p.start(ctx)
	defer p.stop()
	if err := p.discard(ctx, 3, 1); err != nil { // stream, ADDED, BOOKMARK
		t.Fatal(err)
	}

	c.ResetRequests()
	c.Server.DropWatches() // the stream has carried nothing since sync
	frames, err := p.nextFrames(ctx, 3)
	if err != nil {
		t.Fatal(err)
	}
	popped, err := p.nextPops(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	var reqs []string
	for _, r := range c.Requests() {
		reqs = append(reqs, r.String())
	}
	got := append(append(reqs, frames...), popped...)
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

// TestREADMEQuotesOutput keeps the README's quoted output equal to what
// the chapter prints.
func TestREADMEQuotesOutput(t *testing.T) {
	golden.AssertQuoted(t, "03-reflector")
}
