// Package runner is what every chapter's main has in common: the command
// line (the cluster flags, --step, -v), Ctrl-C, the guard against a wait
// that never ends, and the exit statuses. It knows nothing of clusters:
// internal/cluster builds the chapters that talk to one on top of it, and
// 02-deltafifo, which runs in memory, uses it alone.
package runner

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"sync"
	"syscall"
	"time"

	"k8s.io/klog/v2"

	"github.com/informer-walkthrough/informer-walkthrough/internal/source"
)

// ExitInterrupted is the exit status after Ctrl-C or SIGTERM (128+SIGINT,
// as shells report it).
const ExitInterrupted = 130

// Patience bounds a whole chapter run: a chapter waits on events, never on
// sleeps, so a run that has not ended by then is stuck waiting for an
// event that will not come, and fails with a line that says so instead of
// hanging a classroom. --step turns it off (see WithTimeout).
const Patience = 30 * time.Second

// DefaultNamespace is where chapters work unless --namespace says otherwise.
const DefaultNamespace = "informer-walkthrough"

// Flags is the command line every chapter takes.
type Flags struct {
	Kubeconfig string // --kubeconfig
	Context    string // --context
	Namespace  string // --namespace
	Step       bool   // --step: wait for Enter between steps
	Verbosity  int    // -v: client-go's log verbosity on stderr
	View       int    // --view: the live page's port (0: a free one), -1 for none
	Trace      string // --trace: write the replayable page here
	Source     bool   // --source: after each step, which client-go functions it ran
}

// ClusterFlagsSet reports whether any flag that picks a cluster was given.
func (f Flags) ClusterFlagsSet() bool {
	return f.Kubeconfig != "" || f.Context != "" || f.Namespace != DefaultNamespace
}

// Parse reads the command line. A bad flag is one line on stderr and exit
// status 1; -h prints the usage and exit status 0. ok is false when the
// program should exit with code at once.
func Parse(chapter, usage string, args []string, stdout, stderr io.Writer) (f Flags, code int, ok bool) {
	return ParseWith(chapter, usage, nil, args, stdout, stderr)
}

// ParseWith is Parse for a chapter with flags of its own: own, if not
// nil, declares them on the flag set (after every chapter's, so that
// --help lists them too). A value their flag.Value refuses is a bad flag
// like any other: one line on stderr that says why, exit status 1.
func ParseWith(chapter, usage string, own func(*flag.FlagSet), args []string, stdout, stderr io.Writer) (f Flags, code int, ok bool) {
	// A build that --source made only to copy out of go run's cache.
	if code, done := source.CopyRequested(); done {
		return f, code, false
	}
	fs := flag.NewFlagSet(chapter, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&f.Kubeconfig, "kubeconfig", "", "use the real cluster of this kubeconfig file (default: the embedded workshop cluster, or $KUBECONFIG if set)")
	fs.StringVar(&f.Context, "context", "", "use this kubeconfig context (a real cluster)")
	fs.StringVar(&f.Namespace, "namespace", DefaultNamespace, "the namespace the chapter works in")
	fs.BoolVar(&f.Step, "step", false, "pause before each step until Enter (when stdin is a terminal)")
	fs.IntVar(&f.Verbosity, "v", 0, "client-go log verbosity on stderr (try 4 to watch the reflector work)")
	f.View = -1
	fs.Var(viewFlag{&f.View}, "view", "serve a page on 127.0.0.1 that shows the pipeline live (--view=PORT for a fixed port)")
	fs.StringVar(&f.Trace, "trace", "", "write the run to this HTML `file`, a page that replays it offline")
	fs.BoolVar(&f.Source, "source", false, "after each step, list the client-go functions it ran, with counts and file:line (builds the chapter again with coverage: slow the first time)")
	if own != nil {
		own(fs)
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fs.SetOutput(stdout)
			fmt.Fprintf(stdout, "Usage: go run ./%s [flags]\n\n%sFlags:\n", chapter, usage)
			fs.PrintDefaults()
			return f, 0, false
		}
		fmt.Fprintf(stderr, "%s: %v (see --help)\n", chapter, err)
		return f, 1, false
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "%s: unexpected argument %q (see --help)\n", chapter, fs.Arg(0))
		return f, 1, false
	}
	// --source needs a binary built with coverage: if this one is not,
	// the chapter runs again, built so (and its exit status is this one's).
	if f.Source && !source.Instrumented() {
		code, err := source.Rerun(chapter, args, stdout, stderr)
		if err != nil {
			fmt.Fprintf(stderr, "%s: %v\n", chapter, err)
		}
		return f, code, false
	}
	// client-go logs through klog; -v turns its verbosity up on stderr,
	// and stdout stays the chapter's own output.
	_ = klogFlags().Set("v", strconv.Itoa(f.Verbosity))
	return f, 0, true
}

// klogFlags are klog's flags, made once: klog.InitFlags writes klog's
// settings, which is safe only before anything logs.
var klogFlags = sync.OnceValue(func() *flag.FlagSet {
	kfs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(kfs)
	return kfs
})

// Signals returns a context that ends at Ctrl-C or SIGTERM.
func Signals() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
}

// Output returns the writer a chapter prints to (stdout, or with --step
// and a terminal a writer that pauses before each step heading), the
// chapter's context with the Patience guard, and a func to call when the
// chapter has returned.
func Output(ctx context.Context, chapter string, step bool, stdout, stderr io.Writer) (context.Context, io.Writer, func()) {
	ctx, out, flush := stepOutput(ctx, step, stdout, stderr)
	ctx, cancel := Guard(ctx, chapter)
	return ctx, out, func() { flush(); cancel() }
}

// ErrStuck is the cause of a chapter context that Patience ended.
var ErrStuck = errors.New("still waiting after " + Patience.String() + ": an expected event never came")

// Guard bounds ctx by Patience (none in --step mode), with ErrStuck as
// its cause. Tests call it too, so that they run a chapter as main does.
func Guard(ctx context.Context, chapter string) (context.Context, context.CancelFunc) {
	if stepMode(ctx) {
		return context.WithCancel(ctx)
	}
	return context.WithTimeoutCause(ctx, Patience, fmt.Errorf("%s: %w", chapter, ErrStuck))
}

// Exit turns the end of a run into an exit status: 0, or one line on
// stderr and 1, or ExitInterrupted once ctx was cancelled (Ctrl-C).
// describe words an error for a learner (nil: as it is).
func Exit(ctx context.Context, chapter string, stderr io.Writer, err error, describe func(error) string) int {
	if err == nil && ctx.Err() == nil {
		return 0
	}
	if cause := context.Cause(ctx); errors.Is(cause, ErrStuck) {
		err = cause
	} else if ctx.Err() != nil {
		fmt.Fprintf(stderr, "%s: interrupted, cleaned up\n", chapter)
		return ExitInterrupted
	}
	if describe != nil {
		fmt.Fprintf(stderr, "%s: %s\n", chapter, describe(err))
	} else {
		fmt.Fprintf(stderr, "%s: %v\n", chapter, err)
	}
	return 1
}

// MainInMemory is main for a chapter that runs in memory (02-deltafifo).
// It takes the same flags as every chapter, so that a class can run every
// chapter against its cluster in one loop; the cluster flags are
// ignored, and one line on stderr says so.
func MainInMemory(chapter string, run func(ctx context.Context, out io.Writer) error) {
	os.Exit(mainInMemory(chapter, os.Args[1:], os.Stdout, os.Stderr, run))
}

func mainInMemory(chapter string, args []string, stdout, stderr io.Writer, run func(context.Context, io.Writer) error) int {
	f, code, ok := Parse(chapter, "This chapter runs in memory: it needs no cluster and ignores the cluster flags.\n\n", args, stdout, stderr)
	if !ok {
		return code
	}
	if f.ClusterFlagsSet() {
		fmt.Fprintf(stderr, "%s: runs in memory, no cluster needed: --kubeconfig, --context and --namespace are ignored\n", chapter)
	}
	ctx, stop := Signals()
	defer stop()
	stdout, finish, err := f.Traced(ctx, chapter, stdout, stderr)
	if err != nil {
		return Exit(ctx, chapter, stderr, err, nil)
	}
	wrap, finishSource, err := f.Sourced(chapter, stderr)
	if err != nil {
		return finish(Exit(ctx, chapter, stderr, err, nil))
	}
	ctx, out, done := Output(ctx, chapter, f.Step, stdout, stderr)
	err = run(ctx, wrap(out))
	code = finishSource(Exit(ctx, chapter, stderr, err, nil))
	done()
	return finish(code)
}
