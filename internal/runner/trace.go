package runner

import (
	"context"
	"fmt"
	"io"
	"strconv"

	"github.com/informer-walkthrough/informer-walkthrough/internal/trace"
)

// viewFlag is --view: a bool flag (--view serves on a free port) that
// also takes a port (--view=8080, for a page an instructor opens ahead).
type viewFlag struct{ port *int }

func (v viewFlag) IsBoolFlag() bool { return true }

func (v viewFlag) String() string {
	if v.port == nil || *v.port < 0 {
		return "false"
	}
	return strconv.Itoa(*v.port)
}

func (v viewFlag) Set(s string) error {
	switch s {
	case "true":
		*v.port = 0
		return nil
	case "false":
		*v.port = -1
		return nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > 65535 {
		return fmt.Errorf("want no value (a free port) or a port from 1 to 65535, not %q", s)
	}
	*v.port = n
	return nil
}

// Traced starts what --view and --trace ask for, before the chapter
// runs: it returns stdout with the chapter's lines recorded, and finish,
// to call once the chapter has returned with its exit code: it writes
// the trace, ends the live page, and returns the code (1, with one line
// on stderr, if the trace could not be written). With --view it prints
// the page's address and waits until the page is open (or ctx ends:
// then err is ctx's cause). Without either flag it changes nothing.
func (f Flags) Traced(ctx context.Context, chapter string, stdout, stderr io.Writer) (out io.Writer, finish func(code int) int, err error) {
	if f.View < 0 && f.Trace == "" {
		return stdout, func(code int) int { return code }, nil
	}
	s, err := trace.Start(trace.Options{Chapter: chapter, ViewPort: f.View, File: f.Trace}, stderr)
	if err != nil {
		return nil, nil, err
	}
	finish = func(code int) int {
		if err := s.Finish(); err != nil {
			fmt.Fprintf(stderr, "%s: %v\n", chapter, err)
			if code == 0 {
				code = 1
			}
		}
		return code
	}
	if url := s.URL(); url != "" {
		fmt.Fprintf(stderr, "%s: --view: open %s in a browser; the chapter starts when the page is open\n", chapter, url)
		if err := s.WaitForPage(ctx); err != nil {
			finish(0)
			return nil, nil, err
		}
	}
	return s.Writer(stdout), finish, nil
}
