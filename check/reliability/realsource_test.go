package reliability

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestSourceOnRealCluster runs every chapter with --source against the
// real cluster REAL_KUBECONFIG names, and compares the functions each
// step entered with the chapter's source.golden, taken on the workshop
// cluster. The promise is that they are the same but where the
// server's answers decide otherwise, so the differences are logged, not
// failed: hack/realk8s/README.md says what they were at the last run and
// why. (TestChaptersOnRealCluster checks the chapters' own lines there.)
func TestSourceOnRealCluster(t *testing.T) {
	kubeconfig := os.Getenv("REAL_KUBECONFIG")
	if kubeconfig == "" {
		t.Skip("REAL_KUBECONFIG names no kubeconfig: see hack/realk8s/README.md")
	}
	<-built
	chs, err := coverBuild()
	if err != nil {
		t.Fatal(err)
	}
	for _, ch := range chs {
		t.Run(ch.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 4*limit)
			defer cancel()
			cmd, stdout, stderr := ch.command(ctx, env(t, append(goEnv(t), "GOCOVERDIR="+t.TempDir())...), "--source", "--kubeconfig", kubeconfig)
			if err := cmd.Run(); err != nil {
				t.Fatalf("%v; stderr:\n%s", err, stderr)
			}
			_, sets := splitSource(stdout.String())
			got := "# go run ./" + ch.name + " --source: the functions each step entered, by part\n" +
				"# (TestSource in check/reliability; their counts are not pinned)\n" +
				sourceSets(ch.name, sets)
			want, err := os.ReadFile(filepath.Join(root, ch.name, "testdata", "source.golden"))
			if err != nil {
				t.Fatal(err)
			}
			// A heading may name a resourceVersion (01's step 2), which
			// differs from server to server.
			if diff := cmp.Diff(headingNumbers(string(want)), headingNumbers(got)); diff != "" {
				t.Logf("on the real cluster the steps entered other functions than on the workshop cluster (-workshop +real):\n%s",
					strings.TrimSpace(diff))
			} else {
				t.Log("the same functions, step by step, as on the workshop cluster")
			}
		})
	}
}

// headingNumbers masks the numbers a step heading holds after its own
// ("Step 2. WATCH from resourceVersion 233": 01 names one, which differs
// from server to server).
func headingNumbers(s string) string {
	digits := regexp.MustCompile(`\d+`)
	ls := strings.Split(s, "\n")
	for i, l := range ls {
		if m := stepHeading.FindString(l); m != "" {
			ls[i] = m + digits.ReplaceAllString(l[len(m):], "N")
		}
	}
	return strings.Join(ls, "\n")
}
