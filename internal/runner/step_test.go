package runner

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"
)

// TestStepWriter: the output is unchanged, and the writer asks for Enter
// before every step heading, reading one line each time.
func TestStepWriter(t *testing.T) {
	var out, prompt bytes.Buffer
	in := bufio.NewReader(strings.NewReader("\n\n\n"))
	w := &stepWriter{out: &out, prompt: &prompt, in: in}
	text := "Setup. seed\n  a\n\nStep 1. one\n  b\nStep 2. two"
	for _, chunk := range []string{text[:7], text[7:20], text[20:]} { // lines split across writes
		fmt.Fprint(w, chunk)
	}
	w.flush()
	if out.String() != text {
		t.Errorf("output changed:\n%q\nwant\n%q", out.String(), text)
	}
	if got := strings.Count(prompt.String(), "press Enter"); got != 3 {
		t.Errorf("asked for Enter %d times, want 3 (before Setup, Step 1 and Step 2)", got)
	}
	if _, err := in.ReadByte(); err != io.EOF {
		t.Error("did not read one line per pause")
	}
}

// TestStepWriterPausesBeforeStep1: the first heading waits for Enter
// too, before any of the chapter's output is on the screen, as README.md
// and the flag's help say ("before each step").
func TestStepWriterPausesBeforeStep1(t *testing.T) {
	keys, keyboard := io.Pipe()
	prompted := make(chan string, 1)
	var out bytes.Buffer
	w := &stepWriter{out: &out, prompt: promptFunc(func(p string) { prompted <- p }), in: bufio.NewReader(keys)}
	wrote := make(chan error, 1)
	go func() {
		_, err := fmt.Fprint(w, "Step 1. one\n  a\n")
		wrote <- err
	}()
	select {
	case p := <-prompted:
		if p != "  [--step] press Enter for the first step " {
			t.Errorf("prompt %q", p)
		}
	case <-wrote:
		t.Fatalf("Step 1 was written without a pause: %q", out.String())
	}
	// The writer now waits on the keyboard: the write returns only after
	// Enter (out is read only once it has returned).
	fmt.Fprint(keyboard, "\n")
	if err := <-wrote; err != nil {
		t.Fatal(err)
	}
	if got := out.String(); got != "Step 1. one\n  a\n" {
		t.Errorf("output %q", got)
	}
}

// promptFunc is a prompt writer that hands each prompt to a func.
type promptFunc func(string)

func (f promptFunc) Write(p []byte) (int, error) { f(string(p)); return len(p), nil }

// TestStepWriterEOF: when stdin ends, the chapter runs on without pausing.
func TestStepWriterEOF(t *testing.T) {
	var out, prompt bytes.Buffer
	w := &stepWriter{out: &out, prompt: &prompt, in: bufio.NewReader(strings.NewReader(""))}
	fmt.Fprint(w, "Step 1. a\nStep 2. b\nStep 3. c\n")
	if got := strings.Count(prompt.String(), "press Enter"); got != 1 {
		t.Errorf("asked %d times, want 1 (before Step 1; then stdin was at its end)", got)
	}
}

// TestWithTimeout: a deadline normally, none in step mode.
func TestWithTimeout(t *testing.T) {
	ctx, cancel := WithTimeout(context.Background(), time.Hour)
	defer cancel()
	if _, ok := ctx.Deadline(); !ok {
		t.Error("no deadline outside step mode")
	}
	step := context.WithValue(context.Background(), stepModeKey{}, true)
	ctx, cancel = WithTimeout(step, time.Hour)
	defer cancel()
	if _, ok := ctx.Deadline(); ok {
		t.Error("a deadline in step mode")
	}
}

// TestStepWithoutTerminal: --step with stdin not a terminal (as in tests
// and pipes) changes nothing.
func TestStepWithoutTerminal(t *testing.T) {
	var stdout bytes.Buffer
	_, out, _ := stepOutput(context.Background(), true, &stdout, io.Discard)
	if out != io.Writer(&stdout) {
		t.Error("--step without a terminal wrapped stdout")
	}
}
