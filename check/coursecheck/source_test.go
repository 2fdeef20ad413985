package coursecheck

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestSourceQuoted checks each chapter README's "what ran" passage
// against what --source pins (testdata/source.golden, written by
// reliability's TestSource): every ```source block is a step heading
// followed by functions that step entered, each under its part, in the
// golden file's order (a passage picks the lines worth reading, so it
// may leave some out), and every chapter has at least one.
func TestSourceQuoted(t *testing.T) {
	for _, ch := range chapters(t) {
		t.Run(ch, func(t *testing.T) {
			readme, err := os.ReadFile(filepath.Join(root, ch, "README.md"))
			if err != nil {
				t.Fatal(err)
			}
			golden, err := os.ReadFile(filepath.Join(root, ch, "testdata", "source.golden"))
			if err != nil {
				t.Fatal(err)
			}
			steps := sourceSteps(string(golden))
			blocks := sourceBlock.FindAllStringSubmatch(string(readme), -1)
			if len(blocks) == 0 {
				t.Fatal("README.md quotes no ```source block of testdata/source.golden")
			}
			for _, b := range blocks {
				quoted := sourceSteps(b[1])
				if len(quoted) != 1 {
					t.Errorf("a ```source block quotes %d steps, want one:\n%s", len(quoted), b[1])
					continue
				}
				q := quoted[0]
				i := slices.IndexFunc(steps, func(s sourceStep) bool { return s.heading == q.heading })
				if i < 0 {
					t.Errorf("%q is no step of testdata/source.golden", q.heading)
					continue
				}
				rest := steps[i].funcs
				for _, f := range q.funcs {
					j := slices.Index(rest, f)
					if j < 0 {
						t.Errorf("%s: %s %s is not in testdata/source.golden (in this order)", q.heading, f[0], f[1])
						break
					}
					rest = rest[j+1:]
				}
			}
		})
	}
}

// sourceBlock is a ```source block of a README.
var sourceBlock = regexp.MustCompile("(?s)```source\n(.*?)```")

// sourceStep is a step of source.golden: its heading and the functions
// it entered, each as {part, name}.
type sourceStep struct {
	heading string
	funcs   [][2]string
}

// sourceSteps reads source.golden's format: a heading line, then
// "  part  name" lines, the part left blank where it is the line
// above's.
func sourceSteps(s string) []sourceStep {
	var steps []sourceStep
	part := ""
	for l := range strings.SplitSeq(s, "\n") {
		switch {
		case l == "" || strings.HasPrefix(l, "#"):
		case !strings.HasPrefix(l, "  "):
			steps = append(steps, sourceStep{heading: l})
			part = ""
		case len(steps) > 0:
			body := strings.TrimPrefix(l, "  ")
			if !strings.HasPrefix(body, " ") {
				// "informer loop" is a part of two words: the name is
				// the last field, the part what comes before it.
				f := strings.Fields(body)
				part, body = strings.Join(f[:len(f)-1], " "), f[len(f)-1]
			}
			steps[len(steps)-1].funcs = append(steps[len(steps)-1].funcs, [2]string{part, strings.TrimSpace(body)})
		}
	}
	return steps
}
