// Package progress says how far a long wait that is not the lesson has
// come (creating 20 000 pods before a chapter's first step, a benchmark's
// setup): one line on stderr, rewritten in place with \r, and cleared
// when the wait ends. It shows only to a person watching: when a run's
// stdout and stderr are both terminals (ToTerminal). Anywhere else (the
// golden tests, a pipe, a file) it writes nothing, so what a chapter
// prints is the same with it or without it.
//
// The line lives in a context, as the run's other settings do: main
// puts it there, the code that waits finds it, and a test that calls a
// chapter's run with its own context never sees it.
package progress

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/term"
)

type writerKey struct{}

// ToTerminal returns ctx with progress lines going to stderr, if stdout
// and stderr are both terminals; otherwise ctx as it is.
func ToTerminal(ctx context.Context, stdout, stderr io.Writer) context.Context {
	if !isTerminal(stdout) || !isTerminal(stderr) {
		return ctx
	}
	return With(ctx, stderr)
}

// With returns ctx with progress lines going to w, a terminal or not:
// for a caller that has decided already (and for tests).
func With(ctx context.Context, w io.Writer) context.Context {
	return context.WithValue(ctx, writerKey{}, w)
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// every is how often a Line is rewritten at most: often enough to see
// it move, seldom enough that writing it costs nothing next to the wait.
const every = 100 * time.Millisecond

// Line is one progress line. A nil *Line, what Start returns when ctx
// has nowhere to show it, does nothing.
type Line struct {
	mu    sync.Mutex
	w     io.Writer
	what  string
	total int
	last  time.Time // when it was last written
	width int       // the length of what it last wrote
}

// Start begins a line saying what is being done, "what: n of total",
// total > 0, or "what: n" if total is 0 (not known).
func Start(ctx context.Context, what string, total int) *Line {
	w, ok := ctx.Value(writerKey{}).(io.Writer)
	if !ok {
		return nil
	}
	l := &Line{w: w, what: what, total: total}
	l.write(0)
	return l
}

// Set says n are done. It rewrites the line when every has passed since
// it last did, and at the total.
func (l *Line) Set(n int) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if n != l.total && time.Since(l.last) < every {
		return
	}
	l.writeLocked(n)
}

// Done clears the line, so that what is printed next starts at the
// beginning of an empty one.
func (l *Line) Done() {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.width > 0 {
		fmt.Fprintf(l.w, "\r%s\r", strings.Repeat(" ", l.width))
		l.width = 0
	}
}

func (l *Line) write(n int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.writeLocked(n)
}

func (l *Line) writeLocked(n int) {
	text := fmt.Sprintf("%s: %d", l.what, n)
	if l.total > 0 {
		text = fmt.Sprintf("%s: %d of %d", l.what, n, l.total)
	}
	// Pad over a longer line written before, then return to its start.
	pad := max(l.width-len(text), 0)
	fmt.Fprintf(l.w, "\r%s%s", text, strings.Repeat(" ", pad))
	l.width = len(text)
	l.last = time.Now()
}
