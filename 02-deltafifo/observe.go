package main

// What the chapter needs only to show the queues at work, and nothing
// of what it teaches: a tap that wraps a queue and prints every call
// made on it, a handler that renders the calls it gets as lines, the
// formatting of objects, entries and stores, and the guard that closes
// a queue when the run ends. The tap and the handler also record what
// they see for --trace and --view (internal/trace): the FIFO lane (each
// call, each Pop) and the handlers lane. The store lane stays empty:
// the stores are main.go's, written by cachecopy.ProcessDeltas, and
// nothing here wraps them.

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"k8s.io/client-go/features"
	"k8s.io/client-go/tools/cache"

	"github.com/informer-walkthrough/informer-walkthrough/internal/trace"
)

// tap wraps q so that every call made on it is printed as it is made,
// and every Pop prints the entry it hands out. It also returns the
// handler that stands in for the informer's event handlers. After an
// entry that holds a whole list (ReplacedAll, SyncAll) the tap prints
// the handler calls processing it made: that is where the per-object
// events reappear. For any other entry the call only restates the
// delta (Added is OnAdd), so it is not printed.
func tap(out io.Writer, q cache.Queue) (cache.Queue, cache.ResourceEventHandler) {
	t := &tapped{Queue: q, out: out}
	h := handlerLog(func(line string) { t.calls = append(t.calls, line) })
	if _, ok := q.(cache.ReflectorBookmarkStore); ok {
		return tappedBookmarks{t}, h // keeps the optional method
	}
	return t, h
}

// tapped is a queue that prints what is done to it.
type tapped struct {
	cache.Queue
	out   io.Writer
	calls []string // the handler calls made for the entry being popped
}

func (t *tapped) Add(obj any) error {
	return t.print(t.Queue.Add(obj), "Add", describe(obj), obj)
}

func (t *tapped) Update(obj any) error {
	return t.print(t.Queue.Update(obj), "Update", describe(obj), obj)
}

func (t *tapped) Delete(obj any) error {
	return t.print(t.Queue.Delete(obj), "Delete", describe(obj), obj)
}

func (t *tapped) Replace(list []any, rv string) error {
	arg := fmt.Sprintf("%s  (rv %s)", describeAll(list), rv)
	return t.print(t.Queue.Replace(list, rv), "Replace", arg, nil)
}

func (t *tapped) Resync() error {
	return t.print(t.Queue.Resync(), "Resync", "", nil)
}

func (t *tapped) Close() {
	t.Queue.Close()
	t.line("Close", "")
	t.record("Close", "", nil)
}

// Pop prints the entry before it is processed, then the handler calls
// processing made, or that Pop found the queue closed and empty.
func (t *tapped) Pop(process cache.PopProcessFunc) (any, error) {
	obj, err := t.Queue.Pop(func(obj any, isInInitialList bool) error {
		deltas, ok := obj.(cache.Deltas)
		if !ok {
			return process(obj, isInInitialList)
		}
		line := fmt.Sprintf("  %-8s  %-5s  %s", "Pop", entryKey(deltas), describeDeltas(deltas))
		if isInInitialList {
			line += "  isInInitialList"
		}
		fmt.Fprintln(t.out, line)
		// Recorded before process, so the handler calls it makes follow.
		if trace.On() {
			t.record("Pop", strings.Join(strings.Fields(strings.TrimPrefix(line, "  Pop")), " "), deltas.Newest().Object)
		}
		t.calls = nil
		err := process(obj, isInInitialList)
		t.printCalls(deltas.Newest().Type)
		return err
	})
	if errors.Is(err, cache.ErrFIFOClosed) {
		fmt.Fprintf(t.out, "  %-8s  → ErrFIFOClosed %q\n", "Pop", err)
		t.record("Pop", "→ ErrFIFOClosed: closed and empty", nil)
	}
	return obj, err
}

// printCalls prints the handler calls made for a whole-list entry. The
// store hands out its objects in map order, so the calls that come in
// that order (a SyncAll's, a ReplacedAll's tombstones) are sorted.
func (t *tapped) printCalls(entry cache.DeltaType) {
	switch entry {
	case cache.SyncAll:
		slices.Sort(t.calls)
	case cache.ReplacedAll:
		deletes := 0
		for deletes < len(t.calls) && strings.HasPrefix(t.calls[deletes], "OnDelete") {
			deletes++
		}
		slices.Sort(t.calls[:deletes])
	default:
		return
	}
	for _, call := range t.calls {
		fmt.Fprintf(t.out, "  %-8s  %-5s  → %s\n", "", "", call)
	}
}

// print prints and records a call that succeeded, and returns its
// error. obj is the object the call was given, if one.
func (t *tapped) print(err error, verb, arg string, obj any) error {
	if err == nil {
		t.line(verb, arg)
		t.record(verb, arg, obj)
	}
	return err
}

// record records a call on the queue, or a Pop, on the trace's FIFO
// lane, under the method of the queue's type that did it.
func (t *tapped) record(verb, text string, obj any) {
	if !trace.On() {
		return
	}
	e := trace.Event{Lane: trace.FIFO, Verb: verb, Text: text}
	switch t.Queue.(type) {
	case *cache.DeltaFIFO:
		e.Func = "cache.(*DeltaFIFO)." + verb
	case *cache.RealFIFO:
		e.Func = "cache.(*RealFIFO)." + verb
	}
	if trace.Source(e.Func) == "" {
		e.Func = "" // a method the sources do not link
	}
	switch o := obj.(type) {
	case Pod:
		e.Key = o.Name
	case cache.DeletedFinalStateUnknown:
		e.Key, obj = o.Key, o.Obj
	default:
		obj = nil // a ReplacedAllInfo, a SyncAllInfo: the text says it
	}
	trace.Record(e, obj)
}

func (t *tapped) line(verb, arg string) {
	fmt.Fprintln(t.out, strings.TrimRight(fmt.Sprintf("  %-8s  %s", verb, arg), " "))
}

// tappedBookmarks is a tapped queue that can take bookmarks, because
// the queue it wraps can.
type tappedBookmarks struct{ *tapped }

func (t tappedBookmarks) Bookmark(rv string) error {
	b := t.Queue.(cache.ReflectorBookmarkStore)
	return t.print(b.Bookmark(rv), "Bookmark", "rv "+rv, nil)
}

// noBookmark prints that a bookmark did not reach q.
func noBookmark(q cache.Queue, rv string) {
	if t, ok := q.(*tapped); ok {
		note := fmt.Sprintf("(skipped: %T has no Bookmark method)", t.Queue)
		t.line("Bookmark", "rv "+rv+"  "+note)
		t.record("Bookmark", "rv "+rv+"  "+note, nil)
	}
}

// handlerLog is an event handler that renders each call as a line, and
// records it on the trace's handlers lane.
type handlerLog func(line string)

func (l handlerLog) OnAdd(obj any, isInInitialList bool) {
	l.call("OnAdd", fmt.Sprintf("%s  isInInitialList=%v", describe(obj), isInInitialList), obj)
}

func (l handlerLog) OnUpdate(old, obj any) {
	l.call("OnUpdate", fmt.Sprintf("%s → %s", describe(old), describe(obj)), obj)
}

func (l handlerLog) OnDelete(obj any) { l.call("OnDelete", describe(obj), obj) }

func (l handlerLog) call(verb, text string, obj any) {
	l(verb + " " + text)
	if !trace.On() {
		return
	}
	key, _ := podKey(obj)
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	// The first function on the stack that the trace can link, where
	// the course's copy of processDeltas and of processReplacedAllInfo
	// (internal/cachecopy) counts as the function it copies, and says so.
	fn, copied := trace.Caller(nil)
	if copied {
		text += " (called by the course's copy, internal/cachecopy)"
	}
	trace.Record(trace.Event{Lane: trace.Handlers, Verb: verb, Text: text, Key: key, Func: fn}, obj)
}

// printOptions prints the feature gates cachecopy.QueueOptions reads,
// and the RealFIFOOptions it chose from them.
func printOptions(out io.Writer, opts cache.RealFIFOOptions) {
	gates := features.FeatureGates()
	fmt.Fprintf(out, "  gates:   InOrderInformers=%v AtomicFIFO=%v UnlockWhileProcessingFIFO=%v\n",
		gates.Enabled(features.InOrderInformers),
		gates.Enabled(features.AtomicFIFO),
		gates.Enabled(features.UnlockWhileProcessingFIFO))
	known := "nil"
	if opts.KnownObjects != nil {
		known = "the consumer's store"
	}
	fmt.Fprintf(out, "  options: AtomicEvents=%v UnlockWhileProcessing=%v\n",
		opts.AtomicEvents, opts.UnlockWhileProcessing)
	fmt.Fprintf(out, "           EmitDeltaTypeBookmark=%v KnownObjects=%s\n",
		opts.EmitDeltaTypeBookmark, known)
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
	fmt.Fprintln(out, "  Chosen in tools/cache/controller.go newQueueFIFO (L1063-1094)")
}

// printStore prints what a store holds, sorted by key.
func printStore(out io.Writer, store cache.Store) {
	fmt.Fprintf(out, "  %-8s  %s\n", "store:", describeAll(sorted(store.List())))
}

// entryKey names what a popped entry is about: one object, or (all) for a
// ReplacedAll or SyncAll, or - for a Bookmark.
func entryKey(deltas cache.Deltas) string {
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

// describeDeltas prints deltas oldest first, e.g. [Added pod-1 v1].
func describeDeltas(deltas cache.Deltas) string {
	parts := make([]string, len(deltas))
	for i, d := range deltas {
		var what string
		switch o := d.Object.(type) {
		case cache.ReplacedAllInfo:
			what = "rv=" + o.ResourceVersion + " " + describeAll(o.Objects)
		case cache.BookmarkInfo:
			what = "rv=" + o.ResourceVersion
		case cache.SyncAllInfo:
			what = ""
		default:
			what = describe(o)
		}
		parts[i] = "[" + strings.TrimSpace(fmt.Sprintf("%s %s", d.Type, what)) + "]"
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

// describeAll prints objects in the order given: "pod-1 v1, pod-2 v1".
func describeAll(objs []any) string {
	names := make([]string, len(objs))
	for i, o := range objs {
		names[i] = describe(o)
	}
	return strings.Join(names, ", ")
}

// sorted orders objects by key, for output that does not depend on
// Go's map order.
func sorted(objs []any) []any {
	slices.SortFunc(objs, func(a, b any) int {
		ka, _ := podKey(a)
		kb, _ := podKey(b)
		return cmp.Compare(ka, kb)
	})
	return objs
}

// guard closes q when ctx ends, as controller.go's RunWithContext
// does (L174-177), so a Pop can never outlive the chapter. Call the
// returned func to release it.
func guard(ctx context.Context, q cache.Queue) (release func()) {
	stop := context.AfterFunc(ctx, q.Close)
	return func() { stop() }
}
