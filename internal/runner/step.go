package runner

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"regexp"
	"sync"
	"time"

	"golang.org/x/term"
)

// heading matches the first line of a step: "Step 3. ..." or "Setup. ...".
var heading = regexp.MustCompile(`^(Step \d+[a-z]?\.|Setup\.)`)

// stepWriter implements --step: it passes a chapter's output through
// unchanged, but before each step heading, the first one too, it waits
// for Enter, so an instructor can introduce a step before its output
// appears and explain its output before the next. It works line by line.
type stepWriter struct {
	mu     sync.Mutex
	out    io.Writer
	prompt io.Writer     // where "press Enter" goes (stderr)
	in     *bufio.Reader // the keyboard
	byLine
	steps int  // headings seen
	eof   bool // stdin ended: stop pausing

	done <-chan struct{} // closed at Ctrl-C: stop waiting for Enter
}

func (w *stepWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.write(p, w.writeLine)
}

// byLine is what the writers that act at a line's start (--step's and
// --source's, at a step heading) share: it cuts what a chapter writes
// into whole lines. Its users hold their own lock.
type byLine struct {
	partial []byte // the start of a line not yet written
}

// write calls line for each whole line of p, keeping the start of a
// line not yet ended for the next write.
func (b *byLine) write(p []byte, line func([]byte) error) (int, error) {
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			b.partial = append(b.partial, p...)
			break
		}
		l := append(b.partial, p[:i+1]...)
		b.partial = nil
		p = p[i+1:]
		if err := line(l); err != nil {
			return n - len(p), err
		}
	}
	return n, nil
}

// rest returns a last line that had no newline, and forgets it.
func (b *byLine) rest() []byte {
	r := b.partial
	b.partial = nil
	return r
}

// writeLine writes one line, first waiting for Enter if it begins a step.
func (w *stepWriter) writeLine(line []byte) error {
	if heading.Match(line) {
		w.steps++
		if !w.eof {
			next := "the next step"
			if w.steps == 1 {
				next = "the first step"
			}
			fmt.Fprintf(w.prompt, "  [--step] press Enter for %s ", next)
			if !w.enter() {
				w.eof = true
			}
		}
	}
	_, err := w.out.Write(line)
	return err
}

// enter waits for Enter. It reports false if stdin ended, or if Ctrl-C
// came first: then the chapter goes on to notice its context is done. A
// read cannot be cancelled, so it runs in a goroutine of its own, which
// ends with the process.
func (w *stepWriter) enter() bool {
	read := make(chan error, 1)
	go func() {
		_, err := w.in.ReadString('\n')
		read <- err
	}()
	select {
	case err := <-read:
		return err == nil
	case <-w.done:
		fmt.Fprintln(w.prompt) // end the prompt's line
		return false
	}
}

// flush writes a last line that had no newline.
func (w *stepWriter) flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if rest := w.rest(); len(rest) > 0 {
		_ = w.writeLine(rest)
	}
}

// stepOutput returns the writer a chapter should print to: stdout itself,
// or, with --step and a terminal on stdin, a stepWriter. Without a
// terminal (tests, pipes) --step changes nothing.
func stepOutput(ctx context.Context, step bool, stdout, stderr io.Writer) (context.Context, io.Writer, func()) {
	if !step || !term.IsTerminal(int(os.Stdin.Fd())) {
		return ctx, stdout, func() {}
	}
	w := &stepWriter{out: stdout, prompt: stderr, in: bufio.NewReader(os.Stdin), done: ctx.Done()}
	return context.WithValue(ctx, stepModeKey{}, true), w, w.flush
}

type stepModeKey struct{}

// WithTimeout is context.WithTimeout for a chapter's guard against a
// wait that never ends. In --step mode the guard is off: a person is
// pausing the chapter on purpose, and Ctrl-C still stops it.
func WithTimeout(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if stepMode(ctx) {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, d)
}

// stepMode reports whether a person is pausing the chapter (--step).
func stepMode(ctx context.Context) bool {
	on, _ := ctx.Value(stepModeKey{}).(bool)
	return on
}
