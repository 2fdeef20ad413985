// Chapter 02-deltafifo: DeltaFIFO, and the RealFIFO informers use today.
//
// A reflector never hands watch events to your code directly: it
// writes them into a queue, and the informer pops them out. For a
// decade that queue was DeltaFIFO, which keeps one list of changes
// (Deltas) per object key. Informers now queue through RealFIFO, an
// ordered log that since v0.36 also carries whole relists, resyncs
// and bookmarks as single entries. This chapter drives both by hand,
// in memory, with no cluster: the same calls, and what comes out.
//
// Read alongside (client-go v0.37.2): tools/cache/delta_fifo.go,
// tools/cache/fifo.go (Queue, PopProcessFunc, ErrFIFOClosed),
// tools/cache/the_real_fifo.go and tools/cache/controller.go
// (newQueueFIFO, processDeltas). This file drives the queues and,
// in process, does with each popped entry what an informer does;
// internal/cachecopy holds the copies of newQueueFIFO's options and of
// processDeltas, which client-go does not export; pod.go holds the
// object queued and its key; observe.go only shows the queues at work
// (the course's taps around each queue, the printing) and guards them.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"k8s.io/client-go/tools/cache"

	"github.com/informer-walkthrough/informer-walkthrough/internal/cachecopy"
	"github.com/informer-walkthrough/informer-walkthrough/internal/runner"
)

func main() { runner.MainInMemory("02-deltafifo", run) }

// run is the chapter, step by step. Pop blocks on an empty queue, so
// each step pops as often as it queued; had it miscounted, ctx would
// end (the runner's timeout), guard would close the queue, Pop fail.
func run(ctx context.Context, out io.Writer) error {
	for _, step := range []func(context.Context, io.Writer) error{
		tutorial,        // Step 1
		deletes,         // Step 2
		knownObjects,    // Step 3
		withoutReplaced, // Step 3, its end
		realFIFO,        // Step 4
		closing,         // Step 5
	} {
		if err := step(ctx, out); err != nil {
			return err
		}
	}
	return nil
}

// Step 1. The popular tutorial example, modernised: a DeltaFIFO over
// plain Go values, three Adds, an Update and a Delete, then Pop.
func tutorial(ctx context.Context, out io.Writer) error {
	fmt.Fprintln(out, "Step 1. DeltaFIFO: three Adds, an Update, a Delete, then Pop")

	// !+tutorial
	// NewDeltaFIFO(keyFunc, knownObjects) is deprecated; the options
	// form is the one to learn. KeyFunction is all a queue needs to
	// know about what it holds.
	fifo := cache.NewDeltaFIFOWithOptions(cache.DeltaFIFOOptions{
		KeyFunction: podKey,
	})
	defer guard(ctx, fifo)()
	q, h := observe(out, fifo) // q prints each call; h stands in for handlers
	if err := tutorialCalls(q); err != nil {
		return err
	}

	// Five calls touched three keys, so there are three entries.
	// DeltaFIFO has no Len or List any more, so we pop the count we
	// know: a fourth Pop would block until someone Adds or Closes.
	// process applies each entry to store and calls h, as an informer
	// does (below).
	store := cache.NewStore(podKey)
	for range 3 {
		if _, err := q.Pop(process(store, h)); err != nil {
			return err
		}
	}
	return nil
	// !-tutorial
}

// !+tutorialCalls
// tutorialCalls are the tutorial's five calls. Step 4 makes them again.
func tutorialCalls(q cache.Queue) error {
	return errors.Join(
		q.Add(pod("pod-1", 1)),
		q.Add(pod("pod-2", 1)),
		q.Add(pod("pod-3", 1)),
		q.Update(pod("pod-1", 2)),
		q.Delete(pod("pod-1", 2)),
	)
}

// !-tutorialCalls

// Step 2. DeltaFIFO compacts very little: only a Deleted that follows
// a Deleted collapses. And, with no KnownObjects, a Delete is dropped
// whenever its key has nothing queued at that moment: never added, or
// added and already popped. The FIFO then knows of nothing to report
// the deletion of.
func deletes(ctx context.Context, out io.Writer) error {
	fmt.Fprintln(out, "\nStep 2. DeltaFIFO: only consecutive Deleted deltas collapse")
	fifo := cache.NewDeltaFIFOWithOptions(cache.DeltaFIFOOptions{
		KeyFunction: podKey,
	})
	defer guard(ctx, fifo)()
	q, h := observe(out, fifo)
	if err := deleteCalls(q); err != nil {
		return err
	}

	// pod-9's Delete came first, so had it been queued it would pop
	// first. One Pop returns pod-1 with four deltas: the second of
	// the back-to-back Deletes is gone, the later Delete stays.
	_, err := q.Pop(process(cache.NewStore(podKey), h))
	return err
}

// deleteCalls exercise delete handling. Step 4 makes them again.
func deleteCalls(q cache.Queue) error {
	return errors.Join(
		q.Delete(pod("pod-9", 1)),
		q.Add(pod("pod-1", 1)),
		q.Delete(pod("pod-1", 1)),
		q.Delete(pod("pod-1", 1)),
		q.Add(pod("pod-1", 2)),
		q.Delete(pod("pod-1", 2)),
	)
}

// Step 3. KnownObjects is the consumer's own store, handed to the
// FIFO so it can tell which keys the consumer has: Replace uses it to
// spot objects that vanished, Resync to replay them.
func knownObjects(ctx context.Context, out io.Writer) error {
	fmt.Fprintln(out, "\nStep 3. DeltaFIFO with KnownObjects: Replace, tombstones, Resync, HasSynced")

	// !+knownObjects
	// This is how informers built it before RealFIFO (controller.go
	// newQueueFIFO, the DeltaFIFO branch): the consumer's store as
	// KnownObjects, and Replaced rather than Sync for relisted items.
	store := cache.NewStore(podKey)
	fifo := cache.NewDeltaFIFOWithOptions(cache.DeltaFIFOOptions{
		KeyFunction:           podKey,
		KnownObjects:          store,
		EmitDeltaTypeReplaced: true,
	})
	// !-knownObjects
	defer guard(ctx, fifo)()
	q, h := observe(out, fifo)

	// The first Replace is the initial list. HasSynced stays false
	// until every key it queued has been popped, and each of those
	// Pops says isInInitialList.
	fmt.Fprintf(out, "  HasSynced=%v\n", q.HasSynced())
	if err := initialList(q); err != nil {
		return err
	}
	fmt.Fprintf(out, "  HasSynced=%v\n", q.HasSynced())
	for range 3 {
		if _, err := q.Pop(process(store, h)); err != nil {
			return err
		}
		fmt.Fprintf(out, "  HasSynced=%v\n", q.HasSynced())
	}
	printStore(out, store)

	// A relist after a broken watch: pod-1 changed, pod-3 is gone.
	// Replace appends Replaced to each listed key and, for pod-3 (in
	// KnownObjects, missing from the list), a Deleted holding a
	// DeletedFinalStateUnknown: its last state is only a guess.
	if err := relist(q); err != nil {
		return err
	}
	for range 3 {
		if _, err := q.Pop(process(store, h)); err != nil {
			return err
		}
	}
	printStore(out, store)

	// Resync queues a Sync for every known key with nothing queued:
	// pod-2 has an Update waiting, so only pod-1 gets one.
	if err := resyncCalls(q); err != nil {
		return err
	}
	for range 2 {
		if _, err := q.Pop(process(store, h)); err != nil {
			return err
		}
	}
	return nil
}

// withoutReplaced ends step 3: without EmitDeltaTypeReplaced
// (NewDeltaFIFO's default) Replace queues Sync instead, and a consumer
// cannot tell a relist from a periodic resync. The same relist, with
// the consumer holding the same pods.
func withoutReplaced(ctx context.Context, out io.Writer) error {
	fmt.Fprintln(out, "  The same relist without EmitDeltaTypeReplaced:")
	// The consumer's store holds what the initial list gave it (a
	// Store's Replace sets its contents in one call).
	store := cache.NewStore(podKey)
	if err := store.Replace([]any{
		pod("pod-1", 1), pod("pod-2", 1), pod("pod-3", 1),
	}, "10"); err != nil {
		return err
	}
	fifo := cache.NewDeltaFIFOWithOptions(cache.DeltaFIFOOptions{
		KeyFunction:  podKey,
		KnownObjects: store,
	})
	defer guard(ctx, fifo)()
	q, h := observe(out, fifo)
	printStore(out, store)
	if err := relist(q); err != nil {
		return err
	}
	for range 3 {
		if _, err := q.Pop(process(store, h)); err != nil {
			return err
		}
	}
	return nil
}

// !+stepThreeCalls
// initialList, relist and resyncCalls are step 3's calls, in the
// order a reflector would make them. Step 4 makes them again.
func initialList(q cache.Queue) error {
	return q.Replace([]any{pod("pod-1", 1), pod("pod-2", 1), pod("pod-3", 1)}, "10")
}

func relist(q cache.Queue) error {
	return errors.Join(
		q.Update(pod("pod-1", 2)),
		q.Replace([]any{pod("pod-1", 3), pod("pod-2", 1)}, "20"),
	)
}

func resyncCalls(q cache.Queue) error {
	return errors.Join(
		bookmark(q, "25"),
		q.Update(pod("pod-2", 2)),
		q.Resync(),
	)
}

// !-stepThreeCalls

// !+bookmark
// bookmark does what the reflector does with a BOOKMARK event
// (reflector.go L1065): pass it on only if the store can take it.
// DeltaFIFO has no Bookmark method, so there bookmarks stop.
func bookmark(q cache.Queue, rv string) error {
	b, ok := q.(cache.ReflectorBookmarkStore)
	if !ok {
		noBookmark(q, rv) // prints that nothing was passed on
		return nil
	}
	return b.Bookmark(rv)
}

// !-bookmark

// Step 4. What informers really queue through in v0.37: a RealFIFO,
// built with the options newQueueFIFO in controller.go picks from the
// feature gates. The same calls as steps 1 to 3 go in.
func realFIFO(ctx context.Context, out io.Writer) error {
	fmt.Fprintln(out, "\nStep 4. RealFIFO, built the way informers build it in v0.37")
	opts := cachecopy.QueueOptions(Pod{}, podKey, cache.NewStore(podKey))
	printOptions(out, opts)

	// RealFIFO is a log: one entry per call, popped in call order, no
	// per-key merging, no delete dedup, nothing dropped.
	fmt.Fprintln(out, "  The calls of step 1:")
	if err := replay(ctx, out, tutorialCalls, 5); err != nil {
		return err
	}
	fmt.Fprintln(out, "  The calls of step 2:")
	if err := replay(ctx, out, deleteCalls, 6); err != nil {
		return err
	}

	// With atomic events a Replace is one ReplacedAll entry holding
	// the whole list and its resourceVersion. The FIFO no longer has
	// KnownObjects, so the consumer (processDeltas) works out what
	// vanished from its own store. Resync is one SyncAll, and a
	// bookmark is an entry of its own. Without AtomicFIFO, Replace
	// queues a Deleted per vanished key and a Replaced per item, and
	// Bookmark queues nothing: hence the two sets of counts.
	fmt.Fprintln(out, "  The calls of step 3:")
	initialPops, relistPops, resyncPops := 1, 2, 3
	if !opts.AtomicEvents {
		initialPops, relistPops, resyncPops = 3, 4, 2
	}
	store := cache.NewStore(podKey)
	fifo := cache.NewRealFIFOWithOptions(cachecopy.QueueOptions(Pod{}, podKey, store))
	defer guard(ctx, fifo)()
	q, h := observe(out, fifo)
	fmt.Fprintf(out, "  HasSynced=%v\n", q.HasSynced())
	if err := initialList(q); err != nil {
		return err
	}
	for range initialPops {
		if _, err := q.Pop(process(store, h)); err != nil {
			return err
		}
	}
	fmt.Fprintf(out, "  HasSynced=%v\n", q.HasSynced())
	if err := relist(q); err != nil {
		return err
	}
	for range relistPops {
		if _, err := q.Pop(process(store, h)); err != nil {
			return err
		}
	}
	if err := resyncCalls(q); err != nil {
		return err
	}
	for range resyncPops {
		if _, err := q.Pop(process(store, h)); err != nil {
			return err
		}
	}
	printStore(out, store)
	printSideBySide(out)
	return nil
}

// !+process
// process is the PopProcessFunc an informer hands its queue (the
// Process function newInformer gives its controller, controller.go
// L1042-L1048): it applies each popped entry to the informer's store
// and calls the event handler, in processDeltas. client-go does not
// export processDeltas: cachecopy.ProcessDeltas is a copy of it.
func process(store cache.Store, h cache.ResourceEventHandler) cache.PopProcessFunc {
	return func(obj any, isInInitialList bool) error {
		deltas, ok := obj.(cache.Deltas)
		if !ok {
			return fmt.Errorf("popped %T, not cache.Deltas", obj)
		}
		return cachecopy.ProcessDeltas(h, store, deltas, isInInitialList, podKey)
	}
}

// !-process

// replay makes calls on a fresh RealFIFO built as informers build it,
// without printing them, then pops n entries.
func replay(ctx context.Context, out io.Writer, calls func(cache.Queue) error, n int) error {
	store := cache.NewStore(podKey)
	fifo := cache.NewRealFIFOWithOptions(cachecopy.QueueOptions(Pod{}, podKey, store))
	defer guard(ctx, fifo)()
	if err := calls(fifo); err != nil {
		return err
	}
	q, h := observe(out, fifo)
	for range n {
		if _, err := q.Pop(process(store, h)); err != nil {
			return err
		}
	}
	return nil
}

// Step 5. Close is how a consumer's Pop loop ends: the controller
// closes its queue when its context is cancelled, and Pop then
// returns ErrFIFOClosed instead of blocking. What is already queued
// still comes out first.
func closing(_ context.Context, out io.Writer) error {
	fmt.Fprintln(out, "\nStep 5. Close: Pop drains what is queued, then returns ErrFIFOClosed")
	store := cache.NewStore(podKey)
	for _, f := range []struct {
		name string
		fifo cache.Queue
	}{
		{"DeltaFIFO", cache.NewDeltaFIFOWithOptions(cache.DeltaFIFOOptions{
			KeyFunction: podKey,
		})},
		{"RealFIFO", cache.NewRealFIFOWithOptions(cachecopy.QueueOptions(Pod{}, podKey, store))},
	} {
		fmt.Fprintf(out, "  %s:\n", f.name)
		q, h := observe(out, f.fifo)
		// !+close
		if err := q.Add(pod("pod-1", 1)); err != nil {
			return err
		}
		q.Close()
		if _, err := q.Pop(process(store, h)); err != nil {
			return err
		}
		// Closed and empty: this Pop returns at once. (Its message
		// says DeltaFIFO even for RealFIFO: they share the error.)
		if _, err := q.Pop(process(store, h)); !errors.Is(err, cache.ErrFIFOClosed) {
			return fmt.Errorf("pop on a closed, empty queue: %v", err)
		}
		// !-close
	}
	return nil
}
