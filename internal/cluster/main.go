package cluster

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"syscall"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/klog/v2"
)

// RunFunc is a chapter: it writes its lesson to out, using c.
type RunFunc func(ctx context.Context, out io.Writer, c *Cluster) error

// ExitInterrupted is the exit status after Ctrl-C or SIGTERM (128+SIGINT,
// as shells report it).
const ExitInterrupted = 130

// Main is every chapter's main: it parses the flags, connects to the
// cluster (embedded unless --kubeconfig, --context or KUBECONFIG say
// otherwise), runs the chapter on stdout and cleans up. Any error is one
// line on stderr and exit status 1; Ctrl-C exits 130 after cleaning up.
func Main(chapter string, run RunFunc) {
	os.Exit(mainExit(chapter, os.Args[1:], os.Stdout, os.Stderr, run))
}

func mainExit(chapter string, args []string, stdout, stderr io.Writer, run RunFunc) int {
	opts, code, ok := parseFlags(chapter, args, stdout, stderr)
	if !ok {
		return code
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// A 403 ends the run instead of hanging it (see stopOnForbidden).
	ctx, deny := context.WithCancelCause(ctx)
	defer deny(nil)
	quietAfterEnd()

	c, err := Connect(ctx, opts)
	if err != nil {
		return fail(ctx, chapter, stderr, err)
	}
	c.stopOnForbidden(deny)
	if !c.Embedded() {
		fmt.Fprintf(stderr, "%s: using %s, namespace %s\n", chapter, c.Description, c.Namespace)
	}
	ctx, out, flush := stepOutput(ctx, opts.Step, stdout, stderr)
	runErr := run(ctx, out, c)
	flush()
	closeErr := c.Close()
	if runErr != nil {
		return fail(ctx, chapter, stderr, runErr)
	}
	if closeErr != nil {
		return fail(ctx, chapter, stderr, closeErr)
	}
	if ctx.Err() != nil {
		return fail(ctx, chapter, stderr, ctx.Err())
	}
	return 0
}

func fail(ctx context.Context, chapter string, stderr io.Writer, err error) int {
	// A run ended by a 403 failed with that 403, whatever the chapter
	// returned once its context was cancelled.
	if cause := context.Cause(ctx); apierrors.IsForbidden(cause) {
		err = cause
	} else if ctx.Err() != nil {
		fmt.Fprintf(stderr, "%s: interrupted, cleaned up\n", chapter)
		return ExitInterrupted
	}
	fmt.Fprintf(stderr, "%s: %s\n", chapter, Describe(err))
	return 1
}

// parseFlags reads --kubeconfig, --context, --namespace and -v. A bad flag
// is one line and exit status 1; -h prints the usage and exit status 0.
func parseFlags(chapter string, args []string, stdout, stderr io.Writer) (Options, int, bool) {
	var o Options
	fs := flag.NewFlagSet(chapter, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&o.Kubeconfig, "kubeconfig", "", "use the real cluster of this kubeconfig file (default: the embedded workshop cluster, or $KUBECONFIG if set)")
	fs.StringVar(&o.Context, "context", "", "use this kubeconfig context (a real cluster)")
	fs.StringVar(&o.Namespace, "namespace", DefaultNamespace, "the namespace the chapter works in")
	fs.BoolVar(&o.Step, "step", false, "pause before each step until Enter (when stdin is a terminal)")
	verbosity := fs.Int("v", 0, "client-go log verbosity on stderr (try 4 to watch the reflector work)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fs.SetOutput(stdout)
			fmt.Fprintf(stdout, "Usage: go run ./%s [flags]\n\nFlags:\n", chapter)
			fs.PrintDefaults()
			return o, 0, false
		}
		fmt.Fprintf(stderr, "%s: %v (see --help)\n", chapter, err)
		return o, 1, false
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "%s: unexpected argument %q (see --help)\n", chapter, fs.Arg(0))
		return o, 1, false
	}
	o.Real = realRequested(o)
	// client-go logs through klog; -v turns its verbosity up on stderr,
	// and stdout stays the chapter's own output.
	kfs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(kfs)
	_ = kfs.Set("v", strconv.Itoa(*verbosity))
	return o, 0, true
}
