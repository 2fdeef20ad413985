package runner

import (
	"bytes"
	"io"
	"testing"
)

// fakeReporter stands for a source.Session: each report is one line.
type fakeReporter struct{ n int }

func (r *fakeReporter) Report(w io.Writer) error {
	r.n++
	_, err := io.WriteString(w, "  [report]\n")
	return err
}

// TestSourceWriterBlanks: the blank line a chapter puts before a heading
// is held, so that the report, written at the heading, stays next to
// the lines of its step; other lines pass through as they were written.
func TestSourceWriterBlanks(t *testing.T) {
	var out bytes.Buffer
	r := &fakeReporter{}
	w := &sourceWriter{out: &out, s: r}
	for _, s := range []string{"Step 1. a\n", "  line\n", "\n", "  after a blank\n", "\nStep 2", ". b\n", "  x\n\n"} {
		if _, err := w.Write([]byte(s)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.finish(); err != nil {
		t.Fatal(err)
	}
	want := "  [report]\nStep 1. a\n  line\n\n  after a blank\n  [report]\n\nStep 2. b\n  x\n  [report]\n\n"
	if out.String() != want || r.n != 3 {
		t.Errorf("got %q (%d reports), want %q", out.String(), r.n, want)
	}
}
