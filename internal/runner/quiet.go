package runner

import (
	"context"
	"io"
	"os"
	"sync"

	"k8s.io/klog/v2"
)

// klogOut is where klog writes, set in one place only: the silence that
// ends a run (quietKlog) and a chapter's capture of klog (CaptureKlog)
// both go through it, so that neither undoes the other. The bug it
// prevents: a capture that "puts stderr back" when its step ends, after
// Ctrl-C had silenced klog.
var klogOut struct {
	mu      sync.Mutex
	quiet   bool      // the run has ended: klog writes nowhere, for good
	capture io.Writer // a chapter's capture, or nil
}

// QuietKlogAfter silences klog once ctx ends, unless -v asked for
// client-go's log: a request cut off by Ctrl-C (or by a 403 that ends
// the run) can make client-go log "Unexpected error when reading
// response body" err="context canceled" straight to klog
// (rest/request.go), which says only that the run ended, after which
// Exit's one line is the whole report. The returned func stops it.
func (f Flags) QuietKlogAfter(ctx context.Context) (stop func() bool) {
	if f.Verbosity > 0 {
		return func() bool { return false }
	}
	return context.AfterFunc(ctx, quietKlog)
}

// quietKlog sends klog's output nowhere from now on, whatever a capture
// does after (see setKlogOutput).
func quietKlog() {
	klogOut.mu.Lock()
	defer klogOut.mu.Unlock()
	klogOut.quiet = true
	setKlogOutput()
}

// CaptureKlog sends what is logged through klog's global logger (which
// client-go's traces use, not the context's logger) to w instead of
// stderr, with klog's -vmodule set to vmodule, until restore. restore
// puts back -vmodule, and stderr unless the run has ended meanwhile:
// the runner's silence outlasts a capture. Errors still reach stderr
// too while the run lives (klog's -stderrthreshold).
func CaptureKlog(w io.Writer, vmodule string) (restore func()) {
	klogOut.mu.Lock()
	defer klogOut.mu.Unlock()
	oldVmodule := klogFlags().Lookup("vmodule").Value.String()
	klogOut.capture = w
	setKlogOutput()
	_ = klogFlags().Set("vmodule", vmodule)
	return sync.OnceFunc(func() {
		klogOut.mu.Lock()
		defer klogOut.mu.Unlock()
		_ = klogFlags().Set("vmodule", oldVmodule)
		klogOut.capture = nil
		setKlogOutput()
	})
}

// setKlogOutput points klog where klogOut says: nowhere once the run has
// ended (not to stderr, not to its log "files", and no error past the
// threshold, which Set stores atomically), else to the capture, else to
// stderr, as klog does by default. Each of klog's setters takes klog's
// own lock, so this is safe while others log. klogOut.mu is held.
func setKlogOutput() {
	switch {
	case klogOut.quiet:
		klog.LogToStderr(false)
		klog.SetOutput(io.Discard)
		_ = klogFlags().Set("stderrthreshold", "FATAL")
	case klogOut.capture != nil:
		klog.LogToStderr(false)
		klog.SetOutput(klogOut.capture)
	default:
		klog.SetOutput(os.Stderr)
		klog.LogToStderr(true)
	}
}
