package cluster

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/informer-walkthrough/informer-walkthrough/internal/apiserver"
	"github.com/informer-walkthrough/informer-walkthrough/internal/progress"
	"github.com/informer-walkthrough/informer-walkthrough/internal/runner"
)

// RunFunc is a chapter: it writes its lesson to out, using c.
type RunFunc func(ctx context.Context, out io.Writer, c *Cluster) error

// Main is the main of every chapter that talks to a cluster: it parses
// the flags (internal/runner), connects to the cluster (embedded unless
// --kubeconfig, --context or KUBECONFIG say otherwise), runs the chapter
// on stdout and cleans up. Any error is one line on stderr and exit
// status 1; Ctrl-C exits 130 after cleaning up.
func Main(chapter string, run RunFunc) {
	MainWith(chapter, Extras{}, run)
}

// Extras is what a chapter adds to what Main does for every chapter.
type Extras struct {
	// Flags declares the chapter's own flags on fs, beside every
	// chapter's: --help lists them, and a bad value is one line on
	// stderr and exit status 1 (a flag.Value's Set error says why).
	Flags func(fs *flag.FlagSet)
	// Server configures the embedded workshop cluster (Options.Server).
	Server apiserver.Options
}

// MainWith is Main for a chapter with Extras.
func MainWith(chapter string, x Extras, run RunFunc) {
	os.Exit(mainExit(chapter, x, os.Args[1:], os.Stdout, os.Stderr, run))
}

func mainExit(chapter string, x Extras, args []string, stdout, stderr io.Writer, run RunFunc) int {
	f, code, ok := runner.ParseWith(chapter, "", x.Flags, args, stdout, stderr)
	if !ok {
		return code
	}
	opts := Options{Kubeconfig: f.Kubeconfig, Context: f.Context, Namespace: f.Namespace, Step: f.Step, Server: x.Server}
	opts.Real = realRequested(opts)
	ctx, stop := runner.Signals()
	defer stop()
	// A 403 ends the run instead of hanging it (see stopOnForbidden).
	ctx, deny := context.WithCancelCause(ctx)
	defer deny(nil)
	quietAfterEnd()
	defer f.QuietKlogAfter(ctx)()
	terminal := stdout // before Traced wraps it
	stdout, finish, err := f.Traced(ctx, chapter, stdout, stderr)
	if err != nil {
		return exit(ctx, chapter, stderr, err)
	}

	c, err := Connect(ctx, opts)
	if err != nil {
		return finish(exit(ctx, chapter, stderr, err))
	}
	c.stopOnForbidden(deny)
	if !c.Embedded() {
		fmt.Fprintf(stderr, "%s: using %s, namespace %s\n", chapter, c.Description, c.Namespace)
	}
	// --source: after each step, the client-go functions it ran.
	wrap, finishSource, err := f.Sourced(chapter, stderr)
	if err != nil {
		c.Close()
		return finish(exit(ctx, chapter, stderr, err))
	}
	rctx, out, done := runner.Output(ctx, chapter, opts.Step, stdout, stderr)
	// Waits that are not the lesson say how far they are, on stderr, to
	// a person at a terminal (internal/progress); never into the output.
	rctx = progress.ToTerminal(rctx, terminal, stderr)
	runErr := run(rctx, wrap(out), c)
	code = finishSource(0)
	closeErr := c.Close()
	if runErr == nil {
		runErr = closeErr
	}
	code = max(code, exit(rctx, chapter, stderr, runErr))
	done()
	return finish(code)
}

// exit is runner.Exit, but a run ended by a 403 failed with that 403,
// whatever the chapter returned once its context was cancelled.
func exit(ctx context.Context, chapter string, stderr io.Writer, err error) int {
	if cause := context.Cause(ctx); apierrors.IsForbidden(cause) {
		return runner.Exit(context.Background(), chapter, stderr, cause, Describe)
	}
	return runner.Exit(ctx, chapter, stderr, err, Describe)
}
