// Package trace records what moves through client-go's pipeline while a
// chapter runs, for the page that shows it (--view, live) and the file
// that replays it (--trace FILE.html).
//
// It records by observing, never by changing client-go: the taps the
// course already has call Record — the chapters' transport (every
// request, and every watch event or bookmark as it arrives; see
// internal/cluster), the runner (the chapter's output, whose step headings
// become the timeline's chapters), and each chapter's observation file
// (its ListerWatcher, FIFO, store, handler and workqueue wrappers). When
// no recorder is installed, Record does nothing but one atomic load.
//
// Every event carries a logical clock (Seq): the order in which the taps
// saw things, one counter for the events, the output lines and the step
// headings. What a step records is deterministic on the workshop cluster;
// the order between lanes within a step is not always (an informer's
// goroutines run beside the chapter's), so the stream's golden text
// (Format) lists each step's events lane by lane, and the page replays
// them in the order they were seen.
package trace

import (
	"bytes"
	"encoding/json"
	"errors"
	"hash/maphash"
	"regexp"
	"sync"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/tools/cache"
)

// ClientGo is the client-go version the source links point into.
const ClientGo = "v0.37.2"

// Lane is one stage of the pipeline, in order from the server to the
// workers.
type Lane int

// The lanes, top to bottom.
const (
	APIServer Lane = iota // what the server answered
	Wire                  // requests as they leave; watch events as they arrive
	Reflector             // list, watch, relist, resync, as the reflector does them
	FIFO                  // deltas queued, pops
	Store                 // the indexer: Add, Update, Delete, Replace
	Handlers              // OnAdd, OnUpdate, OnDelete
	Workqueue             // add, get, done, requeue with delay
	Workers               // a worker's sync of a key
)

// Lanes are the lanes' names, in Lane order.
var Lanes = []string{"API server", "wire", "reflector", "FIFO", "store", "handlers", "workqueue", "workers"}

func (l Lane) String() string {
	if l < 0 || int(l) >= len(Lanes) {
		return "lane?"
	}
	return Lanes[l]
}

// Event is one thing that moved through the pipeline.
type Event struct {
	Seq  int    `json:"seq"`
	Step int    `json:"step"` // index into Trace.Steps; -1 before the first heading
	Lane Lane   `json:"lane"`
	Verb string `json:"verb"` // "GET", "ADDED", "Pop", "OnAdd", "Add", …
	Text string `json:"text"` // the rest of the line
	Key  string `json:"key"`  // the object's key (namespace/name), if any
	RV   string `json:"rv"`   // the object's resourceVersion, if any
	// Keys is what a store holds after a Replace, RVs their
	// resourceVersions.
	Keys []string `json:"keys,omitempty"`
	RVs  []string `json:"rvs,omitempty"`
	Obj  int      `json:"obj"` // index into Trace.Objects, -1 if none
	// Timed is set on an event that a timer repeats (a resync, a retry
	// after a backoff): how many there are depends on how long the step
	// lasted, so Format counts them as "on a timer", not one by one.
	Timed bool `json:"timed,omitempty"`
	// Maybe is set on a timed event that happens on some runs only, by a
	// race client-go documents (see MarkMaybe): Format leaves it out.
	Maybe bool `json:"maybe,omitempty"`
	// Func is the client-go function that did it, Src its line at
	// ClientGo (see Source).
	Func string `json:"func"`
	Src  string `json:"src"`
}

// Step is a step heading: where a chapter of the timeline begins.
type Step struct {
	Seq   int    `json:"seq"`
	Title string `json:"title"`
}

// Line is a line of the chapter's output.
type Line struct {
	Seq  int    `json:"seq"`
	Text string `json:"text"`
}

// Trace is a whole run, as the page reads it.
type Trace struct {
	Chapter  string            `json:"chapter"`
	ClientGo string            `json:"clientGo"`
	Lanes    []string          `json:"lanes"`
	Steps    []Step            `json:"steps"`
	Output   []Line            `json:"output"`
	Objects  []json.RawMessage `json:"objects"`
	Events   []Event           `json:"events"`
	// Sources is what each step ran of the instrumented packages
	// (--source), Texts those files' text by SourceKey.
	Sources []SourceStep      `json:"sources,omitempty"`
	Texts   map[string]string `json:"texts,omitempty"`
	Done    bool              `json:"done"`
}

// Message is one item of the live stream, in seq order (see Recorder.Follow).
type Message struct {
	Type    string          `json:"type"` // meta, step, output, object, event, source, text, end
	Chapter string          `json:"chapter,omitempty"`
	Client  string          `json:"clientGo,omitempty"`
	Lanes   []string        `json:"lanes,omitempty"`
	Step    *Step           `json:"step,omitempty"`
	Line    *Line           `json:"line,omitempty"`
	Index   int             `json:"index"`
	Object  json.RawMessage `json:"object,omitempty"`
	Event   *Event          `json:"event,omitempty"`
	Source  *SourceStep     `json:"source,omitempty"`
	Name    string          `json:"name,omitempty"` // a text's SourceKey
	Text    string          `json:"text,omitempty"`
}

// Recorder collects one run's trace. Its methods are safe for concurrent
// use; a nil *Recorder records nothing.
type Recorder struct {
	mu      sync.Mutex
	t       Trace
	seq     int
	objects map[uint64][]int // an object's JSON's hash → its indices in t.Objects
	seed    maphash.Seed
	msgs    []Message     // the live stream so far
	changed chan struct{} // closed and replaced at each new message
	timed   []func(Event) bool
	maybe   []func(Event) bool
	live    bool // keep the live stream's messages (--view)
}

// MarkTimed marks, from now on, every event that match accepts as Timed
// (see Event.Timed): for a tap that cannot tell, such as the wire, what
// a timer in the chapter repeats (a leader elector's renewals).
func MarkTimed(match func(Event) bool) {
	if r := current.Load(); r != nil {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.timed = append(r.timed, match)
	}
}

// MarkMaybe marks, from now on, every event that match accepts as
// Timed and Maybe: an event that a race client-go documents makes happen
// on some runs and not others (a leader elector's release that conflicts
// with the renewal it cancelled). The page shows it; the stream's golden
// text cannot, since whether it is there at all depends on the run.
func MarkMaybe(match func(Event) bool) {
	if r := current.Load(); r != nil {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.maybe = append(r.maybe, match)
	}
}

// New returns a recorder for chapter's run.
func New(chapter string) *Recorder {
	r := &Recorder{
		t: Trace{Chapter: chapter, ClientGo: ClientGo, Lanes: Lanes,
			Steps: []Step{}, Output: []Line{}, Objects: []json.RawMessage{}, Events: []Event{}},
		objects: map[uint64][]int{},
		seed:    maphash.MakeSeed(),
		changed: make(chan struct{}),
	}
	r.msgs = []Message{{Type: "meta", Chapter: chapter, Client: ClientGo, Lanes: Lanes}}
	return r
}

var current atomic.Pointer[Recorder]

// ErrInstalled is Install's error when a recorder is installed already.
var ErrInstalled = errors.New("trace: a recorder is installed already")

// Install makes r the recorder that Record and the taps write to, until
// uninstall. One at a time: a process runs one chapter.
func Install(r *Recorder) (uninstall func(), err error) {
	if !current.CompareAndSwap(nil, r) {
		return nil, ErrInstalled
	}
	return func() { current.CompareAndSwap(r, nil) }, nil
}

// On reports whether a recorder is installed: a tap can skip work that
// only the trace needs.
func On() bool { return current.Load() != nil }

// Record adds e to the installed recorder's trace, if any. obj, if not
// nil, is the object e carried, recorded as JSON as it is now. Seq and
// Step are set here; Func, if set, must be a name in Sources, and gives
// Src.
func Record(e Event, obj any) {
	r := current.Load()
	if r == nil {
		return
	}
	r.Record(e, obj)
}

// Record is the package's Record for this recorder.
func (r *Recorder) Record(e Event, obj any) {
	if r == nil {
		return
	}
	raw := objectJSON(obj)
	if e.Func != "" && e.Src == "" {
		e.Src = Source(e.Func)
	}
	if raw != nil && (e.Key == "" || e.RV == "") {
		if m, err := meta.Accessor(unwrap(obj)); err == nil {
			if e.Key == "" {
				e.Key = m.GetName()
				if ns := m.GetNamespace(); ns != "" {
					e.Key = ns + "/" + e.Key
				}
			}
			if e.RV == "" {
				e.RV = m.GetResourceVersion()
			}
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, match := range r.timed {
		if match(e) {
			e.Timed = true
		}
	}
	for _, match := range r.maybe {
		if match(e) {
			e.Timed, e.Maybe = true, true
		}
	}
	e.Obj = -1
	if raw != nil {
		e.Obj = r.objectLocked(raw)
	}
	r.seq++
	e.Seq = r.seq
	e.Step = len(r.t.Steps) - 1
	r.t.Events = append(r.t.Events, e)
	r.sendLocked(Message{Type: "event", Event: &e})
}

// objectLocked returns raw's index in the trace's objects, adding it if
// it is new: an object that moves through five lanes is kept once.
func (r *Recorder) objectLocked(raw json.RawMessage) int {
	h := maphash.Bytes(r.seed, raw)
	for _, i := range r.objects[h] {
		if bytes.Equal(r.t.Objects[i], raw) {
			return i
		}
	}
	i := len(r.t.Objects)
	r.objects[h] = append(r.objects[h], i)
	r.t.Objects = append(r.t.Objects, raw)
	r.sendLocked(Message{Type: "object", Index: i, Object: raw})
	return i
}

// heading is a step's first line, as the runner's --step knows it.
var heading = regexp.MustCompile(`^(Step \d+[a-z]?\.|Setup\.)`)

// Output records a line of the chapter's output (without its newline); a
// step heading also begins a step.
func (r *Recorder) Output(text string) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seq++
	if heading.MatchString(text) {
		s := Step{Seq: r.seq, Title: text}
		r.t.Steps = append(r.t.Steps, s)
		r.sendLocked(Message{Type: "step", Step: &s})
	}
	l := Line{Seq: r.seq, Text: text}
	r.t.Output = append(r.t.Output, l)
	r.sendLocked(Message{Type: "output", Line: &l})
}

// End marks the run as over: the live stream's last message.
func (r *Recorder) End() {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.t.Done {
		return
	}
	r.t.Done = true
	r.sendLocked(Message{Type: "end"})
}

// Trace returns a copy of what was recorded so far.
func (r *Recorder) Trace() Trace {
	r.mu.Lock()
	defer r.mu.Unlock()
	t := r.t
	t.Steps = append([]Step(nil), t.Steps...)
	t.Output = append([]Line(nil), t.Output...)
	t.Objects = append([]json.RawMessage(nil), t.Objects...)
	t.Events = append([]Event(nil), t.Events...)
	t.Sources = append([]SourceStep(nil), t.Sources...)
	if t.Texts != nil {
		texts := make(map[string]string, len(t.Texts))
		for k, v := range t.Texts {
			texts[k] = v
		}
		t.Texts = texts
	}
	return t
}

func (r *Recorder) sendLocked(m Message) {
	if !r.live {
		return // only a live page reads them
	}
	r.msgs = append(r.msgs, m)
	close(r.changed)
	r.changed = make(chan struct{})
}

// Messages returns the live stream's messages from index from on, and a
// channel closed when there are more.
func (r *Recorder) Messages(from int) ([]Message, <-chan struct{}) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if from > len(r.msgs) {
		from = len(r.msgs)
	}
	return append([]Message(nil), r.msgs[from:]...), r.changed
}

// objectJSON is obj as JSON, as the wire carried it or as client-go
// holds it (managedFields too: the page folds them away), or nil.
func objectJSON(obj any) json.RawMessage {
	obj = unwrap(obj)
	if obj == nil {
		return nil
	}
	if raw, ok := obj.(json.RawMessage); ok {
		return raw
	}
	raw, err := json.Marshal(obj)
	if err != nil {
		return nil
	}
	return raw
}

// unwrap returns what an informer's tombstone holds.
func unwrap(obj any) any {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		return t.Obj
	}
	return obj
}
