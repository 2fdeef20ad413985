package progress

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
)

// TestNotATerminal: a run whose stdout or stderr is not a terminal (a
// test, a pipe, a file) shows nothing, and a nil Line is safe to use.
func TestNotATerminal(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "stderr")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var buf bytes.Buffer
	for _, ctx := range []context.Context{
		ToTerminal(t.Context(), f, f),    // files
		ToTerminal(t.Context(), &buf, f), // a buffer
		ToTerminal(t.Context(), f, &buf), // a buffer for stderr
		t.Context(),                      // nothing said
	} {
		l := Start(ctx, "creating pods", 3)
		if l != nil {
			t.Fatalf("Start gave a line where nothing is a terminal")
		}
		l.Set(1)
		l.Done()
	}
	if info, _ := f.Stat(); info.Size() != 0 || buf.Len() != 0 {
		t.Errorf("wrote %d bytes to the file and %q to the buffer; want nothing", info.Size(), buf.String())
	}
}

// TestLine: at a terminal (With, as ToTerminal gives it), the line is
// written at once, rewritten in place with \r, always at the total, and
// cleared at the end, its width in spaces.
func TestLine(t *testing.T) {
	var buf bytes.Buffer
	l := Start(With(t.Context(), &buf), "creating pods", 20000)
	l.Set(1)     // within `every` of the first write: skipped
	l.Set(20000) // the total: always written
	l.Done()
	want := "\rcreating pods: 0 of 20000" +
		"\rcreating pods: 20000 of 20000" +
		"\r" + strings.Repeat(" ", len("creating pods: 20000 of 20000")) + "\r"
	if got := buf.String(); got != want {
		t.Errorf("wrote %q, want %q", got, want)
	}
}

// TestShorterLine: a line shorter than the last one written pads over
// the rest of it; with no total, only the count.
func TestShorterLine(t *testing.T) {
	var buf bytes.Buffer
	l := Start(With(t.Context(), &buf), "waiting", 0)
	l.mu.Lock()
	l.what = "w"
	l.writeLocked(7)
	l.mu.Unlock()
	if got, want := buf.String(), "\rwaiting: 0"+"\rw: 7"+strings.Repeat(" ", len("waiting: 0")-len("w: 7")); got != want {
		t.Errorf("wrote %q, want %q", got, want)
	}
}
