package runner

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/informer-walkthrough/informer-walkthrough/internal/source"
)

// Sourced starts what --source asks for, just before the chapter runs
// (what ran before, connecting to the cluster, is not the lesson). wrap
// wraps the writer the chapter prints to, so that before each step
// heading, and when finish is called, the functions the step that just
// ended ran are written (internal/source). finish, called once the
// chapter has returned, reports the last step and returns code (1, with
// one line on stderr, if reading the counters failed). Without --source
// it changes nothing. It is called before Output, so that what Start
// asks of the go command is not counted against the chapter's Patience.
func (f Flags) Sourced(chapter string, stderr io.Writer) (wrap func(io.Writer) io.Writer, finish func(code int) int, err error) {
	if !f.Source {
		return func(w io.Writer) io.Writer { return w }, func(code int) int { return code }, nil
	}
	dir, err := os.MkdirTemp("", "informer-walkthrough-counters")
	if err != nil {
		return nil, nil, err
	}
	s, err := source.Start(dir, chapter)
	if err != nil {
		os.RemoveAll(dir)
		return nil, nil, err
	}
	var w *sourceWriter
	wrap = func(out io.Writer) io.Writer {
		w = &sourceWriter{out: out, s: s}
		return w
	}
	finish = func(code int) int {
		defer os.RemoveAll(dir)
		if w == nil {
			return code
		}
		if err := w.finish(); err != nil {
			fmt.Fprintf(stderr, "%s: --source: %v\n", chapter, err)
			if code == 0 {
				code = 1
			}
		}
		return code
	}
	return wrap, finish, nil
}

// sourceWriter passes a chapter's output through line by line, and
// before a step heading writes what the step that ended ran. It sits
// before the --step writer and the trace's, so that a step's report is
// the last of its lines in both, and the trace still counts the ended
// step when the report reaches it. Blank lines are held until the next
// line: a chapter separates its steps with one, and the report goes
// before it, next to the lines of its step.
type sourceWriter struct {
	mu  sync.Mutex
	out io.Writer
	s   interface{ Report(io.Writer) error } // a *source.Session
	byLine
	blanks []byte // blank lines held
	err    error  // the first report that failed: no more are tried
}

func (w *sourceWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.write(p, w.writeLine)
}

// writeLine writes one line, after the report if it is a step heading.
func (w *sourceWriter) writeLine(line []byte) error {
	if len(bytes.TrimRight(line, "\r\n")) == 0 {
		w.blanks = append(w.blanks, line...)
		return nil
	}
	if heading.Match(line) {
		w.report()
	}
	if err := w.writeBlanks(); err != nil {
		return err
	}
	_, err := w.out.Write(line)
	return err
}

func (w *sourceWriter) writeBlanks() error {
	if len(w.blanks) == 0 {
		return nil
	}
	_, err := w.out.Write(w.blanks)
	w.blanks = nil
	return err
}

// report writes what the step that is ending ran.
func (w *sourceWriter) report() {
	if w.err == nil {
		w.err = w.s.Report(w.out)
	}
}

// finish writes a last line that had no newline, then the last step's
// report, then the blank lines held.
func (w *sourceWriter) finish() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if rest := w.rest(); len(rest) > 0 {
		if heading.Match(rest) {
			w.report()
		}
		_ = w.writeBlanks()
		_, _ = w.out.Write(rest)
	}
	w.report()
	_ = w.writeBlanks()
	return w.err
}
