package leakcheck

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"
)

// apartEnv names, in a process RunApart started, the test it runs.
const apartEnv = "LEAKCHECK_APART"

// RunApart runs the calling test in a process of its own: this test
// binary again, told to run that test alone. It is for a test that
// mostly waits on client-go's timers (a resync period, a relist's
// backoff, a chapter's inherent waits): the package's tests that run
// apart wait at the same time, not one after another.
//
// Why a process and not t.Parallel: Verify counts every goroutine of the
// process, and other state is process-wide too (--trace's recorder,
// trace.Install; client-go's feature gates), so two such tests in one
// process would see each other's. In a process of its own the test runs
// exactly as it runs alone.
//
// Call it first, as the whole of what a test does before its own code:
//
//	if leakcheck.RunApart(t) {
//		return // it ran in a process of its own, and t has its result
//	}
//
// In the parent it starts the child at once, then waits in parallel with
// the other tests (t.Parallel), so children run while the package's
// serial tests do. The child's failure fails t with the child's output;
// its skip skips t; with -v its output is logged. In the child, RunApart
// returns false and the test runs there. Flags the child needs are passed
// on: -update (golden files), -short, -failfast and the coverage
// directory; the child's -timeout ends before this one.
func RunApart(t *testing.T) (ranApart bool) {
	t.Helper()
	if os.Getenv(apartEnv) == t.Name() {
		return false // the child: run the test here
	}
	out, err := os.CreateTemp(t.TempDir(), "apart")
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	args := append(passedFlags(), "-test.v", "-test.run="+runPattern(t.Name()))
	if deadline, ok := t.Deadline(); ok {
		// The child times out first, so that its stacks are the ones
		// printed, and it is not left running.
		left := time.Until(deadline)
		args = append(args, "-test.timeout="+(left-left/10).String())
	}
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), apartEnv+"="+t.Name())
	// Output to a file: exec then starts no goroutine, which the leak
	// checks of the serial tests still running in this process would see.
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Parallel()
	err = cmd.Wait()
	log, readErr := os.ReadFile(out.Name())
	if readErr != nil {
		t.Fatal(readErr)
	}
	name := regexp.QuoteMeta(t.Name())
	switch {
	case err != nil:
		t.Errorf("in a process of its own (%v):\n%s", err, log)
	case regexp.MustCompile(`(?m)^\s*--- SKIP: ` + name + ` `).Match(log):
		t.Skipf("skipped in a process of its own:\n%s", log)
	case !regexp.MustCompile(`(?m)^\s*--- PASS: ` + name + ` `).Match(log):
		t.Errorf("in a process of its own, %s did not run:\n%s", t.Name(), log)
	case testing.Verbose():
		t.Logf("in a process of its own:\n%s", log)
	}
	return true
}

// runPattern is the -test.run pattern that matches the test named name
// (a subtest's name holds its parents', split by slashes) and no other.
func runPattern(name string) string {
	parts := strings.Split(name, "/")
	for i, p := range parts {
		parts[i] = "^" + regexp.QuoteMeta(p) + "$"
	}
	return strings.Join(parts, "/")
}

// passedFlags are the flags of this run that the child needs, as set.
func passedFlags() []string {
	var args []string
	flag.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "update", "test.short", "test.failfast", "test.gocoverdir", "test.paniconexit0":
			args = append(args, fmt.Sprintf("-%s=%s", f.Name, f.Value))
		}
	})
	return args
}
