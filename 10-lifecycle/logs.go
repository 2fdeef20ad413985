package main

// What the chapter needs to show client-go's own log lines: a logger
// that keeps them, klog's global output redirected for one step, the
// masking of what changes from run to run (times, trace numbers, the
// reflector's file:line name), and the printing of what was logged.

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/go-logr/logr"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/textlogger"

	"github.com/informer-walkthrough/informer-walkthrough/internal/show"
)

// logLines keeps what a logger writes, one entry per line, and lets a
// step await them. client-go logs on its own goroutines.
type logLines struct {
	mu      sync.Mutex
	lines   []string
	read    int
	changed chan struct{}
}

func newLogLines() *logLines { return &logLines{changed: make(chan struct{})} }

// Write takes one or more log entries (klog and textlogger write whole
// entries); continuation lines of a multi-line entry stay separate lines.
func (l *logLines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, line := range strings.Split(strings.TrimRight(string(p), "\n"), "\n") {
		l.lines = append(l.lines, line)
	}
	close(l.changed)
	l.changed = make(chan struct{})
	return len(p), nil
}

// await returns the next line that contains substr, skipping others.
func (l *logLines) await(ctx context.Context, substr string) (string, error) {
	for {
		l.mu.Lock()
		for l.read < len(l.lines) {
			line := l.lines[l.read]
			l.read++
			if strings.Contains(line, substr) {
				l.mu.Unlock()
				return line, nil
			}
		}
		changed := l.changed
		l.mu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
			return "", fmt.Errorf("waiting for a log line with %q: %w", substr, context.Cause(ctx))
		}
	}
}

// first returns the first line logged so far that contains substr.
func (l *logLines) first(substr string) string {
	for _, line := range l.all() {
		if strings.Contains(line, substr) {
			return line
		}
	}
	return "(nothing logged with " + strconv.Quote(substr) + ")"
}

// all returns every line logged so far.
func (l *logLines) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.lines...)
}

// newLogger returns a logger that writes klog's text format, without
// the time and file:line header, into the lines it returns. Put it in a
// context (klog.NewContext) and client-go logs there instead of stderr.
func newLogger() (logr.Logger, *logLines) {
	lines := newLogLines()
	cfg := textlogger.NewConfig(textlogger.Output(lines), textlogger.WithHeader(false))
	return textlogger.NewLogger(cfg), lines
}

// captureKlog redirects klog's global output (which client-go's traces
// use, not the context's logger) into lines, and sets -vmodule. restore
// puts both back. klog's setters used here take klog's own lock, so this
// is safe while other goroutines log.
func captureKlog(vmodule string) (lines *logLines, restore func()) {
	fs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(fs)
	toStderr := fs.Lookup("logtostderr").Value.String() == "true"
	oldVmodule := fs.Lookup("vmodule").Value.String()
	lines = newLogLines()
	klog.SetOutput(lines)
	klog.LogToStderr(false)
	_ = fs.Set("vmodule", vmodule)
	return lines, func() {
		_ = fs.Set("vmodule", oldVmodule)
		klog.LogToStderr(toStderr)
		klog.SetOutput(os.Stderr)
	}
}

var (
	// klogHeader is "I1123 16:56:22.272751   20158 trace.go:236] ".
	klogHeader   = regexp.MustCompile(`^[IWEF]\d{4} [\d:.]+\s+\d+ [^ ]+:\d+\] `)
	traceNumber  = regexp.MustCompile(`Trace\[\d+\]`)
	traceStart   = regexp.MustCompile(`\(\d\d-[A-Za-z]{3}-\d{4} [\d:.]+\)`)
	traceTimes   = regexp.MustCompile(`\[[\d.]+[µnm]?s\]`)
	traceTotal   = regexp.MustCompile(`total time: \d+ms`)
	tracePending = regexp.MustCompile(`pendingNotifications:(\d+)`)
	reflectorAt  = regexp.MustCompile(`reflector="[^"]*"`)
	// A test binary names package main by its import path.
	handlerPkg = regexp.MustCompile(`handler:\S*/10-lifecycle\.`)
)

// masked is a log line with what differs between runs replaced by "…":
// the klog header, trace numbers and times, the pending count (which
// the trace reads while the listener's buffer drains), and the
// reflector's name (the file:line that created it, a path on disk).
func masked(line string) string {
	line = klogHeader.ReplaceAllString(line, "")
	line = traceNumber.ReplaceAllString(line, "Trace[…]")
	line = traceStart.ReplaceAllString(line, "(…)")
	line = traceTimes.ReplaceAllString(line, "[…]")
	line = traceTotal.ReplaceAllString(line, "total time: …ms")
	line = tracePending.ReplaceAllString(line, "pendingNotifications:…")
	line = handlerPkg.ReplaceAllString(line, "handler:main.")
	return reflectorAt.ReplaceAllString(line, `reflector="…"`)
}

// pendingIn reads the pendingNotifications field of a trace line.
func pendingIn(line string) (n int) {
	if m := tracePending.FindStringSubmatch(line); m != nil {
		fmt.Sscan(m[1], &n)
	}
	return n
}

// tail is what follows marker in err's message: an error that prints a
// handler's fields (func values, which print as addresses) is shown
// from its deterministic part on.
func tail(err error, marker string) string {
	if err == nil {
		return "<nil>"
	}
	if i := strings.Index(err.Error(), marker); i >= 0 {
		return "…" + err.Error()[i:]
	}
	return err.Error()
}

// firstTrace is the first processorListener trace klog printed: its
// lines, masked, and its pending count. untraced says whether no trace
// at all reported 1024 or fewer pending (client-go traces none such).
type firstTrace struct {
	lines    []string
	pending  int
	untraced bool
}

// traceNumberOf is the "Trace[123]" a trace's lines all begin with.
var traceNumberOf = regexp.MustCompile(`Trace\[\d+\]`)

func firstTraceIn(logged *logLines) firstTrace {
	t := firstTrace{untraced: true}
	var number string
	for _, line := range logged.all() {
		if strings.Contains(line, "processorListener handler") {
			if number == "" {
				number, t.pending = traceNumberOf.FindString(line), pendingIn(line)
			}
			t.untraced = t.untraced && pendingIn(line) > 1024
		}
		if number != "" && strings.Contains(line, number) {
			t.lines = append(t.lines, masked(line))
		}
	}
	return t
}

// printRefused prints what step 1's informer did with a refused list:
// what WaitForCacheSyncWithContext returned, whether the cause was a 403,
// and the line DefaultWatchErrorHandler logged.
func printRefused(out io.Writer, synced error, forbidden bool, logged *logLines) {
	fmt.Fprintf(out, "  the informer's client acts as user %q, who may not list pods\n", nobody)
	fmt.Fprintf(out, "  WaitForCacheSyncWithContext returned at once: %v\n", synced)
	fmt.Fprintf(out, "  apierrors.IsForbidden(context.Cause(ctx)): %t\n", forbidden)
	fmt.Fprintln(out, "  DefaultWatchErrorHandler logged, as it does at every retry without a handler:")
	fmt.Fprintf(out, "    %s\n", masked(logged.first("Failed to watch")))
}

// printTrace prints the first processorListener trace step 3 captured,
// and whether it is call 2's, not the untraced call n's.
func printTrace(out io.Writer, n int, logged *logLines) {
	fmt.Fprintf(out, "  %d pods in a fake clientset; the handler holds call 1 until the informer has synced\n", n)
	fmt.Fprintf(out, "  calls 2 and %d take 100 ms; klog -vmodule=trace=2 (the trace logs at V(2)), captured:\n", n)
	trace := firstTraceIn(logged)
	show.Print(out, "    ", trace.lines)
	fmt.Fprintf(out, "  it is call 2's: pendingNotifications > 1024: %t; call %d, nothing pending, untraced: %t\n",
		trace.pending > 1024, n, trace.untraced)
}

// printRunTwice awaits and prints what RunWithContext logs when step 4's
// factory starts the configmaps informer that already runs.
func printRunTwice(ctx context.Context, out io.Writer, logged *logLines) error {
	warning, err := logged.await(ctx, "run more than once")
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "  configmaps' informer runs on a context of its own; factory.Start logs %s\n", warning)
	return nil
}
