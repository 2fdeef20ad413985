package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"

	"github.com/informer-walkthrough/informer-walkthrough/internal/apiserver"
	"github.com/informer-walkthrough/informer-walkthrough/internal/cluster"
	"github.com/informer-walkthrough/informer-walkthrough/internal/show"
	"github.com/informer-walkthrough/informer-walkthrough/internal/tap"
	"github.com/informer-walkthrough/informer-walkthrough/internal/trace"
)

// What the chapter sees of a pipeline and prints, and the faults that
// steps 4 to 6 stage, each said in one line. The reflector's
// ListerWatcher is the course's tap (internal/tap): it records each
// List and Watch the reflector makes, each event a stream carries and
// each stream that ends under it, into the pipeline's recorder; the
// Pop loop reports each delta it applied. A step awaits those, in the
// order the lesson expects them, and prints one line for each event,
// delta, pod and store. The trace (--trace, --view) gets the tap's
// events on the reflector lane as the tap records them; the Pop loop's
// pops and store writes on the FIFO and store lanes; the timers the
// reflector sets on its clock (tap.Clock), on the reflector lane. The FIFO lane has the
// pops only: the reflector writes into the DeltaFIFO itself, which
// main.go does not wrap.

// window is what the chapter sees of a pipeline: the tap on its
// ListerWatcher, its clock, and what they and the Pop loop report.
type window struct {
	lw      *tap.ListerWatcher // the reflector's ListerWatcher, tapped
	clock   *tap.Clock         // the reflector's clock, if tapped: steps 5 to 7 move it
	backoff *tap.Gate          // holds the reflector's After, for step 5
	rec     *tap.Recorder      // what the tap records, from start on
	popped  *show.Feed[pop]    // what the Pop loop applied to the store
	popErr  error              // why the Pop loop ended
	holding bool               // the client holds the watch's bytes (holdWatch)

	// How the tap's events are rendered: a watch-list's initial
	// events are held until its bookmark, then printed sorted; lines
	// rendered beyond what a step awaited wait for the next.
	initial bool
	held    []string
	pending []string
}

// pop is one delta the Pop loop applied, with the isInInitialList flag
// Pop passed; or the error that process returned.
type pop struct {
	delta   cache.Delta
	initial bool
	err     error
}

// open makes the recorder and the feed for a pipeline that starts: they
// stop accepting events when ctx ends, so a report never keeps the
// pipeline from stopping.
func (w *window) open(ctx context.Context) {
	w.rec, w.popped = tap.NewRecorder(ctx), show.NewFeed[pop](ctx)
	w.lw.Rec = w.rec
	if w.clock != nil {
		w.clock.Rec = tap.NewRecorder(ctx) // a held After goes on when the pipeline stops
	}
}

// observed wraps the Pop loop's process function: once process has
// applied an object's deltas, it reports each one, with the
// isInInitialList flag Pop passed; or it reports process's error. For
// the trace it records each delta popped (FIFO lane) and, once process
// has applied them, the store write each became (store lane).
func (p *pipeline) observed(process cache.PopProcessFunc) cache.PopProcessFunc {
	return func(obj any, isInInitialList bool) error {
		writes := p.recordPop(obj, isInInitialList)
		if err := process(obj, isInInitialList); err != nil {
			p.popped.Send(pop{err: err})
			return err
		}
		for _, w := range writes {
			trace.Record(w.event, w.obj)
		}
		deltas, _ := obj.(cache.Deltas) // process has checked the type
		for _, d := range deltas {
			p.popped.Send(pop{delta: d, initial: isInInitialList})
		}
		return nil
	}
}

// A storeWrite is a store lane event, recorded once process has made it.
type storeWrite struct {
	event trace.Event
	obj   any
}

// recordPop records the deltas of one Pop on the FIFO lane, one
// "popped" event each, not one "Pop" (whether the FIFO hands a key's
// deltas out in one Pop or two depends on when the Pop loop comes
// round, so the trace does not say), and returns the store write each delta will be. Those follow apply in
// main.go, which the Pop loop alone calls: Deleted deletes; any other
// delta updates a key the store holds, and adds one it does not, which
// this reads from the store before process runs.
func (p *pipeline) recordPop(obj any, isInInitialList bool) []storeWrite {
	deltas, ok := obj.(cache.Deltas)
	if !ok || !trace.On() {
		return nil
	}
	var writes []storeWrite
	held := map[string]bool{}
	for _, d := range deltas {
		line := strings.Join(strings.Fields(describeDelta(d, isInInitialList)), " ")
		trace.Record(trace.Event{Lane: trace.FIFO, Verb: "popped", Text: line,
			Func: "cache.(*DeltaFIFO).Pop"}, d.Object)
		key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(d.Object)
		if err != nil {
			continue
		}
		if _, seen := held[key]; !seen {
			_, held[key], _ = p.store.GetByKey(key)
		}
		verb := "Add"
		switch {
		case d.Type == cache.Deleted:
			verb, held[key] = "Delete", false
		case held[key]:
			verb = "Update"
		default:
			held[key] = true
		}
		writes = append(writes, storeWrite{trace.Event{Lane: trace.Store, Verb: verb,
			Text: key + " (" + string(d.Type) + ")", Key: key, Func: "cache.(*cache)." + verb}, d.Object})
	}
	return writes
}

// next awaits the next n watch lines and m deltas, in arrival order,
// except where client-go does not define one: the initial events of a
// watch-list, which the reflector gathers in a map (watchLines sorts
// them), and the Replaced or Sync deltas that one Replace or Resync
// queues in map order (sortRuns).
func (w *window) next(ctx context.Context, n, m int) (watched, popped []string, err error) {
	if watched, err = w.watchLines(ctx, n); err != nil {
		return nil, nil, err
	}
	pops, err := w.popped.Await(ctx, m)
	if err != nil {
		return nil, nil, err
	}
	return watched, popLines(sortRuns(pops, cache.Replaced, cache.Sync)), nil
}

// watchLines awaits the tap's events until they make n watch lines: a
// watch that opened a stream, or was refused; each event a stream
// carried; a stream that ended. A LIST is not a watch line (the
// request log shows it).
func (w *window) watchLines(ctx context.Context, n int) ([]string, error) {
	for len(w.pending) < n {
		e, err := w.rec.Next(ctx)
		if err != nil {
			return nil, fmt.Errorf("waiting for watch line %d of %d (got %q): %w", len(w.pending)+1, n, w.pending, err)
		}
		w.pending = append(w.pending, w.render(e)...)
	}
	lines := w.pending[:n:n]
	w.pending = w.pending[n:]
	return lines, nil
}

// render is the watch lines one event of the tap makes: none for a
// LIST, or for an initial event of a watch-list, which is held until
// the bookmark that ends them (or an error) comes, and then printed
// with the others, sorted.
func (w *window) render(e tap.Event) []string {
	switch e := e.(type) {
	case tap.ListWatchCall:
		switch {
		case e.Method != "Watch":
			return nil
		case e.Err != nil:
			return []string{describeWatchError(e.Err)}
		}
		w.initial = e.Options.SendInitialEvents != nil && *e.Options.SendInitialEvents
		return []string{"(new stream)"}
	case tap.WatchEvent:
		if w.initial && e.Type == watch.Added {
			w.held = append(w.held, describeEvent(e))
			return nil
		}
		slices.Sort(w.held)
		lines := append(w.held, describeEvent(e))
		w.initial, w.held = false, nil
		return lines
	case tap.WatchEnded:
		return []string{e.String()}
	}
	return nil
}

// printPipeline prints what came through the pipeline next: n watch
// lines and m deltas, then the store.
func (p *pipeline) printPipeline(ctx context.Context, out io.Writer, n, m int) error {
	watched, popped, err := p.next(ctx, n, m)
	if err != nil {
		return err
	}
	printLines(out, watched, popped)
	printStore(out, p.store)
	return nil
}

// printRequestsAndPipeline is printPipeline after the requests made since the
// last ResetRequests (show.Requests), read once the watch lines and
// deltas have come; "(none)" if there were none.
func (p *pipeline) printRequestsAndPipeline(ctx context.Context, out io.Writer,
	c *cluster.Cluster, n, m int) error {
	watched, popped, err := p.next(ctx, n, m)
	if err != nil {
		return err
	}
	reqs := show.Requests(c.Requests(), nil)
	if len(reqs) == 0 {
		reqs = []string{"(none)"}
	}
	show.Print(out, "  req    ", reqs)
	printLines(out, watched, popped)
	printStore(out, p.store)
	return nil
}

// holdWatch has the chapter's client hold the bytes of every watch
// stream in its transport from now on (cluster.ClientFaults): the event
// of a change made now does not reach the reflector.
func (w *window) holdWatch(out io.Writer, c *cluster.Cluster, change string) {
	c.Faults().HoldWatches()
	w.holding = true
	fmt.Fprintf(out, "  client holds the watch's bytes; meanwhile: %s\n", change)
}

// endWatch has the chapter's client end the reflector's watch: its next
// read returns io.EOF, as when a server or a load balancer closes a
// watch, and the bytes the client held are dropped with it. With an
// answer, the client also answers the reflector's next plain watch (its
// resume) with that error itself, instead of sending it; why says what
// in the real world answers so. The clock's tap is readied for what the
// answer makes the reflector do: after a 429 it backs off in its clock's
// After, which the step holds for as long as it needs (awaitBackoff,
// endBackoff); after a 410 it relists, which arms a new resync timer, so
// the timers armed so far are forgotten, and step 6 waits for the new.
func (p *pipeline) endWatch(out io.Writer, c *cluster.Cluster,
	answer *apierrors.StatusError, why string) {
	faults := c.Faults()
	line := "  client ends the watch"
	if p.holding {
		line += ", dropping what it held"
	}
	if answer != nil {
		switch {
		case apierrors.IsTooManyRequests(answer):
			faults.Answer(isResume, answer) // flow control refuses the request
			p.backoff = p.clock.Rec.Hold(1, func(e tap.Event) bool {
				call, ok := e.(tap.ClockCall)
				return ok && call.Method == "After"
			})
		case apierrors.IsResourceExpired(answer):
			faults.AnswerWatch(isResume, answer) // an ERROR event in an open stream
			p.clock.Rec.Drain()                  // the resync timers armed so far
		}
		st := answer.Status()
		line += fmt.Sprintf("; it answers the resume itself: %d %s, %s", st.Code, st.Reason, why)
	}
	faults.EndWatches()
	faults.ReleaseWatches() // the resume's stream must flow
	p.holding = false
	fmt.Fprintln(out, line)
}

// isResume is a request to resume a watch: a plain watch of pods, not a
// watch-list.
func isResume(r apiserver.Request) bool {
	return r.Verb == "watch" && r.Resource == "pods" && r.Query.Get("sendInitialEvents") == ""
}

// printLines prints watch events and deltas, one line each.
func printLines(out io.Writer, watched, popped []string) {
	show.Print(out, "  watch  ", watched)
	show.Print(out, "  pop    ", popped)
}

// sortRuns sorts each run of consecutive deltas of one of the given
// types by the line each prints, and leaves every other delta where it
// is.
func sortRuns(pops []pop, types ...cache.DeltaType) []pop {
	of := func(p pop) cache.DeltaType { return p.delta.Type }
	for i := 0; i < len(pops); {
		j := i + 1
		if pops[i].err == nil && slices.Contains(types, of(pops[i])) {
			for j < len(pops) && pops[j].err == nil && of(pops[j]) == of(pops[i]) {
				j++
			}
			slices.SortFunc(pops[i:j], func(a, b pop) int { return strings.Compare(a.String(), b.String()) })
		}
		i = j
	}
	return pops
}

// popLines is what the Pop loop applied, one line per delta.
func popLines(pops []pop) []string {
	var lines []string
	for _, p := range pops {
		lines = append(lines, p.String())
	}
	return lines
}

// String is the delta as describeDelta shows it, or process's error.
func (p pop) String() string {
	if p.err != nil {
		return "error " + p.err.Error()
	}
	return describeDelta(p.delta, p.initial)
}

// discard awaits n watch lines and m deltas without printing them.
func (w *window) discard(ctx context.Context, n, m int) error {
	_, _, err := w.next(ctx, n, m)
	return err
}

// leftovers fails if anything arrived that the chapter did not expect:
// a replayed event or a duplicate delta would show up here.
func (w *window) leftovers() error {
	var extra []string
	for _, e := range w.rec.Drain() {
		w.pending = append(w.pending, w.render(e)...)
	}
	for _, l := range append(w.pending, w.held...) {
		extra = append(extra, "watch "+l)
	}
	for _, l := range popLines(w.popped.Drain()) {
		extra = append(extra, "pop "+l)
	}
	if len(extra) > 0 {
		return fmt.Errorf("unexpected: %s", strings.Join(extra, "; "))
	}
	return nil
}

// printStopped says how the stopped pipeline's two goroutines ended,
// and that nothing arrived that the chapter did not expect, or fails.
func (p *pipeline) printStopped(out io.Writer) error {
	fmt.Fprintln(out, "  reflector: RunWithContext returned")
	fmt.Fprintf(out, "  pop loop:  Pop returned %q\n", p.popErr)
	if errors.Is(p.popErr, cache.ErrFIFOClosed) {
		trace.Record(trace.Event{Lane: trace.FIFO, Verb: "Pop", Text: "→ ErrFIFOClosed: closed and empty",
			Func: "cache.(*DeltaFIFO).Pop"}, nil)
	}
	if err := p.leftovers(); err != nil {
		return err
	}
	fmt.Fprintln(out, "  no watch event or delta left unread")
	return nil
}

// startStep prints a step's heading, after a blank line, and starts the
// request log afresh: the requests a step prints are its own.
func startStep(out io.Writer, c *cluster.Cluster, heading string) {
	fmt.Fprintln(out, "\n"+heading)
	c.ResetRequests()
}

func printStore(out io.Writer, store cache.Store) {
	fmt.Fprintf(out, "  store  %s\n", describeStore(store))
}

// relists returns the requests that start a relist: a LIST, or a
// watch-list (a watch that asks for the initial events).
func relists(reqs []apiserver.Request) []apiserver.Request {
	var out []apiserver.Request
	for _, r := range reqs {
		if r.Verb == "list" || r.Query.Get("sendInitialEvents") == "true" {
			out = append(out, r)
		}
	}
	return out
}

// describeEvent is the tap's line for an event (tap.WatchEvent.String,
// that is show.Event), with what this chapter looks for in an ERROR:
// whether it is the 410 that makes the reflector relist (isExpiredError,
// reflector.go). It stays here, not in show.Event: chapter 01 prints the
// same test as a line of its own, under the event.
func describeEvent(e tap.WatchEvent) string {
	line := e.String()
	if e.Type == watch.Error {
		line += fmt.Sprintf(" (IsResourceExpired=%t)", apierrors.IsResourceExpired(apierrors.FromObject(e.Object)))
	}
	return line
}

// describeWatchError prints a watch request that was refused: no
// stream was opened, and the reflector got err instead.
func describeWatchError(err error) string {
	var st apierrors.APIStatus
	if !errors.As(err, &st) {
		return "(no stream) " + err.Error()
	}
	s := st.Status()
	line := fmt.Sprintf("(no stream) %d %s: %s", s.Code, s.Reason, s.Message)
	switch {
	case apierrors.IsTooManyRequests(err):
		line += " (IsTooManyRequests=true)"
	case apierrors.IsResourceExpired(err):
		line += " (IsResourceExpired=true)"
	}
	return line
}

// describeDelta prints one delta: its type, the FIFO key, the pod, and
// the isInInitialList flag Pop passed with it.
func describeDelta(d cache.Delta, initial bool) string {
	switch obj := d.Object.(type) {
	case *corev1.Pod:
		return fmt.Sprintf("%-9s %s/%s  %s  initial=%t", d.Type,
			obj.Namespace, obj.Name, show.PodState(obj), initial)
	case cache.DeletedFinalStateUnknown:
		last := "unknown"
		if pod, ok := obj.Obj.(*corev1.Pod); ok {
			last = fmt.Sprintf("%s rv=%s", pod.Status.Phase, pod.ResourceVersion)
		}
		return fmt.Sprintf("%-9s %s  DeletedFinalStateUnknown (last known: %s)  initial=%t",
			d.Type, obj.Key, last, initial)
	default:
		return fmt.Sprintf("%-9s %T  initial=%t", d.Type, obj, initial)
	}
}

// describeStore lists the store's pods sorted by key.
func describeStore(store cache.Store) string {
	keys := store.ListKeys()
	slices.Sort(keys)
	var parts []string
	for _, k := range keys {
		obj, ok, err := store.GetByKey(k)
		if pod, isPod := obj.(*corev1.Pod); err == nil && ok && isPod {
			parts = append(parts, fmt.Sprintf("%s (%s, rv=%s)",
				pod.Name, pod.Status.Phase, pod.ResourceVersion))
		}
	}
	if len(parts) == 0 {
		return "(empty)"
	}
	return strings.Join(parts, ", ")
}

// The reflector's clock.

// newClock is the reflector's clock: a fake one, tapped (tap.Clock), so
// that the steps see the timers the reflector sets on it. Its calls are
// recorded apart from the ListerWatcher's, whose events the steps read
// in order (open makes its recorder); on the trace they go on the
// reflector lane.
//
// The reflector arms its resync timer on a goroutine of its own
// (watchWithResync, reflector.go) as a list ends, so whether the
// NewTimer falls before the step that saw the list ends or after it
// varies from run to run: the trace marks it maybe, which its page
// shows and its golden text leaves out.
func newClock() *tap.Clock {
	trace.MarkMaybe(func(e trace.Event) bool {
		return e.Lane == trace.Reflector && e.Verb == "NewTimer"
	})
	return tap.NewClock(nil, apiserver.FixedTime, trace.Reflector)
}

// awaitBackoff returns how long the reflector waits in its clock's
// After, once it waits there, held by the step (endWatch holds the
// After a 429 causes): reflector.go's watch and watchList wait
// r.clock.After(r.delayHandler()) before they watch again.
func (w *window) awaitBackoff(ctx context.Context) (time.Duration, error) {
	for {
		e, err := w.clock.Rec.Next(ctx)
		if err != nil {
			return 0, fmt.Errorf("waiting for the reflector's backoff: %w", err)
		}
		if call, ok := heldAfter(e); ok {
			return call.D, nil
		}
	}
}

// endBackoff lets the reflector's held After return: the backoff is over.
func (w *window) endBackoff() { w.backoff.Release() }

// heldAfter reports whether e is an After the step holds, and which.
func heldAfter(e tap.Event) (tap.ClockCall, bool) {
	held, ok := e.(tap.Held)
	if !ok {
		return tap.ClockCall{}, false
	}
	call, ok := held.Event.(tap.ClockCall)
	return call, ok && call.Method == "After"
}

// awaitResyncTimer returns once the reflector has armed a resync timer:
// the only timer a reflector makes with NewTimer (reflector.go
// resyncChan), which it arms again after each relist.
func (w *window) awaitResyncTimer(ctx context.Context) error {
	for {
		e, err := w.clock.Rec.Next(ctx)
		if err != nil {
			return fmt.Errorf("waiting for the resync timer: %w", err)
		}
		if call, ok := e.(tap.ClockCall); ok && call.Method == "NewTimer" {
			return nil
		}
	}
}
