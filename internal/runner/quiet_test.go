package runner

import (
	"context"
	"errors"
	"io"
	"os"
	"strings"
	"testing"

	"k8s.io/klog/v2"
)

// stderrOf runs f with os.Stderr a pipe (klog writes to os.Stderr
// itself) and returns what was written to it; then it puts klog back as
// a run starts: not silenced, no capture, on stderr.
func stderrOf(t *testing.T, f func()) string {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := os.Stderr
	os.Stderr = w
	defer func() {
		os.Stderr = stderr
		klogOut.mu.Lock()
		klogOut.quiet, klogOut.capture = false, nil
		setKlogOutput()
		klogOut.mu.Unlock()
		_ = klogFlags().Set("stderrthreshold", "ERROR")
	}()
	f()
	klog.Flush()
	w.Close()
	got, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return string(got)
}

// TestQuietKlog checks that quietKlog silences what client-go logs once a
// run has ended (rest/request.go logs through klog.FromContext, that is
// klog's global logger), and that -v keeps client-go's log.
func TestQuietKlog(t *testing.T) {
	got := stderrOf(t, func() {
		logger := klog.FromContext(context.Background())
		logger.Error(errors.New("context canceled"), "before: printed")
		quietKlog()
		logger.Error(errors.New("context canceled"), "Unexpected error when reading response body")
		klog.ErrorS(nil, "after: not printed either")
	})
	if !strings.Contains(got, "before: printed") || strings.Count(got, "\n") != 1 {
		t.Errorf("klog wrote %q; want the one line logged before quietKlog", got)
	}

	if stop := (Flags{Verbosity: 4}).QuietKlogAfter(t.Context()); stop() {
		t.Error("with -v 4, QuietKlogAfter registered a silencer; -v asks for client-go's log")
	}
}

// TestCaptureKlogKeepsTheSilence pins issue 25 §4: a chapter that
// captures klog for a step (10-lifecycle's step 3) and is interrupted
// meanwhile must not bring klog back to stderr when its step ends. And
// without the silence, the end of a capture does give stderr back.
func TestCaptureKlogKeepsTheSilence(t *testing.T) {
	var captured strings.Builder
	got := stderrOf(t, func() {
		restore := CaptureKlog(&captured, "trace=2")
		klog.InfoS("during the capture")
		quietKlog() // Ctrl-C while the step runs
		restore()   // the step ends
		klog.ErrorS(errors.New("context canceled"), "Unexpected error when reading response body")
		klog.InfoS("after the run: not printed")
	})
	if got != "" {
		t.Errorf("after Ctrl-C and the end of a capture, klog wrote %q to stderr; want nothing", got)
	}
	if !strings.Contains(captured.String(), "during the capture") {
		t.Errorf("the capture got %q; want the line logged during it", captured.String())
	}

	got = stderrOf(t, func() {
		restore := CaptureKlog(io.Discard, "trace=2")
		klog.InfoS("captured, not on stderr")
		restore()
		klog.InfoS("after the capture: on stderr")
	})
	if strings.Contains(got, "captured") || !strings.Contains(got, "after the capture") {
		t.Errorf("klog wrote %q to stderr; want only the line logged after the capture", got)
	}
	if v := klogFlags().Lookup("vmodule").Value.String(); v != "" {
		t.Errorf("after the capture, -vmodule is %q; want it put back", v)
	}
}
