package main

// What the chapter needs to *show* its informers at work, and nothing of
// what it teaches: the printing of the handler calls that the course's
// tap.Handler records (internal/tap), of objects and of requests, and a
// Transform that reports what the reflector queues. The informers
// themselves, and every client-go call they are built from, are in
// main.go. The Transforms also record what they see for --trace and
// --view (internal/trace): each object a Transform sees queued (FIFO
// lane) or buffered by a watch-list (reflector lane); the handlers lane
// is the tap's.

import (
	"context"
	"fmt"
	"io"
	"maps"
	"path"
	"slices"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/tools/cache"

	"github.com/informer-walkthrough/informer-walkthrough/internal/apiserver"
	"github.com/informer-walkthrough/informer-walkthrough/internal/show"
	"github.com/informer-walkthrough/informer-walkthrough/internal/tap"
	"github.com/informer-walkthrough/informer-walkthrough/internal/trace"
)

// queuedTap is a Transform that changes nothing: it reports each object
// as the reflector queues it, from inside the RealFIFO's Add, Update and
// Replace (and, for a watch-list, its temporary store).
func queuedTap(lines *show.Lines) cache.TransformFunc {
	return func(obj any) (any, error) {
		recordTransform(obj)
		lines.Sendf("queued    %s", show.Describe(obj))
		return obj, nil
	}
}

// recordTransform records an object a Transform is given, in the lane
// of the client-go function that gave it (trace.RecordTransform).
func recordTransform(obj any) { trace.RecordTransform(obj, show.Describe(obj)) }

// isRewatch picks, among the requests of step 6, the reflector's re-watch
// after its stream ended: a watch from a resourceVersion, not a
// watch-list (sendInitialEvents) as the first sync and the relist are.
func isRewatch(r apiserver.Request) bool {
	return r.Verb == "watch" && r.Query.Get("sendInitialEvents") == ""
}

// printInitialList awaits the n handler calls of the initial list and
// says so in one line, if they are all OnAdd with isInInitialList=true;
// if not, it prints them.
func printInitialList(ctx context.Context, out io.Writer, rec *tap.Recorder, n int) error {
	got, err := rec.Await(ctx, n)
	calls := tap.HandlerCalls(got)
	for _, call := range calls {
		if call.Method != "OnAdd" || !call.InInitialList {
			for _, call := range calls {
				fmt.Fprintf(out, "  not an initial add: %s\n", call)
			}
			return err
		}
	}
	fmt.Fprintf(out, "  synced: %d OnAdd calls with isInInitialList=true\n", len(calls))
	return err
}

// printCalls awaits the handler call a change caused and prints it after
// what, the change.
func printCalls(ctx context.Context, out io.Writer, rec *tap.Recorder, what string) error {
	got, err := rec.Calls().Await(ctx, 1)
	for _, line := range got {
		fmt.Fprintf(out, "  %-22s -> %s\n", what, line)
	}
	return err
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
// delta it queued, and the handler calls that processDeltas made of it
// (for a bookmark, none: the store learns its resourceVersion).
// processDeltas walks the store's map for a SyncAll and for the
// tombstones of a ReplacedAll: those calls are sorted.
func printRow(out io.Writer, call string, popped cache.DeltaType, calls []tap.HandlerCall, store cache.Store) {
	var lines []string
	for _, c := range calls {
		lines = append(lines, c.String())
	}
	switch popped {
	case cache.SyncAll:
		slices.Sort(lines)
	case cache.ReplacedAll:
		deletes := 0
		for deletes < len(calls) && calls[deletes].Method == "OnDelete" {
			deletes++
		}
		slices.Sort(lines[:deletes])
	case cache.Bookmark:
		lines = []string{"(none) store.LastStoreSyncResourceVersion()=" + store.LastStoreSyncResourceVersion()}
	}
	for i, line := range lines {
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
