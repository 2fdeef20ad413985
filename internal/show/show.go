// Package show is what the chapters use to *show* client-go at work, and
// nothing of what they teach: a channel of lines that handlers and taps
// report on and a step awaits, and one way to render what a chapter
// prints in more than one place: watch events, pods, wire frames and the
// request log.
//
// A chapter's handlers run on client-go's goroutines, so they do not
// print: they Send a line, and the step that made the change Awaits the
// lines it expects and prints them in order. That is how the output stays
// the same on every run without a single sleep.
//
// The vocabulary, as the chapters use it:
//
//	Feed[T], Lines                    what taps report, awaited in order
//	Next(ctx, out, Block)             a heading, then N lines awaited, in order
//	Sorted(ctx, out, Block)           the same, sorted (no order promised)
//	Print(out, indent, lines)         lines already at hand
//	Under(out, heading, lines)        a heading, then lines indented under it
//	Requests(reqs, keep)              the request log as lines, METHOD path?query
//	Brief(reqs, keep)                 the same in short, sorted: VERB resource
//	Event(ev), Pod(pod), Frame(frame) a watch event, a pod, a wire frame, one line
//	PodState(pod)                     a pod's phase and resourceVersion
//	Describe(obj)                     an object: configmap/web rv=2
//	List(objs), Deltas(deltas)        objects; a queue's entry
package show

import (
	"context"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"

	"github.com/informer-walkthrough/informer-walkthrough/internal/apiserver"
)

// Feed carries what taps and handlers report, in the order they
// reported it, to the step that awaits it: lines (Lines), or the typed
// events of the course's taps (package tap). Handlers run on client-go's
// goroutines; a Feed is how what they saw reaches the step that caused
// it, without a sleep.
type Feed[T any] struct {
	done <-chan struct{}
	ch   chan T
}

// NewFeed returns a Feed that stops accepting items when ctx ends, so a
// handler that reports never keeps an informer from shutting down.
func NewFeed[T any](ctx context.Context) *Feed[T] {
	return &Feed[T]{done: ctx.Done(), ch: make(chan T, 1000)}
}

// Send reports one item. It blocks while the buffer is full and gives
// up once the context has ended.
func (f *Feed[T]) Send(item T) {
	select {
	case <-f.done:
		return // stopping: what a stopping informer says is not the lesson
	default:
	}
	select {
	case f.ch <- item:
	case <-f.done:
	}
}

// Await returns the next n items, in the order they were sent, or an
// error that says what it was still waiting for when ctx ended.
func (f *Feed[T]) Await(ctx context.Context, n int) ([]T, error) {
	got := make([]T, 0, n)
	for len(got) < n {
		select {
		case item := <-f.ch:
			got = append(got, item)
		case <-ctx.Done():
			return got, fmt.Errorf("waiting for item %d of %d (got %v): %w",
				len(got)+1, n, got, context.Cause(ctx))
		}
	}
	return got, nil
}

// Next returns the next item, or an error when ctx ends first.
func (f *Feed[T]) Next(ctx context.Context) (T, error) {
	select {
	case item := <-f.ch:
		return item, nil
	case <-ctx.Done():
		var zero T
		return zero, fmt.Errorf("waiting for the next item: %w", context.Cause(ctx))
	}
}

// Drain returns the items sent and not yet awaited, without waiting.
func (f *Feed[T]) Drain() []T {
	var got []T
	for {
		select {
		case item := <-f.ch:
			got = append(got, item)
		default:
			return got
		}
	}
}

// Lines is a Feed of lines, as handlers and taps report them.
type Lines struct{ Feed[string] }

// NewLines returns Lines that stop accepting lines when ctx ends.
func NewLines(ctx context.Context) *Lines {
	return &Lines{*NewFeed[string](ctx)}
}

// Sendf is Send with fmt.Sprintf.
func (l *Lines) Sendf(format string, a ...any) { l.Send(fmt.Sprintf(format, a...)) }

// Await returns the next n lines, in the order they were sent, or an
// error that says what it was still waiting for when ctx ended.
func (l *Lines) Await(ctx context.Context, n int) ([]string, error) {
	got, err := l.Feed.Await(ctx, n)
	if err != nil {
		err = fmt.Errorf("waiting for line %d of %d (got %q): %w",
			len(got)+1, n, got, context.Cause(ctx))
	}
	return got, err
}

// AwaitSorted is Await, sorted: for lines whose order client-go does not
// promise (the objects of an initial list, or two handlers' calls).
func (l *Lines) AwaitSorted(ctx context.Context, n int) ([]string, error) {
	got, err := l.Await(ctx, n)
	slices.Sort(got)
	return got, err
}

// Print writes each line after prefix (usually an indent).
func Print(out io.Writer, prefix string, lines []string) {
	for _, line := range lines {
		fmt.Fprintf(out, "%s%s\n", prefix, line)
	}
}

// Under prints heading as it is (its indent included), then each line
// two spaces deeper than the heading: a block of lines under its title.
func Under(out io.Writer, heading string, lines []string) {
	fmt.Fprintln(out, heading)
	indent := heading[:len(heading)-len(strings.TrimLeft(heading, " "))]
	Print(out, indent+"  ", lines)
}

// Source is what Next and Sorted await lines from: Lines, or the
// events of a tap's recorder rendered as lines (tap.Recorder.Calls).
type Source interface {
	Await(ctx context.Context, n int) ([]string, error)
}

// A Block is what a step prints of what it awaits (Next, Sorted): a
// heading, then the next N lines From a source, each after Indent.
type Block struct {
	Heading string // printed first, as it is (its indent included), unless ""
	Indent  string // printed before each line
	From    Source // where the lines come from
	N       int    // how many lines to await
}

// Next prints b's heading, then awaits its N lines and prints them in
// the order they came. If ctx ends first, it prints the lines that came
// and returns the error that says what it was still waiting for; every
// caller returns it (the runner reports why ctx ended).
func Next(ctx context.Context, out io.Writer, b Block) error {
	got, err := b.await(ctx, out)
	Print(out, b.Indent, got)
	return err
}

// Sorted is Next for lines whose order client-go does not promise (the
// objects of an initial list, a resync, two handlers' calls): it prints
// them sorted.
func Sorted(ctx context.Context, out io.Writer, b Block) error {
	got, err := b.await(ctx, out)
	slices.Sort(got)
	Print(out, b.Indent, got)
	return err
}

// await prints the heading, then awaits the block's lines.
func (b Block) await(ctx context.Context, out io.Writer) ([]string, error) {
	if b.Heading != "" {
		fmt.Fprintln(out, b.Heading)
	}
	if b.From == nil {
		return nil, fmt.Errorf("show: %q awaits %d lines from no source", b.Heading, b.N)
	}
	return b.From.Await(ctx, b.N)
}

// Requests renders the request log (cluster.Requests) one line per
// request, as METHOD path?query, keeping only the requests keep accepts
// (all of them when keep is nil).
func Requests(reqs []apiserver.Request, keep func(apiserver.Request) bool) []string {
	var lines []string
	for _, r := range reqs {
		if keep == nil || keep(r) {
			lines = append(lines, r.String())
		}
	}
	return lines
}

// Brief is Requests in short, for a step that counts requests rather
// than reads them: VERB resource, the label selector if any, and
// "(watch-list)" for a watch that asked for the initial list too
// (sendInitialEvents=true: the objects, then the changes, on one
// stream). Without their paths and resourceVersions, what tells the
// requests of informers started together apart is gone, and so is any
// order between them: the lines come sorted.
func Brief(reqs []apiserver.Request, keep func(apiserver.Request) bool) []string {
	var lines []string
	for _, r := range reqs {
		if keep != nil && !keep(r) {
			continue
		}
		s := strings.ToUpper(r.Verb) + " " + r.Resource
		if sel := r.Query.Get("labelSelector"); sel != "" {
			s += " labelSelector=" + sel
		}
		if r.Query.Get("sendInitialEvents") == "true" {
			s += "  (watch-list)"
		}
		lines = append(lines, s)
	}
	slices.Sort(lines)
	return lines
}

// ListsAndWatches keeps the requests an informer makes: list and watch.
func ListsAndWatches(r apiserver.Request) bool {
	return r.Verb == "list" || r.Verb == "watch"
}

// ListsAndWatchesOf keeps the lists and watches of the resources named
// ("pods", "deployments.apps").
func ListsAndWatchesOf(resources ...string) func(apiserver.Request) bool {
	return func(r apiserver.Request) bool {
		return ListsAndWatches(r) && slices.Contains(resources, r.Resource)
	}
}

// Event is one line for a watch event: its type, then what it carries.
// A pod is shown as Pod shows it; a bookmark by its resourceVersion (all
// it is sure to carry); an ERROR event by its Status.
func Event(ev watch.Event) string {
	switch obj := ev.Object.(type) {
	case *corev1.Pod:
		if ev.Type == watch.Bookmark {
			return fmt.Sprintf("%-9s rv=%s", ev.Type, obj.ResourceVersion)
		}
		return fmt.Sprintf("%-9s %s", ev.Type, Pod(obj))
	case *metav1.Status:
		return fmt.Sprintf("%-9s %d %s: %s", ev.Type, obj.Code, obj.Reason, obj.Message)
	default:
		return fmt.Sprintf("%-9s %T", ev.Type, obj)
	}
}

// Describe names an object and its resourceVersion, as the chapters
// print a handler's or a store's object: "configmap/web rv=2", the kind
// taken from its Go type (objects from an informer carry no Kind). A
// tombstone says what it holds; nil is "nothing".
func Describe(obj any) string {
	switch o := obj.(type) {
	case nil:
		return "nothing"
	case cache.DeletedFinalStateUnknown:
		return fmt.Sprintf("DeletedFinalStateUnknown key=%s, last known %s", o.Key, Describe(o.Obj))
	}
	m, err := meta.Accessor(obj)
	if s, ok := obj.(fmt.Stringer); ok && err != nil && !fromKubernetes(obj) {
		return s.String() // an object of the course's own (02's Pod)
	}
	if err != nil {
		return fmt.Sprintf("a %T", obj)
	}
	kind := reflect.Indirect(reflect.ValueOf(obj)).Type().Name()
	return fmt.Sprintf("%s/%s rv=%s", strings.ToLower(kind), m.GetName(), m.GetResourceVersion())
}

// List describes objects in the order given: "pod-1 v1, pod-2 v1".
func List(objs []any) string {
	names := make([]string, len(objs))
	for i, o := range objs {
		names[i] = Describe(o)
	}
	return strings.Join(names, ", ")
}

// Deltas describes a queue's entry, its deltas oldest first:
// "[Added pod-1 v1] [Updated pod-1 v2]". A RealFIFO's whole-list entry
// shows what it holds: "[ReplacedAll rv=20 pod-1 v3, pod-2 v1]",
// "[SyncAll]", "[Bookmark rv=25]".
func Deltas(deltas cache.Deltas) string {
	parts := make([]string, len(deltas))
	for i, d := range deltas {
		var what string
		switch o := d.Object.(type) {
		case cache.ReplacedAllInfo:
			what = "rv=" + o.ResourceVersion + " " + List(o.Objects)
		case cache.BookmarkInfo:
			what = "rv=" + o.ResourceVersion
		case cache.SyncAllInfo:
		default:
			what = Describe(o)
		}
		parts[i] = "[" + strings.TrimSpace(fmt.Sprintf("%s %s", d.Type, what)) + "]"
	}
	return strings.Join(parts, " ")
}

// fromKubernetes reports whether obj's type is k8s.io's (whose
// generated String methods dump every field).
func fromKubernetes(obj any) bool {
	return strings.HasPrefix(reflect.Indirect(reflect.ValueOf(obj)).Type().PkgPath(), "k8s.io/")
}

// Pod is one line for a pod: its name, then its state (PodState).
func Pod(p *corev1.Pod) string {
	return "pod/" + p.Name + "  " + PodState(p)
}

// PodState is a pod's phase and resourceVersion, and whether its
// deletion has begun: Pod without the name, for a line that names the
// pod its own way (by its key, namespace/name).
func PodState(p *corev1.Pod) string {
	s := fmt.Sprintf("%-7s  rv=%s", p.Status.Phase, p.ResourceVersion)
	if p.DeletionTimestamp != nil {
		s += "  (deletionTimestamp set)"
	}
	return s
}

// Frame is one line for a frame of a JSON watch stream: the event up to
// its object's resourceVersion, the uid masked (it differs on every
// cluster), and in each JSON object the frame then leaves, "…" for the
// members dropped, so that the braces still balance. A frame without a
// uid (a bookmark) is short already: it stays whole.
func Frame(frame string) string {
	const uid, rv = `"uid":"`, `"resourceVersion":"`
	i := strings.Index(frame, uid)
	if i < 0 {
		return frame
	}
	j := i + len(uid) + strings.IndexByte(frame[i+len(uid):], '"') + 1
	frame = frame[:i] + `"uid":…` + frame[j:]
	end := strings.Index(frame, rv)
	if end < 0 {
		return frame
	}
	end += len(rv) + strings.IndexByte(frame[end+len(rv):], '"') + 1
	return frame[:end] + closing(frame[end:])
}

// closing is what Frame puts in place of rest, the end of a frame: for
// each object rest closes, ",…" if it drops members of it, then "}".
func closing(rest string) string {
	var b strings.Builder
	depth, dropped, inString := 0, false, false
	for i := 0; i < len(rest); i++ {
		c := rest[i]
		switch {
		case inString:
			if c == '\\' {
				i++
			} else if c == '"' {
				inString = false
			}
		case c == '"':
			inString, dropped = true, true
		case c == '{' || c == '[':
			depth, dropped = depth+1, true
		case (c == '}' || c == ']') && depth > 0:
			depth--
		case c == '}':
			if dropped {
				b.WriteString(",…")
			}
			b.WriteString("}")
			dropped = false
		case c != ' ' && c != '\n' && c != '\r' && c != '\t':
			dropped = true
		}
	}
	return b.String()
}
