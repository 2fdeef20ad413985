package main

// What the chapter needs to *show* its informers at work, and nothing of
// what it teaches: a handler that reports each call as a line, handlers
// held at a gate, and the formatting of handler calls, objects and
// requests. The informers themselves, and every client-go call they are
// built from, are in main.go. The handler and the Transforms also record
// what they see for --trace and --view (internal/trace): each handler
// call (handlers lane), and each object a Transform sees queued (FIFO
// lane) or buffered by a watch-list (reflector lane).

import (
	"context"
	"fmt"
	"io"
	"maps"
	"path"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/tools/cache"

	"github.com/informer-walkthrough/informer-walkthrough/internal/apiserver"
	"github.com/informer-walkthrough/informer-walkthrough/internal/show"
	"github.com/informer-walkthrough/informer-walkthrough/internal/trace"
)

// handler is the chapter's ResourceEventHandler. Informers call it on
// their own goroutines, so it does not print: it reports each call as a
// line, and the step that made the change awaits the lines and prints
// them in order.
type handler struct {
	lines *show.Lines
	name  string      // step 7 names its handlers
	store cache.Store // step 8: report what the store holds at each call
}

func (h handler) OnAdd(obj any, isInInitialList bool) {
	if trace.On() {
		h.record("OnAdd", fmt.Sprintf("%s  isInInitialList=%t", describe(obj), isInInitialList), obj, false)
	}
	h.send("OnAdd     %s  isInInitialList=%t", describe(obj), isInInitialList)
}

func (h handler) OnUpdate(oldObj, newObj any) {
	line := fmt.Sprintf("OnUpdate  %s -> rv=%s", describe(oldObj), rvOf(newObj))
	if oldObj == newObj {
		line += "  (old == new)"
	}
	h.record("OnUpdate", strings.TrimPrefix(line, "OnUpdate  "), newObj, oldObj == newObj)
	h.send("%s", line)
}

// !+ondelete
// OnDelete handles the tombstone a relist leaves (step 6) instead of
// asserting obj.(*corev1.ConfigMap), which would panic on it.
func (h handler) OnDelete(obj any) {
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		// tomb.Key is certain; tomb.Obj is the last state cached, or nil.
		h.send("OnDelete  DeletedFinalStateUnknown key=%s, last known %s",
			tomb.Key, describe(tomb.Obj))
		return
	}
	h.send("OnDelete  %s", describe(obj))
}

// !-ondelete

// record records a handler call on the trace's handlers lane, under the
// client-go function that made it. An informer's OnUpdate(obj, obj) is a
// resync (step 5), which a timer repeats: the trace does not count those.
// (Step 4's is the course's copy of processDeltas, given one SyncAll.)
func (h handler) record(verb, text string, obj any, same bool) {
	if !trace.On() {
		return
	}
	if h.name != "" {
		text = h.name + ": " + text
	}
	fn, copied := trace.Caller(nil)
	if copied {
		text += " (called by the course's copy, internal/cachecopy)"
	}
	trace.Record(trace.Event{Lane: trace.Handlers, Verb: verb, Text: text, Func: fn, Timed: same && !copied}, obj)
}

func (h handler) send(format string, a ...any) {
	line := fmt.Sprintf(format, a...)
	if rest, ok := strings.CutPrefix(line, "OnDelete  "); ok {
		// Recorded here, not in OnDelete, whose code the README quotes
		// as a handler's should be: so without the object.
		h.record("OnDelete", rest, nil, false)
	}
	if h.name != "" {
		line = fmt.Sprintf("%-4s  %s", h.name, line)
	}
	if h.store != nil {
		var held []string
		for _, obj := range h.store.List() {
			m, _ := meta.Accessor(obj)
			held = append(held, m.GetName()+"="+m.GetResourceVersion())
		}
		slices.Sort(held)
		line += "  store: " + strings.Join(held, " ")
	}
	h.lines.Send(line)
}

// gated is a handler whose first OnAdd waits for its gate to open: a
// stand-in for a handler that is slow to catch up.
type gated struct {
	handler
	gate *gate
	once sync.Once
}

func (g *gated) OnAdd(obj any, isInInitialList bool) {
	g.once.Do(func() { <-g.gate.opened })
	g.handler.OnAdd(obj, isInInitialList)
}

// held is a handler whose first OnUpdate, once reported, waits for its
// gate to open. A plain informer calls its handler on the loop that pops
// its queue, so meanwhile nothing is popped: what the reflector receives
// queues up behind it (step 8).
type held struct {
	handler
	gate *gate
	once sync.Once
}

func (h *held) OnUpdate(oldObj, newObj any) {
	h.handler.OnUpdate(oldObj, newObj)
	h.once.Do(func() { <-h.gate.opened })
}

// queuedTap is a Transform that changes nothing: it reports each object
// as the reflector queues it, from inside the RealFIFO's Add, Update and
// Replace (and, for a watch-list, its temporary store).
func queuedTap(lines *show.Lines) cache.TransformFunc {
	return func(obj any) (any, error) {
		recordTransform(obj)
		lines.Sendf("queued    %s", describe(obj))
		return obj, nil
	}
}

// recordTransform records an object a Transform is given, in the lane
// of the client-go function that gave it (trace.RecordTransform).
func recordTransform(obj any) { trace.RecordTransform(obj, describe(obj)) }

// A gate holds back a gated handler until it is opened, once.
type gate struct {
	opened chan struct{}
	once   sync.Once
}

func newGate() *gate { return &gate{opened: make(chan struct{})} }

func (g *gate) open() { g.once.Do(func() { close(g.opened) }) }

// isRewatch picks, among the requests of step 6, the reflector's re-watch
// after its stream ended: a watch from a resourceVersion, not a
// watch-list (sendInitialEvents) as the first sync and the relist are.
func isRewatch(r apiserver.Request) bool {
	return r.Verb == "watch" && r.Query.Get("sendInitialEvents") == ""
}

// printInitialList awaits the n handler calls of the initial list and
// says so in one line, if they are all OnAdd with isInInitialList=true;
// if not, it prints them.
func printInitialList(ctx context.Context, out io.Writer, lines *show.Lines, n int) {
	got, _ := lines.Await(ctx, n)
	for _, line := range got {
		if !strings.HasPrefix(line, "OnAdd ") || !strings.HasSuffix(line, "isInInitialList=true") {
			show.Print(out, "  not an initial add: ", got)
			return
		}
	}
	fmt.Fprintf(out, "  synced: %d OnAdd calls with isInInitialList=true\n", len(got))
}

// The print functions await lines, then print them. Once ctx has ended
// they print what came and return at once; run then reports why ctx
// ended. (Await fails only then.)

// printCalls awaits the handler call a change caused and prints it after
// what, the change.
func printCalls(ctx context.Context, out io.Writer, lines *show.Lines, what string) {
	got, _ := lines.Await(ctx, 1)
	for _, line := range got {
		fmt.Fprintf(out, "  %-22s -> %s\n", what, line)
	}
}

// printTeams prints what step 2's two ByIndex calls returned.
func printTeams(out io.Writer, blue, red []any) {
	fmt.Fprintf(out, "  ByIndex(\"team\", %-6q) %v\n", "blue", names(blue))
	fmt.Fprintf(out, "  ByIndex(\"team\", %-6q) %v\n", "red", names(red))
}

// printRowHeading prints the heading of step 4's table.
func printRowHeading(out io.Writer) {
	fmt.Fprintf(out, "  %-20s %-12s  %s\n", "reflector calls", "delta popped", "handler calls made by processDeltas")
}

// printRow prints one row of step 4's table: a reflector call, the
// delta it queued, and the handler calls that processDeltas made of it.
// processDeltas walks the store's map for a SyncAll and for the
// tombstones of a ReplacedAll: those calls are sorted.
func printRow(out io.Writer, call string, popped cache.DeltaType, calls []string) {
	switch popped {
	case cache.SyncAll:
		slices.Sort(calls)
	case cache.ReplacedAll:
		deletes := 0
		for deletes < len(calls) && strings.HasPrefix(calls[deletes], "OnDelete") {
			deletes++
		}
		slices.Sort(calls[:deletes])
	}
	for i, line := range calls {
		left := fmt.Sprintf("%-20s %-12s", call, popped)
		if i > 0 {
			left = fmt.Sprintf("%-33s", "")
		}
		fmt.Fprintf(out, "  %s  %s\n", left, line)
	}
}

// informerRequests renders the list and watch requests short: the
// resource for the path, and without the label selector every one of
// them carries.
func informerRequests(reqs []apiserver.Request) []string {
	var lines []string
	for _, r := range listsAndWatches(reqs) {
		r.Path = path.Base(r.Path)
		r.Query = maps.Clone(r.Query)
		delete(r.Query, "labelSelector")
		lines = append(lines, r.String())
	}
	return lines
}

// listsAndWatches keeps the requests an informer makes.
func listsAndWatches(reqs []apiserver.Request) []apiserver.Request {
	return slices.DeleteFunc(slices.Clone(reqs), func(r apiserver.Request) bool {
		return !show.ListsAndWatches(r)
	})
}

// describe names an object and its resourceVersion.
func describe(obj any) string {
	if obj == nil {
		return "nothing"
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return fmt.Sprintf("a %T", obj)
	}
	return fmt.Sprintf("configmap/%s rv=%s", m.GetName(), m.GetResourceVersion())
}

func rvOf(obj any) string {
	if m, err := meta.Accessor(obj); err == nil {
		return m.GetResourceVersion()
	}
	return "?"
}

// names returns the objects' names, sorted: ByIndex returns them in map
// order.
func names(objs []any) []string {
	out := []string{}
	for _, obj := range objs {
		if m, err := meta.Accessor(obj); err == nil {
			out = append(out, m.GetName())
		}
	}
	slices.Sort(out)
	return out
}

// counted wraps a Transform and counts its calls in n (step 3), so that
// the Transform the chapter shows does only what a Transform should.
func counted(n *atomic.Int64, transform cache.TransformFunc) cache.TransformFunc {
	return func(obj any) (any, error) {
		n.Add(1)
		recordTransform(obj)
		return transform(obj)
	}
}
