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
//	Next(ctx, out, heading, indent, lines, n)    a heading, then n lines awaited, in order
//	Sorted(ctx, out, heading, indent, lines, n)  the same, sorted (no order promised)
//	Print(out, indent, lines)                    lines already at hand
//	Under(out, heading, lines)                   a heading, then lines indented under it
//	Requests(reqs, keep)                         the request log as lines, METHOD path?query
//	Event(ev), Pod(pod), Frame(frame)            a watch event, a pod, a wire frame, one line
package show

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/informer-walkthrough/informer-walkthrough/internal/apiserver"
)

// Lines carries what handlers and taps report to the step that awaits it.
type Lines struct {
	done <-chan struct{}
	ch   chan string
}

// NewLines returns a Lines that stops accepting lines when ctx ends, so a
// handler that reports never keeps an informer from shutting down.
func NewLines(ctx context.Context) *Lines {
	return &Lines{done: ctx.Done(), ch: make(chan string, 1000)}
}

// Send reports one line. It blocks while the buffer is full and gives up
// once the context has ended.
func (l *Lines) Send(line string) {
	select {
	case <-l.done:
		return // stopping: what a stopping informer says is not the lesson
	default:
	}
	select {
	case l.ch <- line:
	case <-l.done:
	}
}

// Sendf is Send with fmt.Sprintf.
func (l *Lines) Sendf(format string, a ...any) { l.Send(fmt.Sprintf(format, a...)) }

// Await returns the next n lines, in the order they were sent, or an
// error that says what it was still waiting for when ctx ended.
func (l *Lines) Await(ctx context.Context, n int) ([]string, error) {
	got := make([]string, 0, n)
	for len(got) < n {
		select {
		case line := <-l.ch:
			got = append(got, line)
		case <-ctx.Done():
			return got, fmt.Errorf("waiting for line %d of %d (got %q): %w",
				len(got)+1, n, got, context.Cause(ctx))
		}
	}
	return got, nil
}

// AwaitSorted is Await, sorted: for lines whose order client-go does not
// promise (the objects of an initial list, or two handlers' calls).
func (l *Lines) AwaitSorted(ctx context.Context, n int) ([]string, error) {
	got, err := l.Await(ctx, n)
	slices.Sort(got)
	return got, err
}

// Drain returns the lines sent and not yet awaited, without waiting.
func (l *Lines) Drain() []string {
	var got []string
	for {
		select {
		case line := <-l.ch:
			got = append(got, line)
		default:
			return got
		}
	}
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

// Next prints heading as it is, if it is not "", then awaits the next n
// lines and prints them after indent, in the order they came. If ctx
// ends first, it prints the lines that came and returns the error that
// says what it was still waiting for (the runner reports why ctx ended,
// so a step that goes on regardless may leave it).
func Next(ctx context.Context, out io.Writer, heading, indent string, lines *Lines, n int) error {
	if heading != "" {
		fmt.Fprintln(out, heading)
	}
	got, err := lines.Await(ctx, n)
	Print(out, indent, got)
	return err
}

// Sorted is Next for lines whose order client-go does not promise (the
// objects of an initial list, a resync, two handlers' calls): it prints
// them sorted.
func Sorted(ctx context.Context, out io.Writer, heading, indent string, lines *Lines, n int) error {
	if heading != "" {
		fmt.Fprintln(out, heading)
	}
	got, err := lines.AwaitSorted(ctx, n)
	Print(out, indent, got)
	return err
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

// ListsAndWatches keeps the requests an informer makes: list and watch.
func ListsAndWatches(r apiserver.Request) bool {
	return r.Verb == "list" || r.Verb == "watch"
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

// Pod is one line for a pod: its name, phase and resourceVersion, and
// whether its deletion has begun.
func Pod(p *corev1.Pod) string {
	s := fmt.Sprintf("pod/%s  %-7s  rv=%s", p.Name, p.Status.Phase, p.ResourceVersion)
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
