package runner

import (
	"bytes"
	"flag"
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// count is a flag.Value that takes a number from 1 to 10, as a chapter's
// own flag would.
type count int

func (c *count) String() string { return strconv.Itoa(int(*c)) }
func (c *count) Set(s string) error {
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > 10 {
		return fmt.Errorf("want a number from 1 to 10")
	}
	*c = count(n)
	return nil
}

// TestParseWithOwnFlags: a chapter's own flag is parsed with every
// chapter's, listed by --help, and a bad value is one line and exit 1.
func TestParseWithOwnFlags(t *testing.T) {
	n := count(3)
	own := func(fs *flag.FlagSet) { fs.Var(&n, "pods", "how many pods (1 to 10)") }

	var stdout, stderr bytes.Buffer
	if _, code, ok := ParseWith("12-test", "", own, []string{"--help"}, &stdout, &stderr); ok || code != 0 {
		t.Fatalf("--help: ok %v, exit status %d, want false and 0", ok, code)
	}
	if !strings.Contains(stdout.String(), "-pods") || !strings.Contains(stdout.String(), "-kubeconfig") {
		t.Errorf("--help does not list --pods and --kubeconfig:\n%s", stdout.String())
	}

	f, _, ok := ParseWith("12-test", "", own, []string{"--pods", "7", "--namespace", "ns"}, &stdout, &stderr)
	if !ok || n != 7 || f.Namespace != "ns" {
		t.Errorf("--pods 7 --namespace ns: ok %v, pods %d, namespace %q", ok, n, f.Namespace)
	}

	for _, args := range [][]string{{"--pods", "x"}, {"--pods", "-1"}, {"--pods=11"}} {
		stderr.Reset()
		_, code, ok := ParseWith("12-test", "", own, args, &stdout, &stderr)
		lines := strings.Split(strings.TrimRight(stderr.String(), "\n"), "\n")
		if ok || code != 1 || len(lines) != 1 || !strings.HasPrefix(lines[0], "12-test: ") ||
			!strings.Contains(lines[0], "want a number from 1 to 10") {
			t.Errorf("%v: ok %v, exit status %d, stderr %q; want one line that says why, and 1",
				args, ok, code, stderr.String())
		}
	}
}
