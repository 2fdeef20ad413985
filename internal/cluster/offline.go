package cluster

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// OfflineFunc is a chapter that needs no cluster (02-deltafifo).
type OfflineFunc func(ctx context.Context, out io.Writer) error

// MainOffline is Main for a chapter that runs purely in memory: no cluster
// flags, the same one-line errors and exit statuses.
func MainOffline(chapter string, run OfflineFunc) {
	os.Exit(mainOfflineExit(chapter, os.Args[1:], os.Stdout, os.Stderr, run))
}

func mainOfflineExit(chapter string, args []string, stdout, stderr io.Writer, run OfflineFunc) int {
	fs := flag.NewFlagSet(chapter, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	step := fs.Bool("step", false, "pause before each step until Enter (when stdin is a terminal)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintf(stdout, "Usage: go run ./%s [--step]\n\nThis chapter runs in memory: no cluster flags.\n", chapter)
			fs.SetOutput(stdout)
			fs.PrintDefaults()
			return 0
		}
		fmt.Fprintf(stderr, "%s: %v (see --help)\n", chapter, err)
		return 1
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "%s: unexpected argument %q (see --help)\n", chapter, fs.Arg(0))
		return 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, out, flush := stepOutput(ctx, *step, stdout, stderr)
	err := run(ctx, out)
	flush()
	if err != nil {
		return fail(ctx, chapter, stderr, err)
	}
	if ctx.Err() != nil { // interrupted, though run did not notice
		return fail(ctx, chapter, stderr, ctx.Err())
	}
	return 0
}
