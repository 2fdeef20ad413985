package main

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	corev1informers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/informer-walkthrough/informer-walkthrough/check/chaptertest"
	"github.com/informer-walkthrough/informer-walkthrough/check/leakcheck"
	"github.com/informer-walkthrough/informer-walkthrough/internal/cluster"
	"github.com/informer-walkthrough/informer-walkthrough/internal/fixture"
	"github.com/informer-walkthrough/informer-walkthrough/internal/tap"
)

// TestGolden runs the chapter as main does, on a fresh workshop cluster,
// and compares every line it prints with testdata/06-factory.golden.
func TestGolden(t *testing.T) { chaptertest.Golden(t, "06-factory", run) }

// TestREADME keeps the README's output blocks equal to the golden file
// and its code blocks equal to the chapter's code.
func TestREADME(t *testing.T) { chaptertest.README(t, "06-factory") }

// TestRealClusterShape runs the chapter as on a real cluster (no
// workshop-server hooks) and checks that it prints the golden file's
// steps but for numbers: no step is skipped.
func TestRealClusterShape(t *testing.T) { chaptertest.RealClusterShape(t, "06-factory", run) }

// TestFactoryKeepsFirstInformerPerType pins what sharing costs: the
// factory keys informers by Go type alone, so a second consumer that
// asks for pods with its own constructor (another label selector, other
// indexers) silently gets the first consumer's informer.
func TestFactoryKeepsFirstInformerPerType(t *testing.T) {
	c := chaptertest.Start(t)
	f := informers.NewSharedInformerFactoryWithOptions(
		c.Client, 0, informers.WithNamespace(c.Namespace))
	first := f.Core().V1().Pods().Informer()
	called := false
	second := f.InformerFor(&corev1.Pod{},
		func(client kubernetes.Interface, resync time.Duration) cache.SharedIndexInformer {
			called = true
			return corev1informers.NewPodInformer(
				client, "elsewhere", resync, cache.Indexers{})
		})
	if called {
		t.Error("InformerFor called the second constructor; want the existing informer")
	}
	if first.GetStore() != second.GetStore() {
		t.Error("InformerFor returned a different informer for *v1.Pod")
	}
}

// TestAccessorMakesNoInformer pins the mistake step 3 guards against:
// Core().V1().Pods() makes no informer, so Start starts nothing and
// WaitForCacheSync waits for nothing. Informer() or Lister() makes it,
// and only a later Start runs it.
func TestAccessorMakesNoInformer(t *testing.T) {
	c := chaptertest.Start(t) // also fails the test on leaked goroutines
	ctx, cancel := context.WithCancel(t.Context())
	f := informers.NewSharedInformerFactoryWithOptions(
		c.Client, 0, informers.WithNamespace(c.Namespace))
	defer f.Shutdown()
	defer cancel()

	pods := f.Core().V1().Pods()
	f.Start(ctx.Done())
	if got := f.WaitForCacheSync(ctx.Done()); len(got) != 0 {
		t.Errorf("after an accessor only, WaitForCacheSync = %v, want empty", got)
	}
	pods.Lister() // makes the informer, after Start
	if got := f.WaitForCacheSync(ctx.Done()); len(got) != 0 {
		t.Errorf("after Lister() but no Start, WaitForCacheSync = %v, want empty", got)
	}
	f.Start(ctx.Done())
	got := f.WaitForCacheSync(ctx.Done())
	if len(got) != 1 || !got[reflect.TypeOf(&corev1.Pod{})] {
		t.Errorf("after Start again, WaitForCacheSync = %v, want *v1.Pod=true", got)
	}
}

// TestRelistReachesOnlySyncingHandlers pins what README step 5 says of
// a relist: it calls OnUpdate(old, new) for every object it keeps, an
// object whose resourceVersion did not change is then a "sync", and a
// sync goes only to the handlers flagged as syncing. Every handler starts
// flagged; each resync tick re-flags them as "due now". So, with step 5's
// handlers, once the first tick has passed a relist's unchanged pods
// reach eager (due every second) and ignored (its informer never ticks),
// but not quiet (due in 10 minutes). Changed pods reach every handler.
//
// It is a test, not a step of the chapter, because it takes about two
// seconds: the first resync tick comes after one, and the relist only
// after client-go's relist backoff (0.8-1.6 s).
func TestRelistReachesOnlySyncingHandlers(t *testing.T) {
	if leakcheck.RunApart(t) {
		return // it waits on a resync tick and a relist's backoff, apart from the other tests
	}
	c := chaptertest.Start(t) // also fails the test on leaked goroutines
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	pods := c.Client.CoreV1().Pods(c.Namespace)
	for _, name := range []string{"web-1", "web-2", "api-1"} {
		pod := fixture.GatedPod(name, cluster.Labels("app", "web"))
		if _, err := pods.Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	factory := informers.NewSharedInformerFactoryWithOptions(c.Client,
		10*time.Minute, informers.WithNamespace(c.Namespace))
	noResync := informers.NewSharedInformerFactoryWithOptions(c.Client,
		0, informers.WithNamespace(c.Namespace))
	defer noResync.Shutdown()
	defer factory.Shutdown()
	defer cancel()

	quiet, eager := reporter(ctx, "quiet"), reporter(ctx, "eager")
	ignored := reporter(ctx, "ignored")
	inf := factory.Core().V1().Pods().Informer()
	_, err1 := inf.AddEventHandler(quiet)
	_, err2 := inf.AddEventHandlerWithResyncPeriod(eager, time.Second)
	_, err3 := noResync.Core().V1().Pods().Informer().
		AddEventHandlerWithResyncPeriod(ignored, time.Second)
	if err := errors.Join(err1, err2, err3); err != nil {
		t.Fatal(err)
	}
	factory.Start(ctx.Done())
	noResync.Start(ctx.Done())
	for _, f := range []informers.SharedInformerFactory{factory, noResync} {
		if err := f.WaitForCacheSyncWithContext(ctx).AsError(); err != nil {
			t.Fatal(err)
		}
	}
	// The first tick: eager is due and replayed; quiet is not due, and
	// from now on is flagged as not syncing.
	got, err := eager.Rec.CallLines(syncLine).Await(ctx, 3)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	want := []string{"resync pod/api-1", "resync pod/web-1", "resync pod/web-2"}
	if !slices.Equal(got, want) {
		t.Fatalf("eager at the first tick got %q, want %q", got, want)
	}

	// The outage, as in 05 step 6: the re-watches wait while web-1
	// changes and the history is compacted, then get 410 Expired; after
	// its backoff each informer relists.
	patch := func(name, tier string) {
		t.Helper()
		_, err := pods.Patch(ctx, name, types.StrategicMergePatchType,
			[]byte(`{"metadata":{"labels":{"tier":"`+tier+`"}}}`),
			metav1.PatchOptions{})
		if err != nil {
			t.Fatal(err)
		}
	}
	c.Server.HoldWatches()
	defer c.Server.ReleaseWatches()
	c.Server.DropWatches()
	patch("web-1", "gold")
	c.Server.CompactHistory()
	c.Server.ReleaseWatches()

	relisted := []string{"sync pod/api-1", "sync pod/web-2", "update pod/web-1"}
	for _, h := range []struct {
		name  string
		lines tap.Handler
		want  []string
	}{
		{"eager", eager, relisted},
		{"ignored", ignored, relisted},
		{"quiet", quiet, []string{"update pod/web-1"}},
	} {
		if got := awaitUpdates(ctx, t, h.lines, len(h.want)); !slices.Equal(got, h.want) {
			t.Errorf("%s got %q from the relist, want %q", h.name, got, h.want)
		}
	}
	// Every handler has been handed all it gets from the relist before
	// this change: the next update each sees is this one. (Had quiet
	// been given the unchanged pods too, they would come first.)
	patch("api-1", "gold")
	for name, lines := range map[string]tap.Handler{
		"eager": eager, "ignored": ignored, "quiet": quiet} {
		got := awaitUpdates(ctx, t, lines, 1)
		if want := []string{"update pod/api-1"}; !slices.Equal(got, want) {
			t.Errorf("%s: after the relist got %q, want %q", name, got, want)
		}
	}
}

// syncLine is an OnUpdate call a reporting handler got: "resync" when
// old and new are the same cached object (a resync replays the cache),
// "sync" when they are two objects with one resourceVersion (a relist
// found it unchanged), "update" otherwise. Other calls are "" (skipped).
func syncLine(c tap.HandlerCall) string {
	old, ok1 := c.Old.(*corev1.Pod)
	p, ok2 := c.Obj.(*corev1.Pod)
	switch {
	case c.Method != "OnUpdate" || !ok1 || !ok2:
		return ""
	case old == p:
		return "resync pod/" + p.Name
	case old.ResourceVersion == p.ResourceVersion:
		return "sync pod/" + p.Name
	}
	return "update pod/" + p.Name
}

// awaitUpdates returns the next n OnUpdate calls h gets that are not
// resync replays, sorted: a relist hands over its objects in no defined
// order. A resync tick may fall anywhere in a slow run; what it replays
// is beside the point here.
func awaitUpdates(ctx context.Context, t *testing.T, h tap.Handler, n int) []string {
	t.Helper()
	got, err := h.Rec.CallLines(func(c tap.HandlerCall) string {
		if c.Same() {
			return ""
		}
		return syncLine(c)
	}).Await(ctx, n)
	if err != nil {
		t.Fatalf("after %q: %v", got, err)
	}
	slices.Sort(got)
	return got
}
