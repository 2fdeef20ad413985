package main

// Focused tests of the queue behaviour the chapter shows: each pins one
// claim of the README more sharply than the golden output can.

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"k8s.io/client-go/tools/cache"

	"github.com/informer-walkthrough/informer-walkthrough/internal/show"
)

// popped is what one Pop handed to its process function.
type popped struct {
	deltas  cache.Deltas
	initial bool
	// synced says whether the queue's HasSyncedChecker was already
	// done while the process function ran.
	synced bool
}

// pop pops one entry. Only call it on a queue known to be non-empty.
func pop(t *testing.T, q cache.Queue) popped {
	t.Helper()
	var p popped
	_, err := q.Pop(func(obj any, isInInitialList bool) error {
		p.deltas = obj.(cache.Deltas)
		p.initial = isInInitialList
		select {
		case <-q.HasSyncedChecker().Done():
			p.synced = true
		default:
		}
		return nil
	})
	if err != nil {
		t.Fatalf("Pop: %v", err)
	}
	return p
}

// assertEmpty proves nothing is left: once closed, Pop on an empty
// queue returns ErrFIFOClosed, while a queued entry would come out.
func assertEmpty(t *testing.T, q cache.Queue) {
	t.Helper()
	q.Close()
	_, err := q.Pop(func(obj any, _ bool) error {
		t.Errorf("queue still held %s", show.Deltas(obj.(cache.Deltas)))
		return nil
	})
	if !errors.Is(err, cache.ErrFIFOClosed) {
		t.Errorf("Pop on closed queue: err=%v, want ErrFIFOClosed", err)
	}
}

func newDeltaFIFO(known cache.KeyListerGetter, replaced bool) *cache.DeltaFIFO {
	return cache.NewDeltaFIFOWithOptions(cache.DeltaFIFOOptions{
		KeyFunction:           podKey,
		KnownObjects:          known,
		EmitDeltaTypeReplaced: replaced,
	})
}

// atomicFIFO is a RealFIFO with the options informers use by default
// in v0.37, spelled out so the test does not depend on the gates.
func atomicFIFO() *cache.RealFIFO {
	return cache.NewRealFIFOWithOptions(cache.RealFIFOOptions{
		KeyFunction:           podKey,
		AtomicEvents:          true,
		UnlockWhileProcessing: true,
		EmitDeltaTypeBookmark: true,
	})
}

func storeWith(t *testing.T, pods ...Pod) cache.Store {
	t.Helper()
	s := cache.NewStore(podKey)
	for _, p := range pods {
		if err := s.Add(p); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

func TestDeltaFIFODeleteDedup(t *testing.T) {
	t.Run("only consecutive Deleted collapse, keeping the older", func(t *testing.T) {
		q := newDeltaFIFO(nil, false)
		for _, err := range []error{
			q.Add(pod("pod-1", 1)),
			q.Delete(pod("pod-1", 1)),
			q.Delete(pod("pod-1", 2)), // collapses
			q.Add(pod("pod-1", 3)),
			q.Delete(pod("pod-1", 3)), // stays: an Added came between
		} {
			if err != nil {
				t.Fatal(err)
			}
		}
		got := show.Deltas(pop(t, q).deltas)
		want := "[Added pod-1 v1] [Deleted pod-1 v1] [Added pod-1 v3] [Deleted pod-1 v3]"
		if got != want {
			t.Errorf("deltas = %s, want %s", got, want)
		}
		assertEmpty(t, q)
	})

	t.Run("a real Deleted replaces a queued tombstone", func(t *testing.T) {
		q := newDeltaFIFO(storeWith(t, pod("pod-1", 1)), true)
		// A relist without pod-1 queues a tombstone; the watch's own
		// DELETED, arriving later, carries the real final state.
		if err := q.Replace(nil, "5"); err != nil {
			t.Fatal(err)
		}
		if err := q.Delete(pod("pod-1", 2)); err != nil {
			t.Fatal(err)
		}
		if got, want := show.Deltas(pop(t, q).deltas), "[Deleted pod-1 v2]"; got != want {
			t.Errorf("deltas = %s, want %s", got, want)
		}
		assertEmpty(t, q)
	})

	t.Run("Delete of an unknown key is dropped", func(t *testing.T) {
		q := newDeltaFIFO(nil, false)
		if err := q.Delete(pod("pod-9", 1)); err != nil {
			t.Fatal(err)
		}
		assertEmpty(t, q)
	})

	t.Run("Delete of a key only KnownObjects has is queued", func(t *testing.T) {
		q := newDeltaFIFO(storeWith(t, pod("pod-1", 1)), true)
		if err := q.Delete(pod("pod-1", 1)); err != nil {
			t.Fatal(err)
		}
		if got, want := show.Deltas(pop(t, q).deltas), "[Deleted pod-1 v1]"; got != want {
			t.Errorf("deltas = %s, want %s", got, want)
		}
		assertEmpty(t, q)
	})

	t.Run("RealFIFO neither collapses nor drops", func(t *testing.T) {
		q := atomicFIFO()
		for _, p := range []Pod{pod("pod-9", 1), pod("pod-1", 1), pod("pod-1", 1)} {
			if err := q.Delete(p); err != nil {
				t.Fatal(err)
			}
		}
		var got []string
		for range 3 {
			got = append(got, show.Deltas(pop(t, q).deltas))
		}
		want := []string{"[Deleted pod-9 v1]", "[Deleted pod-1 v1]", "[Deleted pod-1 v1]"}
		if !slices.Equal(got, want) {
			t.Errorf("pops = %q, want %q", got, want)
		}
		assertEmpty(t, q)
	})
}

func TestDeltaFIFOReplaceTombstones(t *testing.T) {
	for _, tc := range []struct {
		emitReplaced bool
		want         string
	}{
		{true, "Replaced"},
		{false, "Sync"},
	} {
		name := fmt.Sprintf("EmitDeltaTypeReplaced=%v", tc.emitReplaced)
		t.Run(name, func(t *testing.T) {
			// pod-2 is known to the consumer, pod-3 only queued; the
			// relist has neither.
			known := storeWith(t, pod("pod-1", 1), pod("pod-2", 1))
			q := newDeltaFIFO(known, tc.emitReplaced)
			if err := q.Add(pod("pod-3", 4)); err != nil {
				t.Fatal(err)
			}
			if err := q.Replace([]any{pod("pod-1", 2)}, "7"); err != nil {
				t.Fatal(err)
			}
			got := map[string]cache.Deltas{}
			for range 3 {
				d := pop(t, q).deltas
				key, err := podKey(d.Newest().Object)
				if err != nil {
					t.Fatal(err)
				}
				got[key] = d
			}
			assertEmpty(t, q)

			if d := got["pod-1"]; len(d) != 1 || d[0].Type != cache.DeltaType(tc.want) {
				t.Errorf("pod-1: %s, want one %s", show.Deltas(d), tc.want)
			}
			// The tombstone's Obj is the last state the FIFO knew:
			// the newest queued delta, else the KnownObjects entry.
			wantTomb := map[string]Pod{"pod-2": pod("pod-2", 1), "pod-3": pod("pod-3", 4)}
			for k, obj := range wantTomb {
				d := got[k].Newest()
				if d == nil || d.Type != cache.Deleted {
					t.Errorf("%s: %s, want a Deleted last", k, show.Deltas(got[k]))
					continue
				}
				tomb, ok := d.Object.(cache.DeletedFinalStateUnknown)
				if !ok || tomb.Key != k || tomb.Obj != obj {
					t.Errorf("%s: Deleted holds %#v, want tombstone of %v", k, d.Object, obj)
				}
			}
		})
	}
}

func TestHasSynced(t *testing.T) {
	t.Run("DeltaFIFO: after the first Replace's keys are popped", func(t *testing.T) {
		q := newDeltaFIFO(cache.NewStore(podKey), true)
		if q.HasSynced() {
			t.Fatal("HasSynced before anything happened")
		}
		if err := q.Replace([]any{pod("pod-1", 1), pod("pod-2", 1)}, "1"); err != nil {
			t.Fatal(err)
		}
		first := pop(t, q)
		if !first.initial || q.HasSynced() {
			t.Errorf("after pop 1: isInInitialList=%v HasSynced=%v, want true, false",
				first.initial, q.HasSynced())
		}
		// DeltaFIFO marks itself synced before it runs the process
		// function for the last initial key.
		last := pop(t, q)
		if !last.initial || !last.synced || !q.HasSynced() {
			t.Errorf("after pop 2: isInInitialList=%v"+
				" synced-while-processing=%v HasSynced=%v,"+
				" want all true",
				last.initial, last.synced, q.HasSynced())
		}
		if err := q.Add(pod("pod-3", 1)); err != nil {
			t.Fatal(err)
		}
		if p := pop(t, q); p.initial {
			t.Error("an Add after sync popped with isInInitialList=true")
		}
	})

	t.Run("DeltaFIFO: an Add first means synced at once", func(t *testing.T) {
		q := newDeltaFIFO(nil, true)
		if err := q.Add(pod("pod-1", 1)); err != nil {
			t.Fatal(err)
		}
		if !q.HasSynced() {
			t.Error("HasSynced=false after an Add came first")
		}
		if p := pop(t, q); p.initial {
			t.Error("isInInitialList=true for an Add that came first")
		}
	})

	t.Run("DeltaFIFO: an empty first Replace means synced at once", func(t *testing.T) {
		q := newDeltaFIFO(nil, true)
		if err := q.Replace(nil, "1"); err != nil {
			t.Fatal(err)
		}
		if !q.HasSynced() {
			t.Error("HasSynced=false after an empty initial list")
		}
	})

	t.Run("RealFIFO: one ReplacedAll, synced after it is processed", func(t *testing.T) {
		q := atomicFIFO()
		if err := q.Replace([]any{pod("pod-1", 1), pod("pod-2", 1)}, "1"); err != nil {
			t.Fatal(err)
		}
		if q.HasSynced() {
			t.Fatal("HasSynced before the initial list was popped")
		}
		p := pop(t, q)
		if got, want := show.Deltas(p.deltas), "[ReplacedAll rv=1 pod-1 v1, pod-2 v1]"; got != want {
			t.Errorf("deltas = %s, want %s", got, want)
		}
		if !p.initial || p.synced || !q.HasSynced() {
			t.Errorf("isInInitialList=%v synced-while-processing=%v"+
				" HasSynced=%v, want true, false, true",
				p.initial, p.synced, q.HasSynced())
		}
		assertEmpty(t, q)
	})
}

func TestRealFIFOAtomicEntries(t *testing.T) {
	q := atomicFIFO()
	for _, err := range []error{
		q.Add(pod("pod-1", 1)),
		q.Update(pod("pod-1", 2)),
		q.Replace([]any{pod("pod-2", 1)}, "9"),
		q.Bookmark("10"),
		q.Resync(),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	for range 5 {
		got = append(got, show.Deltas(pop(t, q).deltas))
	}
	want := []string{
		"[Added pod-1 v1]",
		"[Updated pod-1 v2]",
		"[ReplacedAll rv=9 pod-2 v1]",
		"[Bookmark rv=10]",
		"[SyncAll]",
	}
	if !slices.Equal(got, want) {
		t.Errorf("pops =\n%q\nwant\n%q", got, want)
	}
	assertEmpty(t, q)
}

func TestPopOnClosedEmptyQueueReturns(t *testing.T) {
	for name, q := range map[string]cache.Queue{
		"DeltaFIFO": newDeltaFIFO(nil, true),
		"RealFIFO":  atomicFIFO(),
	} {
		t.Run(name, func(t *testing.T) {
			q.Close()
			done := make(chan error, 1)
			go func() {
				_, err := q.Pop(func(any, bool) error { return nil })
				done <- err
			}()
			// A deadline to fail on, not a sleep: Pop must return
			// straight away.
			select {
			case err := <-done:
				if !errors.Is(err, cache.ErrFIFOClosed) {
					t.Errorf("err = %v, want ErrFIFOClosed", err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("Pop on a closed, empty queue blocked")
			}
		})
	}
}
