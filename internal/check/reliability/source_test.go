package reliability

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/informer-walkthrough/informer-walkthrough/internal/check/golden"
	"github.com/informer-walkthrough/informer-walkthrough/internal/source"
)

// coverBuild builds every chapter once more, into one binary as build
// does, but with client-go instrumented as --source builds a chapter
// (source.Packages; see build).
var coverBuild = sync.OnceValues(func() ([]chapter, error) {
	dir, err := os.MkdirTemp("", "reliability-source")
	if err != nil {
		return nil, err
	}
	coverDir = dir
	return build(dir, source.Packages)
})

// coverDir is coverBuild's folder, which TestSource removes.
var coverDir string

// TestSource runs every chapter with --source, built with coverage: the
// chapter's own lines are its golden file's, unchanged, and the
// functions each step entered are those NN/testdata/source.golden pins,
// but for what depends on timing (sourceVaries).
func TestSource(t *testing.T) {
	if testing.Short() {
		t.Skip("builds client-go with coverage (about a minute of CPU)")
	}
	<-built // one build at a time: the machine has two cores
	start := time.Now()
	chs, err := coverBuild()
	t.Cleanup(func() { os.RemoveAll(coverDir) })
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("the instrumented build took %v", time.Since(start).Round(time.Second))
	for _, ch := range chs {
		t.Run(ch.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(t.Context(), 4*limit)
			defer cancel()
			cmd, stdout, stderr := ch.command(ctx, env(t, append(goEnv(t), "GOCOVERDIR="+t.TempDir())...), "--source")
			err := cmd.Run()
			if ctx.Err() != nil {
				t.Fatalf("still running after %v; stacks:\n%s", 4*limit, stderr)
			}
			// Some chapters log on stderr (07's controller, as
			// sample-controller does); --source never does, but to fail.
			if err != nil || strings.Contains(stderr.String(), "--source") {
				t.Fatalf("%v; stderr:\n%s", err, stderr)
			}
			own, sets := splitSource(stdout.String())
			want, err := os.ReadFile(filepath.Join(root, ch.name, "testdata", ch.name+".golden"))
			if err != nil {
				t.Fatal(err)
			}
			own = regexp.MustCompile(`github.com/\S*/chapters/ch\w+\.`).ReplaceAllString(own, "main.")
			if diff := cmp.Diff(string(want), own); diff != "" {
				t.Errorf("with --source the chapter's own lines differ from its golden file (-want +got):\n%s", diff)
			}
			got := "# go run ./" + ch.name + " --source: the client-go functions each step entered, with\n" +
				"# how often; × without a number where that depends on timing (see sourceVaries)\n" +
				sourceSets(ch.name, sets)
			path := filepath.Join(root, ch.name, "testdata", "source.golden")
			if golden.Updating() {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			wantSets, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (UPDATE_GOLDEN=1 go test ./internal/check/reliability -run TestSource writes it)", err)
			}
			if diff := cmp.Diff(string(wantSets), got); diff != "" {
				t.Errorf("the functions the steps entered differ from %s (-want +got):\n%s", path, diff)
			}
		})
	}
}

// goEnv is where the go command keeps modules and builds, as this
// process's environment says: env gives a chapter a HOME of its own, and
// --source reads client-go's source in the module cache and runs go tool
// covdata, which must not be built again for every run.
var goEnv = func(t *testing.T) []string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOMODCACHE", "GOCACHE", "GOPATH").Output()
	if err != nil {
		t.Fatal(err)
	}
	v := lines(string(out))
	if len(v) != 3 {
		t.Fatalf("go env: %q", out)
	}
	return []string{"GOMODCACHE=" + v[0], "GOCACHE=" + v[1], "GOPATH=" + v[2]}
}

// entered is a function a step entered, as --source printed it.
type entered struct {
	part, name string
	count      string // "3"
}

// stepSet is what one step entered: the step is its heading, or "" for
// what ran before the first heading.
type stepSet struct {
	step  string
	funcs []entered
}

// sourceHeading and sourceLine are --source's lines (source.Format).
var (
	stepHeading   = regexp.MustCompile(`^(Step \d+[a-z]?\.|Setup\.)`)
	sourceHeading = regexp.MustCompile(`^  --source: this step entered \d+ functions of `)
	sourceLine    = regexp.MustCompile(`^    (\S.*?)?\s+(\S+)\s+×(\d+)\s+\S+:\d+$`)
)

// splitSource splits a --source run's output into the chapter's own
// lines and the steps' reports.
func splitSource(out string) (own string, sets []stepSet) {
	var b strings.Builder
	step, part, in := "", "", false
	for _, l := range lines(out) {
		switch {
		case sourceHeading.MatchString(l):
			sets = append(sets, stepSet{step: step})
			in, part = true, ""
			continue
		case in && strings.HasPrefix(l, "    "):
			m := sourceLine.FindStringSubmatch(l)
			if m == nil {
				sets[len(sets)-1].funcs = append(sets[len(sets)-1].funcs, entered{name: "unparsed: " + l})
				continue
			}
			if m[1] != "" {
				part = m[1]
			}
			sets[len(sets)-1].funcs = append(sets[len(sets)-1].funcs, entered{part: part, name: m[2], count: m[3]})
			continue
		}
		in = false
		if stepHeading.MatchString(l) {
			step = l
		}
		b.WriteString(l + "\n")
	}
	return b.String(), sets
}

// sourceSets is what source.golden pins of a run's reports: per step,
// the functions by part, with their counts, but for sourceVaries.
func sourceSets(chapter string, sets []stepSet) string {
	var b strings.Builder
	for _, s := range sets {
		step := s.step
		if step == "" {
			step = "(before the first step)"
		}
		b.WriteString(step + "\n")
		last := ""
		for _, f := range s.funcs {
			v, ok := varies(chapter, s.step, f.name)
			if ok && v.drop {
				continue
			}
			part := ""
			if f.part != last {
				part, last = f.part, f.part
			}
			count := "×" + f.count
			if ok {
				count = "×"
			}
			fmt.Fprintf(&b, "  %-15s %s %s\n", part, f.name, count)
		}
	}
	return b.String()
}

// vary is a function whose count, or whether it runs at all, depends on
// timing: which goroutine ran first, or a timer.
type vary struct {
	chapter string // "" for every chapter
	step    string // a heading's prefix ("Step 3."); "" for every step
	name    string // the function, as --source names it
	drop    bool   // whether it ran at all varies (else only its count)
	why     string
}

// sourceVaries is every function whose place in source.golden depends
// on timing, and why; nothing else.
var sourceVaries = []vary{}

func varies(chapter, step, name string) (vary, bool) {
	for _, v := range sourceVaries {
		if (v.chapter == "" || v.chapter == chapter) && strings.HasPrefix(step, v.step) && v.name == name {
			return v, true
		}
	}
	return vary{}, false
}
