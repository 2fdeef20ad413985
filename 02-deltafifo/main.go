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
// (newQueueFIFO, processDeltas).
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"k8s.io/client-go/features"
	"k8s.io/client-go/tools/cache"

	"github.com/informer-walkthrough/informer-walkthrough/internal/runner"
)

func main() { runner.MainInMemory("02-deltafifo", run) }

// run is the chapter. Each step prints a heading, then every queue
// call it makes and everything it pops.
func run(ctx context.Context, out io.Writer) error {
	// Pop blocks while a queue is empty, and the chapter pops exactly
	// as often as it queued. If it ever miscounted, the timeout closes
	// every queue (see guard), so Pop returns an error, not a hang.
	ctx, cancel := runner.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	for _, step := range []func(context.Context, io.Writer) error{
		tutorial,     // Step 1
		deletes,      // Step 2
		knownObjects, // Step 3
		realFIFO,     // Step 4
		closing,      // Step 5
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

	// NewDeltaFIFO(keyFunc, knownObjects) is deprecated; the options
	// form is the one to learn. KeyFunction is all a queue needs to
	// know about what it holds.
	q := cache.NewDeltaFIFOWithOptions(cache.DeltaFIFOOptions{
		KeyFunction: podKey,
	})
	defer guard(ctx, q)()
	if err := feed(out, q, tutorialCalls()...); err != nil {
		return err
	}

	// Five calls touched three keys, so there are three entries. The
	// Update and the Delete joined pod-1's Deltas; pod-1 keeps the
	// place in line it got from its first Add. DeltaFIFO has no Len
	// or List any more, so we pop the count we know: a fourth Pop
	// would block until someone Adds or Closes.
	c := newConsumer(out, cache.NewStore(podKey))
	return c.popN(q, 3)
}

// tutorialCalls are the tutorial's five calls. Step 4 replays them.
func tutorialCalls() []call {
	return []call{
		add(pod("pod-1", 1)),
		add(pod("pod-2", 1)),
		add(pod("pod-3", 1)),
		update(pod("pod-1", 2)),
		del(pod("pod-1", 2)),
	}
}

// Step 2. DeltaFIFO compacts very little: only a Deleted that follows
// a Deleted collapses. And a Delete for a key it has never seen is
// dropped, because there is nothing to report the deletion of.
func deletes(ctx context.Context, out io.Writer) error {
	fmt.Fprintln(out, "\nStep 2. DeltaFIFO: only consecutive Deleted deltas collapse")
	q := cache.NewDeltaFIFOWithOptions(cache.DeltaFIFOOptions{
		KeyFunction: podKey,
	})
	defer guard(ctx, q)()
	if err := feed(out, q, deleteCalls()...); err != nil {
		return err
	}

	// pod-9's Delete came first, so had it been queued it would pop
	// first. One Pop returns pod-1 with four deltas: the second of
	// the back-to-back Deletes is gone, the later Delete stays.
	c := newConsumer(out, cache.NewStore(podKey))
	return c.popN(q, 1)
}

// deleteCalls exercise delete handling. Step 4 replays them.
func deleteCalls() []call {
	return []call{
		del(pod("pod-9", 1)),
		add(pod("pod-1", 1)),
		del(pod("pod-1", 1)),
		del(pod("pod-1", 1)),
		add(pod("pod-1", 2)),
		del(pod("pod-1", 2)),
	}
}

// Step 3. KnownObjects is the consumer's own store, handed to the
// FIFO so it can tell which keys the consumer has: Replace uses it to
// spot objects that vanished, Resync to replay them.
func knownObjects(ctx context.Context, out io.Writer) error {
	fmt.Fprintln(out, "\nStep 3. DeltaFIFO with KnownObjects: Replace, tombstones, Resync, HasSynced")

	// This is how informers built it before RealFIFO (controller.go
	// newQueueFIFO, the DeltaFIFO branch): the consumer's store as
	// KnownObjects, and Replaced rather than Sync for relisted items.
	store := cache.NewStore(podKey)
	q := cache.NewDeltaFIFOWithOptions(cache.DeltaFIFOOptions{
		KeyFunction:           podKey,
		KnownObjects:          store,
		EmitDeltaTypeReplaced: true,
	})
	defer guard(ctx, q)()
	c := newConsumer(out, store)

	// The first Replace is the initial list. HasSynced stays false
	// until every key it queued has been popped, and each of those
	// Pops says isInInitialList.
	fmt.Fprintf(out, "  HasSynced=%v\n", q.HasSynced())
	if err := feed(out, q, initialList()...); err != nil {
		return err
	}
	fmt.Fprintf(out, "  HasSynced=%v\n", q.HasSynced())
	for range 3 {
		if err := c.popN(q, 1); err != nil {
			return err
		}
		fmt.Fprintf(out, "  HasSynced=%v\n", q.HasSynced())
	}
	c.printStore()

	// A relist after a broken watch: pod-1 changed, pod-3 is gone.
	// Replace appends Replaced to each listed key and, for pod-3 (in
	// KnownObjects, missing from the list), a Deleted holding a
	// DeletedFinalStateUnknown: its last state is only a guess.
	if err := feed(out, q, relist()...); err != nil {
		return err
	}
	if err := c.popN(q, 3); err != nil {
		return err
	}
	c.printStore()

	// The reflector hands bookmarks only to stores with a Bookmark
	// method. DeltaFIFO has none, so they stop at the reflector.
	// Resync queues a Sync for every known key with nothing queued:
	// pod-2 has an Update waiting, so only pod-1 gets one.
	if err := feed(out, q, resyncCalls()...); err != nil {
		return err
	}
	if err := c.popN(q, 2); err != nil {
		return err
	}

	// Without EmitDeltaTypeReplaced (NewDeltaFIFO's default) Replace
	// queues Sync instead, and a consumer cannot tell a relist from a
	// periodic resync. Same relist, consumer holding the same pods.
	fmt.Fprintln(out, "  The same relist without EmitDeltaTypeReplaced:")
	old := cache.NewStore(podKey)
	for _, p := range []Pod{pod("pod-1", 1), pod("pod-2", 1), pod("pod-3", 1)} {
		if err := old.Add(p); err != nil {
			return err
		}
	}
	legacy := cache.NewDeltaFIFOWithOptions(cache.DeltaFIFOOptions{
		KeyFunction:  podKey,
		KnownObjects: old,
	})
	defer guard(ctx, legacy)()
	lc := newConsumer(out, old)
	lc.printStore()
	if err := feed(out, legacy, relist()...); err != nil {
		return err
	}
	return lc.popN(legacy, 3)
}

// initialList, relist and resyncCalls are step 3's calls, in the
// order a reflector would make them. Step 4 replays them.
func initialList() []call {
	return []call{
		replace("10", pod("pod-1", 1), pod("pod-2", 1), pod("pod-3", 1)),
	}
}

func relist() []call {
	return []call{
		update(pod("pod-1", 2)),
		replace("20", pod("pod-1", 3), pod("pod-2", 1)),
	}
}

func resyncCalls() []call {
	return []call{
		bookmark("25"),
		update(pod("pod-2", 2)),
		resync(),
	}
}

// Step 4. What informers really queue through in v0.37: a RealFIFO,
// built with the options newQueueFIFO in controller.go picks from the
// feature gates. The same calls as steps 1 to 3 go in.
func realFIFO(ctx context.Context, out io.Writer) error {
	fmt.Fprintln(out, "\nStep 4. RealFIFO, built the way informers build it in v0.37")
	gates := features.FeatureGates()
	fmt.Fprintf(out, "  gates:   InOrderInformers=%v AtomicFIFO=%v"+
		" UnlockWhileProcessingFIFO=%v\n",
		gates.Enabled(features.InOrderInformers),
		gates.Enabled(features.AtomicFIFO),
		gates.Enabled(features.UnlockWhileProcessingFIFO))
	opts := informerOptions(cache.NewStore(podKey))
	known := "nil"
	if opts.KnownObjects != nil {
		known = "the consumer's store"
	}
	fmt.Fprintf(out, "  options: AtomicEvents=%v UnlockWhileProcessing=%v\n",
		opts.AtomicEvents, opts.UnlockWhileProcessing)
	fmt.Fprintf(out, "           EmitDeltaTypeBookmark=%v KnownObjects=%s\n",
		opts.EmitDeltaTypeBookmark, known)

	// RealFIFO is a log: one entry per call, popped in call order, no
	// per-key merging, no delete dedup, nothing dropped.
	fmt.Fprintln(out, "  The calls of step 1:")
	if err := replay(ctx, out, tutorialCalls(), 5); err != nil {
		return err
	}
	fmt.Fprintln(out, "  The calls of step 2:")
	if err := replay(ctx, out, deleteCalls(), 6); err != nil {
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
	q := cache.NewRealFIFOWithOptions(informerOptions(store))
	defer guard(ctx, q)()
	c := newConsumer(out, store)
	fmt.Fprintf(out, "  HasSynced=%v\n", q.HasSynced())
	if err := feed(out, q, initialList()...); err != nil {
		return err
	}
	if err := c.popN(q, initialPops); err != nil {
		return err
	}
	fmt.Fprintf(out, "  HasSynced=%v\n", q.HasSynced())
	if err := feed(out, q, relist()...); err != nil {
		return err
	}
	if err := c.popN(q, relistPops); err != nil {
		return err
	}
	if err := feed(out, q, resyncCalls()...); err != nil {
		return err
	}
	if err := c.popN(q, resyncPops); err != nil {
		return err
	}
	c.printStore()
	printSideBySide(out)
	return nil
}

// informerOptions are the RealFIFOOptions newQueueFIFO picks in
// controller.go (v0.37.2, L1063-1093), read from the same gates.
// Only the key function differs (informers use MetaNamespaceKeyFunc),
// and there is no logger, transform or metrics to pass on.
func informerOptions(store cache.Store) cache.RealFIFOOptions {
	gates := features.FeatureGates()
	opts := cache.RealFIFOOptions{
		Name:        "RealFIFO main.Pod",
		KeyFunction: podKey,
	}
	if gates.Enabled(features.AtomicFIFO) {
		// Atomic events forbid KnownObjects: the FIFO may release its
		// lock while the consumer works, so it must not read the
		// consumer's store.
		unlock := gates.Enabled(features.UnlockWhileProcessingFIFO)
		opts.AtomicEvents = true
		opts.UnlockWhileProcessing = unlock
		opts.EmitDeltaTypeBookmark = true
	} else {
		opts.KnownObjects = store
	}
	return opts
}

// replay feeds calls to a fresh informer-style RealFIFO and pops n.
func replay(ctx context.Context, out io.Writer, calls []call, n int) error {
	store := cache.NewStore(podKey)
	q := cache.NewRealFIFOWithOptions(informerOptions(store))
	defer guard(ctx, q)()
	if err := feed(io.Discard, q, calls...); err != nil {
		return err
	}
	c := newConsumer(out, store)
	return c.popN(q, n)
}

// printSideBySide sums up steps 1 to 4.
func printSideBySide(out io.Writer) {
	rows := [][3]string{
		{"", "DeltaFIFO", "RealFIFO (informers)"},
		{"one Pop gives", "all deltas of a key", "one delta"},
		{"pop order", "key first queued", "call order"},
		{"Delete, Delete", "collapse to one", "two entries"},
		{"unknown Delete", "dropped", "queued"},
		{"Replace", "delta per item", "one ReplacedAll"},
		{"Replace's rv", "ignored", "in ReplacedAll"},
		{"vanished keys", "tombstones (FIFO)", "found by consumer"},
		{"Resync", "Sync per idle key", "one SyncAll"},
		{"Bookmark", "no such method", "Bookmark entry"},
		{"KnownObjects", "consumer's store", "nil (atomic)"},
		{"Done() closes", "before last initial", "after last initial"},
		{"", "key is processed", "entry is processed"},
	}
	fmt.Fprintln(out, "  Side by side:")
	for _, r := range rows {
		fmt.Fprintf(out, "    %-16s %-21s %s\n", r[0], r[1], r[2])
	}
	fmt.Fprintln(out, "  Chosen in tools/cache/controller.go newQueueFIFO (L1063-1093)")
}

// Step 5. Close is how a consumer's Pop loop ends: the controller
// closes its queue when its context is cancelled, and Pop then
// returns ErrFIFOClosed instead of blocking. What is already queued
// still comes out first.
func closing(_ context.Context, out io.Writer) error {
	fmt.Fprintln(out, "\nStep 5. Close: Pop drains what is queued, then returns ErrFIFOClosed")
	store := cache.NewStore(podKey)
	rf := cache.NewRealFIFOWithOptions(informerOptions(store))
	queues := []struct {
		name string
		q    cache.Queue
	}{
		{"DeltaFIFO", cache.NewDeltaFIFOWithOptions(cache.DeltaFIFOOptions{
			KeyFunction: podKey,
		})},
		{"RealFIFO", rf},
	}
	for _, x := range queues {
		fmt.Fprintf(out, "  %s:\n", x.name)
		if err := feed(out, x.q, add(pod("pod-1", 1))); err != nil {
			return err
		}
		fmt.Fprintln(out, "  Close")
		x.q.Close()
		c := newConsumer(out, store)
		if err := c.popN(x.q, 1); err != nil {
			return err
		}

		// Closed and empty: this Pop returns at once. (Its message
		// says DeltaFIFO even for RealFIFO: they share the error.)
		_, err := x.q.Pop(func(any, bool) error { return nil })
		if !errors.Is(err, cache.ErrFIFOClosed) {
			return fmt.Errorf("pop on a closed, empty queue: %v", err)
		}
		fmt.Fprintf(out, "  %-8s  → ErrFIFOClosed %q\n", "Pop", err)
	}
	return nil
}

// Pod stands in for a Kubernetes object. A queue does not care what
// it holds: it only needs a key, which podKey supplies.
type Pod struct {
	Name    string
	Version int
}

func pod(name string, version int) Pod {
	return Pod{Name: name, Version: version}
}

func (p Pod) String() string { return fmt.Sprintf("%s v%d", p.Name, p.Version) }

// podKey is the KeyFunction. Like DeletionHandlingMetaNamespaceKeyFunc
// it also accepts a tombstone, so a Store keyed by it can delete one.
func podKey(obj any) (string, error) {
	switch o := obj.(type) {
	case Pod:
		return o.Name, nil
	case cache.DeletedFinalStateUnknown:
		return o.Key, nil
	}
	return "", fmt.Errorf("podKey: %T is not a Pod", obj)
}

// call is one queue method call, printed as it is made.
type call struct {
	verb, arg string
	do        func(cache.Queue) (note string, err error)
}

// feed makes the calls in order, printing each one.
func feed(out io.Writer, q cache.Queue, calls ...call) error {
	for _, c := range calls {
		note, err := c.do(q)
		if err != nil {
			return fmt.Errorf("%s %s: %w", c.verb, c.arg, err)
		}
		line := fmt.Sprintf("  %-8s  %s", c.verb, c.arg)
		if note != "" {
			line += "  " + note
		}
		fmt.Fprintln(out, strings.TrimRight(line, " "))
	}
	return nil
}

func add(p Pod) call {
	return call{"Add", p.String(), func(q cache.Queue) (string, error) {
		return "", q.Add(p)
	}}
}

func update(p Pod) call {
	return call{"Update", p.String(), func(q cache.Queue) (string, error) {
		return "", q.Update(p)
	}}
}

func del(p Pod) call {
	return call{"Delete", p.String(), func(q cache.Queue) (string, error) {
		return "", q.Delete(p)
	}}
}

// replace is what a reflector calls with a full list: the initial
// one, and every relist after a watch could not be resumed.
func replace(rv string, pods ...Pod) call {
	items := make([]any, len(pods))
	names := make([]string, len(pods))
	for i, p := range pods {
		items[i], names[i] = p, p.String()
	}
	arg := fmt.Sprintf("%s  (rv %s)", strings.Join(names, ", "), rv)
	return call{"Replace", arg, func(q cache.Queue) (string, error) {
		return "", q.Replace(items, rv)
	}}
}

// resync is what a reflector calls every resync period.
func resync() call {
	return call{"Resync", "", func(q cache.Queue) (string, error) {
		return "", q.Resync()
	}}
}

// bookmark does what the reflector does with a BOOKMARK event
// (reflector.go L1065): pass it on only if the store can take it.
func bookmark(rv string) call {
	return call{"Bookmark", "rv " + rv, func(q cache.Queue) (string, error) {
		b, ok := q.(cache.ReflectorBookmarkStore)
		if !ok {
			return fmt.Sprintf("(skipped: %T has no Bookmark method)", q), nil
		}
		return "", b.Bookmark(rv)
	}}
}

// consumer plays the informer's part: it pops, prints what it got,
// and applies it to its store as processDeltas in controller.go does.
type consumer struct {
	out   io.Writer
	store cache.Store
}

func newConsumer(out io.Writer, store cache.Store) *consumer {
	return &consumer{out: out, store: store}
}

// popN pops n entries. Only call it with n no larger than what is
// queued: Pop on an empty, open queue blocks.
func (c *consumer) popN(q cache.Queue, n int) error {
	for range n {
		// PopProcessFunc takes isInInitialList since v0.27. The
		// function runs while the entry is being handed out; what it
		// returns, Pop returns.
		_, err := q.Pop(func(obj any, isInInitialList bool) error {
			deltas, ok := obj.(cache.Deltas)
			if !ok {
				return fmt.Errorf("popped %T, want cache.Deltas", obj)
			}
			line := fmt.Sprintf("  %-8s  %-5s  %s",
				"Pop", key(deltas), format(deltas))
			if isInInitialList {
				line += "  isInInitialList"
			}
			fmt.Fprintln(c.out, line)
			return c.apply(deltas, isInInitialList)
		})
		if err != nil {
			return fmt.Errorf("pop: %w", err)
		}
	}
	return nil
}

// apply keeps the store in step with what was popped, like
// processDeltas (controller.go L823). For the atomic entries it also
// prints the handler calls an informer would make, because that is
// where the per-object events reappear.
func (c *consumer) apply(deltas cache.Deltas, initial bool) error {
	for _, d := range deltas {
		switch d.Type {
		case cache.Added, cache.Updated, cache.Replaced, cache.Sync:
			if _, exists, err := c.store.Get(d.Object); err == nil && exists {
				if err := c.store.Update(d.Object); err != nil {
					return err
				}
			} else if err := c.store.Add(d.Object); err != nil {
				return err
			}
		case cache.Deleted:
			if err := c.store.Delete(d.Object); err != nil {
				return err
			}
		case cache.ReplacedAll:
			info, ok := d.Object.(cache.ReplacedAllInfo)
			if !ok {
				return fmt.Errorf("ReplacedAll holds %T", d.Object)
			}
			if err := c.replaceAll(info, initial); err != nil {
				return err
			}
		case cache.SyncAll:
			// processDeltas calls OnUpdate(obj, obj) for every object
			// in its store, in the store's (map) order: sorted here.
			for _, o := range sorted(c.store.List()) {
				c.handler("OnUpdate", fmt.Sprintf("%v → %v", o, o))
			}
		case cache.Bookmark:
			info, ok := d.Object.(cache.BookmarkInfo)
			if !ok {
				return fmt.Errorf("Bookmark holds %T", d.Object)
			}
			c.store.Bookmark(info.ResourceVersion)
		}
	}
	return nil
}

// replaceAll is processReplacedAllInfo (controller.go L972) in small:
// keys in the store but not in the list become OnDelete tombstones,
// then each listed object is an OnUpdate or an OnAdd.
func (c *consumer) replaceAll(info cache.ReplacedAllInfo, initial bool) error {
	listed := map[string]bool{}
	for _, o := range info.Objects {
		k, err := podKey(o)
		if err != nil {
			return err
		}
		listed[k] = true
	}
	keys := c.store.ListKeys()
	slices.Sort(keys) // store order is map order
	for _, k := range keys {
		if listed[k] {
			continue
		}
		old, _, err := c.store.GetByKey(k)
		if err != nil {
			return err
		}
		c.handler("OnDelete", describe(cache.DeletedFinalStateUnknown{Key: k, Obj: old}))
	}
	for _, o := range info.Objects {
		if old, exists, err := c.store.Get(o); err == nil && exists {
			c.handler("OnUpdate", fmt.Sprintf("%v → %v", old, o))
		} else {
			c.handler("OnAdd", fmt.Sprintf("%v  isInInitialList=%v", o, initial))
		}
	}
	return c.store.Replace(info.Objects, info.ResourceVersion)
}

func (c *consumer) handler(name, arg string) {
	fmt.Fprintf(c.out, "  %-8s  %-5s  → %s %s\n", "", "", name, arg)
}

func (c *consumer) printStore() {
	names := []string{}
	for _, o := range sorted(c.store.List()) {
		names = append(names, fmt.Sprint(o))
	}
	fmt.Fprintf(c.out, "  %-8s  %s\n", "store:", strings.Join(names, ", "))
}

// key names what a popped entry is about: one object, or (all) for a
// ReplacedAll or SyncAll, or - for a Bookmark.
func key(deltas cache.Deltas) string {
	switch o := deltas.Newest().Object.(type) {
	case cache.ReplacedAllInfo, cache.SyncAllInfo:
		return "(all)"
	case cache.BookmarkInfo:
		return "-"
	default:
		k, err := podKey(o)
		if err != nil {
			return "?"
		}
		return k
	}
}

// format prints deltas oldest first, e.g. [Added pod-1 v1].
func format(deltas cache.Deltas) string {
	parts := make([]string, len(deltas))
	for i, d := range deltas {
		var what string
		switch o := d.Object.(type) {
		case cache.ReplacedAllInfo:
			names := make([]string, len(o.Objects))
			for j, x := range o.Objects {
				names[j] = fmt.Sprint(x)
			}
			what = "rv=" + o.ResourceVersion + " " +
				strings.Join(names, ", ")
		case cache.BookmarkInfo:
			what = "rv=" + o.ResourceVersion
		case cache.SyncAllInfo:
			what = ""
		default:
			what = describe(o)
		}
		s := strings.TrimSpace(fmt.Sprintf("%s %s", d.Type, what))
		parts[i] = "[" + s + "]"
	}
	return strings.Join(parts, " ")
}

// describe prints an object a queue or handler was given: a Pod as
// "pod-3 v1", a tombstone under the name of its type in client-go.
func describe(obj any) string {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		return fmt.Sprintf("DeletedFinalStateUnknown key=%s, last known %v", t.Key, t.Obj)
	}
	return fmt.Sprint(obj)
}

// sorted orders objects by key, for output that does not depend on
// Go's map order.
func sorted(objs []any) []any {
	slices.SortFunc(objs, func(a, b any) int {
		ka, _ := podKey(a)
		kb, _ := podKey(b)
		return strings.Compare(ka, kb)
	})
	return objs
}

// guard closes q when ctx ends, as controller.go's RunWithContext
// does (L174-177), so a Pop can never outlive the chapter. Call the
// returned func to release it.
func guard(ctx context.Context, q cache.Queue) (stop func()) {
	release := context.AfterFunc(ctx, q.Close)
	return func() { release() }
}
