package main

// What the chapter needs only to show the queues at work, and nothing
// of what it teaches: the course's queue tap and reporting handler
// (internal/tap) around each queue, the printing of what they record,
// the formatting of options and stores, and the guard that closes a
// queue when the run ends. The taps also record what they see for
// --trace and --view (internal/trace): the FIFO lane (each call, each
// Pop) and the handlers lane. The store lane stays empty: the stores
// are main.go's, written by cachecopy.ProcessDeltas, and nothing here
// wraps them.

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"k8s.io/client-go/features"
	"k8s.io/client-go/tools/cache"

	"github.com/informer-walkthrough/informer-walkthrough/internal/show"
	"github.com/informer-walkthrough/informer-walkthrough/internal/tap"
	"github.com/informer-walkthrough/informer-walkthrough/internal/trace"
)

// observe wraps q in the course's queue tap (tap.FIFO), which records
// every call made on it, and returns it with the course's reporting
// handler (tap.Handler), which stands in for the informer's event
// handlers. Every call on a queue here runs on the step's goroutine,
// so each is printed as it is recorded (tap.Recorder.Follow): a call
// on the queue as it returns, a Pop with the entry it handed out. After
// an entry that holds a whole list (ReplacedAll, SyncAll) come the
// handler calls processing it made: that is where the per-object
// events reappear. For any other entry a call only restates the delta
// (Added is OnAdd), so it is not printed. The trace gets the same
// events, on the FIFO and handlers lanes.
func observe(out io.Writer, q cache.Queue) (cache.Queue, cache.ResourceEventHandler) {
	rec := tap.NewRecorder(context.Background())
	p := &printer{out: out}
	rec.Follow(p.follow)
	return tap.NewFIFO(q, rec, podKey), tap.Handler{Rec: rec}
}

// printer prints the calls a queue's tap and its handler record.
type printer struct {
	out   io.Writer
	calls []tap.HandlerCall // the handler calls made for the entry being popped
}

func (p *printer) follow(e tap.Event) {
	switch e := e.(type) {
	case tap.HandlerCall:
		p.calls = append(p.calls, e)
	case tap.FIFOCall:
		p.print(e)
	case skippedBookmark:
		fmt.Fprintf(p.out, "  %-8s  %s\n", "Bookmark", e)
	}
}

// print prints a call on the queue that succeeded; a Pop, with the
// handler calls processing its entry made.
func (p *printer) print(c tap.FIFOCall) {
	calls := p.calls
	p.calls = nil
	switch {
	case c.Method == "Pop" && len(c.Deltas) == 0:
		fmt.Fprintf(p.out, "  %-8s  → ErrFIFOClosed %q\n", "Pop", c.Err)
	case c.Method == "Pop":
		line := fmt.Sprintf("  %-8s  %-5s  %s", "Pop", c.Key, show.Deltas(c.Deltas))
		if c.InInitialList {
			line += "  isInInitialList"
		}
		fmt.Fprintln(p.out, line)
		p.printCalls(c.Deltas.Newest().Type, calls)
	case c.Err == nil:
		arg := ""
		switch c.Method {
		case "Add", "Update", "Delete":
			arg = show.Describe(c.Obj)
		case "Replace":
			arg = fmt.Sprintf("%s  (rv %s)", show.List(c.List), c.ResourceVersion)
		case "Bookmark":
			arg = "rv " + c.ResourceVersion
		}
		fmt.Fprintln(p.out, strings.TrimRight(fmt.Sprintf("  %-8s  %s", c.Method, arg), " "))
	}
}

// printCalls prints the handler calls made for a whole-list entry. The
// store hands out its objects in map order, so the calls that come in
// that order (a SyncAll's, a ReplacedAll's tombstones) are sorted.
func (p *printer) printCalls(entry cache.DeltaType, calls []tap.HandlerCall) {
	lines := make([]string, len(calls))
	for i, c := range calls {
		lines[i] = callLine(c)
	}
	switch entry {
	case cache.SyncAll:
		slices.Sort(lines)
	case cache.ReplacedAll:
		deletes := 0
		for deletes < len(calls) && calls[deletes].Method == "OnDelete" {
			deletes++
		}
		slices.Sort(lines[:deletes])
	default:
		return
	}
	for _, line := range lines {
		fmt.Fprintf(p.out, "  %-8s  %-5s  → %s\n", "", "", line)
	}
}

// callLine is a handler call as this chapter prints it: its objects as
// the Pod's String method says them ("pod-1 v2 → pod-1 v3").
func callLine(c tap.HandlerCall) string {
	switch c.Method {
	case "OnAdd":
		return fmt.Sprintf("OnAdd %s  isInInitialList=%v", show.Describe(c.Obj), c.InInitialList)
	case "OnUpdate":
		return fmt.Sprintf("OnUpdate %s → %s", show.Describe(c.Old), show.Describe(c.Obj))
	}
	return c.Method + " " + show.Describe(c.Obj)
}

// noBookmark records that a bookmark did not reach q, which has no
// method to take it: no call a tap could see.
func noBookmark(q cache.Queue, rv string) {
	if f, ok := q.(*tap.FIFO); ok {
		f.Rec.Record(skippedBookmark{queue: f.Queue, rv: rv})
	}
}

// skippedBookmark is a bookmark that a queue could not take.
type skippedBookmark struct {
	queue cache.Queue
	rv    string
}

func (b skippedBookmark) String() string {
	return fmt.Sprintf("rv %s  (skipped: %T has no Bookmark method)", b.rv, b.queue)
}

// Trace is the bookmark on the FIFO lane, under no function: none ran.
func (b skippedBookmark) Trace() (trace.Event, any) {
	return trace.Event{Lane: trace.FIFO, Verb: "Bookmark", Text: b.String()}, nil
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
	fmt.Fprintf(out, "  %-8s  %s\n", "store:", show.List(sorted(store.List())))
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
