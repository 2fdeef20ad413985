// Package tap is how the course watches client-go work without changing
// it: each tap wraps one of client-go's own interfaces, passes every call
// through unchanged, and records the call once, as a typed event, into a
// Recorder.
//
//	Handler   a cache.ResourceEventHandler: OnAdd, OnUpdate, OnDelete
//	TypedHandler[T]  a cache.TypedResourceEventHandler[T], the same
//	Queue[T]  a workqueue.TypedRateLimitingInterface[T]: Add, Get, Done, …
//	ListerWatcher  a cache.ListerWatcher: List, Watch
//	Transform a cache.TransformFunc: each object an informer queues
//	Watch     a watch.Interface: the events a stream carries, its end
//	          (a ListerWatcher with Streams set wraps each stream in one)
//	Transport an http.RoundTripper under a rest.Config: the requests one
//	          client sends, and what the server answered
//	LeaderCallbacks  a leader elector's leaderelection.LeaderCallbacks
//	Clock     a k8s.io/utils clock on fake time (a reflector's): the
//	          timers the code sets (NewTimer, After) and their firing
//	crtap.Reconciler  (package crtap) a controller-runtime reconciler
//
// Open one and you read client-go's interface, method by method, each
// with one line that records it. The fourth way in, the chapters'
// transport (internal/cluster), records the wire for the trace already.
//
// A chapter prints lines rendered from the events (its observe.go says
// how), and the trace's lanes (package trace) are rendered from the same
// events by Record: a step's observation is written once. Steps await
// events (Recorder.Await, Recorder.Next), never a log message or a
// printed line.
//
// A step can also hold a call at its tap, like a breakpoint, to make
// something happen meanwhile (Recorder.Hold): a handler after it
// returned, a request before it leaves, an object on its way into the
// cache (a transform's call). Everything held goes on when the
// recorder's context ends, so a step that fails leaves nothing held.
package tap

import (
	"context"
	"strings"
	"sync"

	"github.com/informer-walkthrough/informer-walkthrough/internal/show"
	"github.com/informer-walkthrough/informer-walkthrough/internal/trace"
)

// Event is one call a tap saw: a HandlerCall, a QueueCall, a
// ListWatchCall, a WatchEvent, a WatchEnded, a Transformed, a Request, a
// ClockCall or TimerFired, a crtap.ReconcileCall or Reconciled, or Held
// (a call a step holds).
type Event interface {
	// Trace is the event as the trace's lanes show it, and the object
	// it carried (nil if none).
	Trace() (trace.Event, any)
}

// Recorder receives the taps' events, in the order the taps recorded
// them, for the step that awaits them; and records each on the trace.
type Recorder struct {
	feed   *show.Feed[Event]
	done   <-chan struct{}
	follow func(Event) // set by Follow
	name   string      // a Named recorder's: its events come as From
	self   *Recorder   // a Named recorder, for From

	mu    sync.Mutex
	holds []*Gate
}

// NewRecorder returns a recorder whose taps stop reporting, and whose
// holds let go, when ctx ends.
func NewRecorder(ctx context.Context) *Recorder {
	return &Recorder{feed: show.NewFeed[Event](ctx), done: ctx.Done()}
}

// Await returns the next n events, in the order they were recorded.
func (r *Recorder) Await(ctx context.Context, n int) ([]Event, error) {
	return r.feed.Await(ctx, n)
}

// Next returns the next event.
func (r *Recorder) Next(ctx context.Context) (Event, error) { return r.feed.Next(ctx) }

// Drain returns the events recorded and not yet awaited, without waiting.
func (r *Recorder) Drain() []Event { return r.feed.Drain() }

// Calls is the handler calls the recorder gets, each as
// HandlerCall.String shows it, for show.Next and show.Sorted; what else
// it gets (a Held) is skipped.
func (r *Recorder) Calls() show.Source { return calls{r} }

type calls struct{ r *Recorder }

func (c calls) Await(ctx context.Context, n int) ([]string, error) {
	var got []string
	for len(got) < n {
		e, err := c.r.Next(ctx)
		if err != nil {
			return got, err
		}
		if call, ok := e.(HandlerCall); ok {
			got = append(got, call.String())
		}
	}
	return got, nil
}

// CallLines is Calls for a chapter that prints calls its own way: each
// handler call the recorder gets, as line renders it; a call line
// renders as "" is skipped, as is what else the recorder gets.
func (r *Recorder) CallLines(line func(HandlerCall) string) show.Source {
	return callLines{r, line}
}

type callLines struct {
	r    *Recorder
	line func(HandlerCall) string
}

func (c callLines) Await(ctx context.Context, n int) ([]string, error) {
	var got []string
	for len(got) < n {
		e, err := c.r.Next(ctx)
		if err != nil {
			return got, err
		}
		if call, ok := e.(HandlerCall); ok {
			if s := c.line(call); s != "" {
				got = append(got, s)
			}
		}
	}
	return got, nil
}

// HandlerCalls keeps the handler calls among events.
func HandlerCalls(events []Event) []HandlerCall {
	var got []HandlerCall
	for _, e := range events {
		if call, ok := e.(HandlerCall); ok {
			got = append(got, call)
		}
	}
	return got
}

// Record records an event a step makes itself, for what no tap sees:
// a call that could not be made (02's bookmark, which a DeltaFIFO has
// no method to take). It goes where the taps' events go.
func (r *Recorder) Record(e Event) { r.emit(e) }

// Tap records e as a tap in another package saw it: package crtap's,
// for controller-runtime, which this package does not import (so that
// the chapters that do not use it do not build it). As the taps here
// do, once per call; and the call waits here if a step holds calls
// like it (Hold).
func (r *Recorder) Tap(e Event) { r.record(e) }

// record is what every tap calls once per call: the trace gets the
// event, the feed gets it, and if a step holds calls like it, the tap's
// goroutine waits here until the step releases it (holdAt).
func (r *Recorder) record(e Event) {
	r.emit(e)
	r.holdAt(e)
}

// emit records e on the trace and sends it to the step (or hands it to
// the step's follower).
func (r *Recorder) emit(e Event) {
	if r.name != "" {
		e = From{Name: r.name, Rec: r.self, Event: e}
	}
	if trace.On() {
		te, obj := e.Trace()
		trace.Record(te, obj)
	}
	if r.follow != nil {
		r.follow(e)
		return
	}
	r.feed.Send(e)
}

// Follow hands each event the recorder gets from now on to f, as it
// gets it: on the goroutine of the call the tap saw, before that call
// returns; such events are not kept for Await, Next or Drain. It is
// for a chapter whose calls all run on its own goroutine (02's queues,
// in memory, with no informer), to print each call where it is made.
// Call it before the taps record; f must not block.
func (r *Recorder) Follow(f func(Event)) { r.follow = f }

// holdAt makes the tap's goroutine wait, after a Held event, if a gate
// holds e, and reports whether one did; it returns at once otherwise.
func (r *Recorder) holdAt(e Event) (held bool) {
	g := r.holding(e)
	if g == nil {
		return false
	}
	r.emit(Held{Event: e})
	if g.wait(r.done) && g.reportRelease {
		r.emit(Released{Event: e})
	}
	return true
}

// holding returns the gate that holds e, if any, and counts the hold.
func (r *Recorder) holding(e Event) *Gate {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, g := range r.holds {
		if g.left > 0 && g.match(e) {
			g.left--
			return g
		}
	}
	return nil
}

// A Gate is a hold a step set (Recorder.Hold): the calls it holds wait at
// their tap until the step releases them, one by one or all at once.
type Gate struct {
	match  func(Event) bool
	left   int           // holds still to come (under the recorder's mu)
	tokens chan struct{} // one per Release
	open   chan struct{} // closed by Open
	once   sync.Once
	// reportRelease: a held call records Released as it goes on
	// (Recorder.HoldReporting).
	reportRelease bool
}

// Hold holds the next n calls that match accepts, each at its tap right
// after the tap recorded it (a handler's call once it has returned, a
// request before it is sent): the tap then records Held, and waits.
func (r *Recorder) Hold(n int, match func(Event) bool) *Gate {
	return r.hold(&Gate{match: match, left: n, tokens: make(chan struct{}, n), open: make(chan struct{})})
}

// hold starts g holding: it is complete before a tap can see it.
func (r *Recorder) hold(g *Gate) *Gate {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.holds = append(r.holds, g)
	return g
}

// Release lets one held call go on (or the next one, once held).
func (g *Gate) Release() {
	select {
	case g.tokens <- struct{}{}:
	default: // every hold already released
	}
}

// Open lets every call go on, held now or to come; a deferred Open
// makes sure a step that fails leaves nothing held.
func (g *Gate) Open() { g.once.Do(func() { close(g.open) }) }

// wait reports whether the step let the call go (false: the recorder's
// context ended).
func (g *Gate) wait(done <-chan struct{}) bool {
	select {
	case <-g.tokens:
	case <-g.open:
	case <-done:
		return false
	}
	return true
}

// Held is a call a Gate holds: recorded when its tap begins to wait.
type Held struct{ Event }

// Trace is the held call on its own lane, marked held. A handler's call
// is named by its handler and method, not its object: which object comes
// first is often not defined (an initial list), that a call is held is.
func (h Held) Trace() (trace.Event, any) {
	e, _ := h.Event.Trace()
	text := e.Verb + " " + e.Text
	if call, ok := h.Event.(HandlerCall); ok {
		text = strings.TrimSpace(call.Method + " " + call.Handler)
	}
	return trace.Event{Lane: e.Lane, Verb: "held", Text: text + " (by the step)", Key: e.Key}, nil
}
