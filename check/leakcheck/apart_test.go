package leakcheck

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// wantEnv asks TestApartOutcome's children for an outcome.
const wantEnv = "LEAKCHECK_TEST_WANT"

// TestRunsApart: the test body runs only in the child, which is told
// its own name (a subtest's too, spaces and all).
func TestRunsApart(t *testing.T) {
	for _, name := range []string{"one", "two words"} {
		t.Run(name, func(t *testing.T) {
			if RunApart(t) {
				return
			}
			if got := os.Getenv(apartEnv); got != t.Name() {
				t.Errorf("the body ran with %s=%q, want %q", apartEnv, got, t.Name())
			}
		})
	}
}

// TestApartOutcome is run as a child by TestRunApartReports, which says
// through wantEnv what it should do; run directly, it passes.
func TestApartOutcome(t *testing.T) {
	if RunApart(t) {
		return
	}
	switch os.Getenv(wantEnv) {
	case "fail":
		t.Error("failing as asked")
	case "skip":
		t.Skip("skipping as asked")
	}
}

// TestRunApartReports: a child's failure fails the test with the child's
// output, and a child's skip skips it.
func TestRunApartReports(t *testing.T) {
	for _, tc := range []struct {
		want     string
		exitCode int
		says     []string
	}{
		{"fail", 1, []string{"--- FAIL: TestApartOutcome", "in a process of its own (exit status 1)", "failing as asked"}},
		{"skip", 0, []string{"--- SKIP: TestApartOutcome", "skipped in a process of its own", "skipping as asked"}},
		{"pass", 0, []string{"--- PASS: TestApartOutcome"}},
	} {
		t.Run(tc.want, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.v", "-test.run=^TestApartOutcome$")
			cmd.Env = append(os.Environ(), wantEnv+"="+tc.want)
			out, err := cmd.CombinedOutput()
			code := 0
			if exit, ok := err.(*exec.ExitError); ok {
				code = exit.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if code != tc.exitCode {
				t.Errorf("exit code %d, want %d; output:\n%s", code, tc.exitCode, out)
			}
			for _, s := range tc.says {
				if !strings.Contains(string(out), s) {
					t.Errorf("output does not say %q:\n%s", s, out)
				}
			}
		})
	}
}
