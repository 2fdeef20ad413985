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

// TestQuietKlog checks that quietKlog silences what client-go logs once a
// run has ended (rest/request.go logs through klog.FromContext, that is
// klog's global logger), and that -v keeps client-go's log.
func TestQuietKlog(t *testing.T) {
	// klog writes to os.Stderr itself: read what it writes through a pipe.
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := os.Stderr
	os.Stderr = w
	t.Cleanup(func() {
		os.Stderr = stderr
		klog.LogToStderr(true)
		klog.SetOutput(nil)
		_ = klogFlags().Set("stderrthreshold", "ERROR")
	})
	logger := klog.FromContext(context.Background())
	logger.Error(errors.New("context canceled"), "before: printed")
	quietKlog()
	logger.Error(errors.New("context canceled"), "Unexpected error when reading response body")
	klog.ErrorS(nil, "after: not printed either")
	klog.Flush()
	os.Stderr = stderr
	w.Close()
	got, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(got), "before: printed") || strings.Count(string(got), "\n") != 1 {
		t.Errorf("klog wrote %q; want the one line logged before quietKlog", got)
	}

	if stop := (Flags{Verbosity: 4}).QuietKlogAfter(t.Context()); stop() {
		t.Error("with -v 4, QuietKlogAfter registered a silencer; -v asks for client-go's log")
	}
}
