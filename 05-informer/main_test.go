package main

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"

	"github.com/informer-walkthrough/informer-walkthrough/internal/check/chaptertest"
	"github.com/informer-walkthrough/informer-walkthrough/internal/check/leakcheck"
	"github.com/informer-walkthrough/informer-walkthrough/internal/show"
)

// TestGolden runs the chapter as main does, on a fresh workshop cluster,
// and compares every line it prints with testdata/05-informer.golden.
func TestGolden(t *testing.T) { chaptertest.Golden(t, "05-informer", run) }

// TestREADME keeps the README's output blocks equal to the golden file
// and its code blocks equal to the chapter's code.
func TestREADME(t *testing.T) { chaptertest.README(t, "05-informer") }

// TestRealClusterShape runs the chapter as on a real cluster (no staged
// faults) and checks that it prints the golden file's steps but for
// numbers, and one "skipped" line where a step needs the workshop cluster.
func TestRealClusterShape(t *testing.T) { chaptertest.RealClusterShape(t, "05-informer", run) }

// TestProcessDeltaMatchesInformer pins step 4's claim that processDelta
// is processDeltas written out: the same reflector calls, made once by a
// real informer (through a scripted ListerWatcher) and once by hand on a
// RealFIFO, give the same handler calls. The relist after a 410 costs
// the reflector's backoff (0.8-1.6 s).
func TestProcessDeltaMatchesInformer(t *testing.T) {
	leakcheck.Verify(t)
	ctx := t.Context()
	lw := newScripted(demo("a", "10"), demo("b", "11"))
	lines := show.NewLines(ctx)
	_, ctrl := cache.NewInformerWithOptions(cache.InformerOptions{
		ListerWatcher: lw,
		ObjectType:    &corev1.ConfigMap{},
		Handler:       handler{lines: lines},
	})
	stop := start(ctx, ctrl.RunWithContext)
	defer stop()
	if !cache.WaitFor(ctx, "", ctrl.HasSyncedChecker()) {
		t.Fatal("the informer did not sync")
	}
	want := mustAwait(t, lines, 2)
	slices.Sort(want) // the informer's initial list is a map

	// Three watch events, then a 410 that makes the reflector relist;
	// by then c is gone from the list.
	w := lw.next(t)
	w.Add(demo("c", "12"))
	w.Modify(demo("a", "13"))
	w.Delete(demo("b", "14"))
	want = append(want, mustAwait(t, lines, 3)...)
	lw.setList("14", demo("a", "13"))
	gone := apierrors.NewResourceExpired("too old resource version")
	w.Error(&gone.ErrStatus)
	want = append(want, mustAwait(t, lines, 2)...)
	lw.next(t) // the relist ends with a new watch

	// The same calls by hand.
	fifo := cache.NewRealFIFOWithOptions(cache.RealFIFOOptions{
		KeyFunction:           cache.MetaNamespaceKeyFunc,
		AtomicEvents:          true,
		UnlockWhileProcessing: true,
		EmitDeltaTypeBookmark: true,
	})
	store := cache.NewStore(cache.DeletionHandlingMetaNamespaceKeyFunc)
	byHand := show.NewLines(ctx)
	h := handler{lines: byHand}
	calls := []func() error{
		func() error {
			return fifo.Replace([]any{demo("a", "10"), demo("b", "11")}, "11")
		},
		func() error { return fifo.Add(demo("c", "12")) },
		func() error { return fifo.Update(demo("a", "13")) },
		func() error { return fifo.Delete(demo("b", "14")) },
		func() error { return fifo.Replace([]any{demo("a", "13")}, "14") },
	}
	var got []string
	for _, call := range calls {
		if err := call(); err != nil {
			t.Fatal(err)
		}
		if _, err := fifo.Pop(func(obj any, initial bool) error {
			return processDelta(obj.(cache.Deltas)[0], store, h, initial)
		}); err != nil {
			t.Fatal(err)
		}
		got = append(got, byHand.Drain()...)
	}
	slices.Sort(got[:2])
	if !slices.Equal(got, want) {
		t.Errorf("by hand:\n%q\ninformer:\n%q", got, want)
	}
}

// mustAwait returns the next n lines, or fails t.
func mustAwait(t *testing.T, lines *show.Lines, n int) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	got, err := lines.Await(ctx, n)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// scripted is a ListerWatcher the test drives: List returns the current
// list and each Watch a fresh fake watcher, handed to the test. It opts
// out of watch-list, so the reflector LISTs then WATCHes.
type scripted struct {
	mu      sync.Mutex
	rv      string
	items   []corev1.ConfigMap
	watches chan *watch.RaceFreeFakeWatcher
}

func newScripted(objs ...*corev1.ConfigMap) *scripted {
	s := &scripted{watches: make(chan *watch.RaceFreeFakeWatcher, 10)}
	s.setList("11", objs...)
	return s
}

func (s *scripted) setList(rv string, objs ...*corev1.ConfigMap) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rv, s.items = rv, nil
	for _, o := range objs {
		s.items = append(s.items, *o)
	}
}

func (s *scripted) List(metav1.ListOptions) (runtime.Object, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	list := &corev1.ConfigMapList{Items: slices.Clone(s.items)}
	list.ResourceVersion = s.rv
	return list, nil
}

func (s *scripted) Watch(metav1.ListOptions) (watch.Interface, error) {
	w := watch.NewRaceFreeFake()
	s.watches <- w
	return w, nil
}

func (*scripted) IsWatchListSemanticsUnSupported() bool { return true }

// next returns the watcher of the informer's next Watch call.
func (s *scripted) next(t *testing.T) *watch.RaceFreeFakeWatcher {
	t.Helper()
	select {
	case w := <-s.watches:
		return w
	case <-time.After(10 * time.Second):
		t.Fatal("no Watch call in 10s")
		return nil
	}
}

var _ cache.ListerWatcher = &scripted{}
