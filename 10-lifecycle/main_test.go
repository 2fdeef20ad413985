package main

import (
	"context"
	"io"
	"os"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1informers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"

	"github.com/informer-walkthrough/informer-walkthrough/check/chaptertest"
	"github.com/informer-walkthrough/informer-walkthrough/check/leakcheck"
	"github.com/informer-walkthrough/informer-walkthrough/internal/tap"
)

// TestGolden runs the chapter as main does, on a fresh workshop cluster,
// and compares every line it prints with testdata/10-lifecycle.golden.
func TestGolden(t *testing.T) { chaptertest.Golden(t, "10-lifecycle", run) }

// TestREADME keeps the README's output blocks equal to the golden file
// and its code blocks equal to the chapter's code.
func TestREADME(t *testing.T) { chaptertest.README(t, "10-lifecycle") }

// TestRealClusterShape runs the chapter as it runs on a real cluster (no
// server-side fault injection) and checks that steps 2 to 5 print what
// the golden file says, apart from resourceVersion numbers: step 5 holds
// its events in the client, which works the same on both. Step 1 is left
// out: its 403 comes from RBAC on a real cluster, which the workshop
// cluster does not have.
func TestRealClusterShape(t *testing.T) {
	c := chaptertest.Start(t)
	srv := c.Server
	c.Server = nil                       // what a real cluster looks like to run
	t.Cleanup(func() { c.Server = srv }) // so that Close stops it
	got := string(chaptertest.Run(t, "10-lifecycle", func(ctx context.Context, out io.Writer) error {
		return run(ctx, out, c)
	}))
	want, err := os.ReadFile("testdata/10-lifecycle.golden")
	if err != nil {
		t.Fatal(err)
	}
	gotSteps, wantSteps := steps(got), steps(string(want))
	if len(gotSteps) != len(wantSteps) {
		t.Fatalf("%d steps, want %d:\n%s", len(gotSteps), len(wantSteps), got)
	}
	for i := 1; i < len(gotSteps); i++ {
		if g, w := maskRV(gotSteps[i]), maskRV(wantSteps[i]); g != w {
			t.Errorf("step %d differs beyond resourceVersions:\n got:\n%s\nwant:\n%s", i+1, g, w)
		}
	}
}

func steps(s string) []string { return strings.Split(strings.TrimSpace(s), "\n\n") }

// maskRV replaces resourceVersion numbers, which differ on a real cluster.
func maskRV(s string) string {
	return regexp.MustCompile(`(rv=|resourceVersion |store |write |server's: |at |waitForStore\()\d+( \d+)*`).
		ReplaceAllString(s, "${1}N")
}

// TestRemoveEventHandlerDropsWhatWaits pins what step 4 says about
// RemoveEventHandler: it returns while the handler is still inside a
// call, the call runs to its end, and the notifications already queued
// behind that call are never delivered. ShutDownEventHandler then
// returns at once, since the handler has stopped.
func TestRemoveEventHandlerDropsWhatWaits(t *testing.T) {
	leakcheck.Verify(t)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-2", Namespace: "ns"}}
	client := fake.NewSimpleClientset(pod)
	informer := corev1informers.NewPodInformer(client, "ns", 0, nil)
	rec := tap.NewRecorder(ctx)
	held, other := holdUpdates(rec, "held", 3), holdUpdates(rec, "other", 3)
	heldReg, _ := informer.AddEventHandler(tap.Handler{Rec: rec, Name: "held"})
	_, _ = informer.AddEventHandler(tap.Handler{Rec: rec, Name: "other"})
	done := make(chan struct{})
	go func() { defer close(done); informer.RunWithContext(ctx) }()
	defer func() { cancel(); <-done }()
	cache.WaitFor(ctx, "", informer.HasSyncedChecker())

	update := func(release string) {
		t.Helper()
		p := pod.DeepCopy()
		p.Labels = map[string]string{"release": release}
		if _, err := client.CoreV1().Pods("ns").Update(ctx, p, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	await := func(want ...string) {
		t.Helper()
		got, err := rec.Render(heldLine).Await(ctx, len(want))
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(got)
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Fatalf("got %q, want %q", got, want)
		}
	}
	update("v1")
	await("held: in OnUpdate web-2 release=v1", "other: in OnUpdate web-2 release=v1")
	// v2 and v3 queue behind held's first call. Once other has had v3,
	// the informer has handed v3 (and v2 before it) to held's listener
	// too: it distributes one notification to every listener in turn.
	update("v2")
	update("v3")
	other.Release()
	await("other: OnUpdate returns", "other: in OnUpdate web-2 release=v2")
	other.Release()
	await("other: OnUpdate returns", "other: in OnUpdate web-2 release=v3")

	if err := informer.RemoveEventHandler(heldReg); err != nil {
		t.Fatal(err)
	}
	if got := heldSoFar(rec); len(got) != 0 {
		t.Fatalf("RemoveEventHandler returned after %q; held's call cannot end before Release", got)
	}
	// pop, the goroutine that feeds held, returns when its select sees
	// its input closed; were held ready for v2 at that instant, the select
	// could as well hand v2 on (the README says so). So let held's call
	// end only once pop has returned: one pop left, other's. Without this
	// wait the test pinned the scheduler (a loaded -race run once gave
	// held v2, which it then held until the deadline).
	awaitGoroutines(ctx, t, "k8s.io/client-go/tools/cache.(*processorListener).pop(", 1)
	held.Release()
	await("held: OnUpdate returns")
	// ShutDownEventHandler waits until held's goroutine has ended: after
	// it, every line held will ever send has been sent.
	shutDown := make(chan error, 1)
	go func() { shutDown <- cache.ShutDownEventHandler(informer, heldReg) }()
	select {
	case err := <-shutDown:
		if err != nil {
			t.Fatal(err)
		}
	case <-ctx.Done():
		t.Fatal("ShutDownEventHandler did not return after the handler's call ended")
	}
	if got := heldSoFar(rec); len(got) != 0 {
		t.Errorf("after RemoveEventHandler, held still got %q; v2 and v3 should be dropped", got)
	}
	other.Release()
}

// awaitGoroutines waits until n goroutines are in the function whose
// stack frames start with frame.
func awaitGoroutines(ctx context.Context, t *testing.T, frame string, n int) {
	t.Helper()
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	buf := make([]byte, 1<<20)
	for {
		stacks := string(buf[:runtime.Stack(buf, true)])
		got := 0
		for _, l := range strings.Split(stacks, "\n") {
			if strings.HasPrefix(l, frame) {
				got++
			}
		}
		if got == n {
			return
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			t.Fatalf("%d goroutines in %s, waiting for %d", got, frame, n)
		}
	}
}

// TestShutDownEventHandlerWaits pins that ShutDownEventHandler does not
// return while the handler is inside a call. It runs in a synctest
// bubble: synctest.Wait returns once every goroutine of the test is
// blocked, so "not returned yet" is a fact, not a timeout.
func TestShutDownEventHandlerWaits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-2", Namespace: "ns"}}
		client := fake.NewSimpleClientset(pod)
		informer := corev1informers.NewPodInformer(client, "ns", 0, nil)
		rec := tap.NewRecorder(ctx)
		h := holdUpdates(rec, "h", 1)
		reg, _ := informer.AddEventHandler(tap.Handler{Rec: rec, Name: "h"})
		done := make(chan struct{})
		go func() { defer close(done); informer.RunWithContext(ctx) }()
		defer func() { cancel(); <-done }()
		cache.WaitFor(ctx, "", reg.HasSyncedChecker())
		p := pod.DeepCopy()
		p.Labels = map[string]string{"release": "v1"}
		if _, err := client.CoreV1().Pods("ns").Update(ctx, p, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := rec.Render(heldLine).Await(ctx, 1); err != nil {
			t.Fatal(err)
		}
		shutDown := make(chan error, 1)
		go func() { shutDown <- cache.ShutDownEventHandler(informer, reg) }()
		synctest.Wait()
		select {
		case <-shutDown:
			t.Fatal("ShutDownEventHandler returned while its handler was inside OnUpdate")
		default:
		}
		h.Release()
		if err := <-shutDown; err != nil {
			t.Fatal(err)
		}
		if got := heldSoFar(rec); len(got) != 1 || got[0] != "h: OnUpdate returns" {
			t.Errorf("after ShutDownEventHandler: %q, want the call's end", got)
		}
	})
}
