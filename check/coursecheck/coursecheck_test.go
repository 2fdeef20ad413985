package coursecheck

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

const root = "../.."

// modules are the repositories the course links into, by module path.
var modules = map[string]string{
	"client-go":    "k8s.io/client-go",
	"apimachinery": "k8s.io/apimachinery",
	"api":          "k8s.io/api",
	// kubernetes-sigs/controller-runtime, which 11-controller-runtime links.
	"controller-runtime": "sigs.k8s.io/controller-runtime",
	// kubernetes/code-generator, whose generators 13-generated runs.
	"code-generator": "k8s.io/code-generator",
}

// link matches a Markdown link to a pinned source file, with its text:
// [text](https://github.com/kubernetes/client-go/blob/v0.37.2/path#L10-L20)
var link = regexp.MustCompile(`\[([^\]]*)\]\(https://github\.com/kubernetes(?:-sigs)?/(client-go|apimachinery|api|controller-runtime|code-generator)/blob/([^/]+)/([^)#\s]+)(?:#L(\d+)(?:-L(\d+))?)?\)`)

// bareLink matches links in Go comments (no Markdown text).
var bareLink = regexp.MustCompile(`https://github\.com/kubernetes(?:-sigs)?/(client-go|apimachinery|api|controller-runtime|code-generator)/blob/([^/\s]+)/([^)#\s]+)(?:#L(\d+)(?:-L(\d+))?)?`)

// courseFiles returns the READMEs and Go files of the course.
func courseFiles(t *testing.T) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") && path != root) {
			return filepath.SkipDir
		}
		if d.IsDir() && d.Name() == "vendor" {
			return filepath.SkipDir // other modules' code, if vendored
		}
		if d.IsDir() && d.Name() == "coursecheck" {
			return filepath.SkipDir // its own examples are not links
		}
		if !d.IsDir() && (strings.HasSuffix(path, ".md") || strings.HasSuffix(path, ".go")) {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// moduleDir finds a module's source in the module cache, at the version
// go.mod requires.
func moduleDir(t *testing.T, module string) (dir, version string) {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}} {{.Version}}", module).Output()
	if err != nil {
		t.Fatalf("go list -m %s: %v", module, err)
	}
	f := strings.Fields(string(out))
	if len(f) != 2 {
		t.Fatalf("go list -m %s: %q", module, out)
	}
	return f[0], f[1]
}

func readLines(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	var lines []string
	s := bufio.NewScanner(f)
	s.Buffer(make([]byte, 0, 1<<20), 1<<22)
	for s.Scan() {
		lines = append(lines, s.Text())
	}
	return lines
}

// symbolOf returns the identifier a link's text names, if it names one:
// "`cache.NewListWatchFromClient`" → "NewListWatchFromClient",
// "`WatchWithContext`" → "WatchWithContext", "[reflector.go]" → "".
func symbolOf(text string) string {
	m := regexp.MustCompile("^`([^`]+)`$").FindStringSubmatch(strings.TrimSpace(text))
	if m == nil {
		return ""
	}
	s := m[1]
	if i := strings.IndexAny(s, "(["); i >= 0 {
		s = s[:i]
	}
	if i := strings.LastIndex(s, "."); i >= 0 {
		s = s[i+1:]
	}
	if !regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`).MatchString(s) {
		return ""
	}
	return s
}

// TestSourceLinks: every link into client-go, apimachinery or api names
// the version go.mod pins, a file that exists at that version, and lines
// within the file; where the link text is a `Symbol`, the symbol is on the
// linked line or within a few lines of it.
func TestSourceLinks(t *testing.T) {
	type mod struct{ dir, version string }
	mods := map[string]mod{}
	for repo, path := range modules {
		dir, version := moduleDir(t, path)
		mods[repo] = mod{dir, version}
	}
	const near = 3
	checked := 0
	for _, file := range courseFiles(t) {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		text := string(data)
		type hit struct{ text, repo, tag, path, from, to string }
		var hits []hit
		for _, m := range link.FindAllStringSubmatch(text, -1) {
			hits = append(hits, hit{m[1], m[2], m[3], m[4], m[5], m[6]})
		}
		if strings.HasSuffix(file, ".go") {
			for _, m := range bareLink.FindAllStringSubmatch(text, -1) {
				hits = append(hits, hit{"", m[1], m[2], m[3], m[4], m[5]})
			}
		}
		rel, _ := filepath.Rel(root, file)
		for _, h := range hits {
			checked++
			md := mods[h.repo]
			where := rel + ": " + h.repo + "/" + h.path
			if h.tag != md.version {
				t.Errorf("%s: links tag %s, go.mod pins %s", where, h.tag, md.version)
				continue
			}
			if strings.HasSuffix(h.path, "/") || h.path == "" {
				continue
			}
			lines := readLines(t, filepath.Join(md.dir, h.path))
			if lines == nil {
				if _, err := os.Stat(filepath.Join(md.dir, h.path)); err != nil {
					t.Errorf("%s: no such file at %s", where, h.tag)
				}
				continue
			}
			if h.from == "" {
				continue
			}
			from, _ := strconv.Atoi(h.from)
			to := from
			if h.to != "" {
				to, _ = strconv.Atoi(h.to)
			}
			if from < 1 || to < from || to > len(lines) {
				t.Errorf("%s#L%s: lines %d-%d outside the file's %d lines", where, h.from, from, to, len(lines))
				continue
			}
			sym := symbolOf(h.text)
			if sym == "" {
				continue
			}
			lo, hi := max(1, from-near), min(len(lines), to+near)
			found := false
			for _, l := range lines[lo-1 : hi] {
				if regexp.MustCompile(`\b` + regexp.QuoteMeta(sym) + `\b`).MatchString(l) {
					found = true
					break
				}
			}
			if !found {
				t.Errorf("%s#L%d: link text names %s, not found on lines %d-%d", where, from, sym, lo, hi)
			}
		}
	}
	if checked == 0 {
		t.Fatal("no source links found: the pattern is broken")
	}
	t.Logf("%d source links checked", checked)
}

// TestNoUnpinnedLinks: no link into the Kubernetes repositories points at
// a branch (master, main) instead of a tag.
func TestNoUnpinnedLinks(t *testing.T) {
	unpinned := regexp.MustCompile(`github\.com/kubernetes/[a-z-]+/(blob|tree)/(master|main)/`)
	for _, file := range courseFiles(t) {
		data, _ := os.ReadFile(file)
		if loc := unpinned.FindString(string(data)); loc != "" {
			rel, _ := filepath.Rel(root, file)
			t.Errorf("%s: unpinned link %s...", rel, loc)
		}
	}
}

// chapterDir matches a chapter folder name: NN-topic.
var chapterDir = regexp.MustCompile(`^\d\d-[a-z0-9-]+$`)

// TestChaptersComplete checks the course both ways: every chapter folder
// has its program, lesson, test and golden file, and the README names the
// golden file's chapter; every golden file belongs to a chapter; and the
// course README lists every chapter and no chapter that does not exist.
func TestChaptersComplete(t *testing.T) {
	chapters := chapters(t)
	if len(chapters) == 0 {
		t.Fatal("no chapters found")
	}
	for _, ch := range chapters {
		for _, f := range []string{"main.go", "main_test.go", "README.md", "testdata/" + ch + ".golden"} {
			if _, err := os.Stat(filepath.Join(root, ch, f)); err != nil {
				t.Errorf("%s has no %s", ch, f)
			}
		}
		readme, _ := os.ReadFile(filepath.Join(root, ch, "README.md"))
		if !strings.Contains(string(readme), "```mermaid") {
			t.Errorf("%s/README.md has no mermaid diagram", ch)
		}
		if !strings.Contains(string(readme), "go run ./"+ch) {
			t.Errorf("%s/README.md does not show go run ./%s", ch, ch)
		}
		test, _ := os.ReadFile(filepath.Join(root, ch, "main_test.go"))
		if !regexp.MustCompile(`chaptertest\.Golden(InMemory|With)?\(t, "` + ch + `"|golden\.Assert\(t, "` + ch + `"`).Match(test) {
			t.Errorf("%s/main_test.go does not compare with testdata/%s.golden", ch, ch)
		}
		if !strings.Contains(string(test), `chaptertest.README(t, "`+ch+`")`) && !strings.Contains(string(test), `golden.AssertQuoted(t, "`+ch+`")`) {
			t.Errorf("%s/main_test.go does not check that README.md quotes the output and the code", ch)
		}
	}

	goldens, err := filepath.Glob(filepath.Join(root, "*", "testdata", "*.golden"))
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range goldens {
		dir := filepath.Base(filepath.Dir(filepath.Dir(g)))
		name := strings.TrimSuffix(filepath.Base(g), ".golden")
		// <chapter>.golden and its stream <chapter>.trace.golden
		// (chaptertest.Golden asserts both), or <chapter>-<variant>.golden
		// that the chapter's own test asserts (12's run without its
		// feature gate).
		test, _ := os.ReadFile(filepath.Join(root, dir, "main_test.go"))
		variant := strings.HasPrefix(name, dir+"-") && strings.Contains(string(test), `golden.Assert(t, "`+name+`"`)
		stream := name == dir+".trace" && regexp.MustCompile(`chaptertest\.Golden(InMemory|With)?\(t, "`+dir+`"`).Match(test)
		// source.golden: the functions each step entered, which
		// reliability's TestSource pins (--source).
		fromSource := name == "source"
		if !chapterDir.MatchString(dir) || name != dir && !variant && !stream && !fromSource {
			rel, _ := filepath.Rel(root, g)
			t.Errorf("%s belongs to no chapter", rel)
		}
	}

	course, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	listed := regexp.MustCompile(`(?m)^\| \[(\d\d-[a-z0-9-]+)\]\((\d\d-[a-z0-9-]+)/\)`).FindAllStringSubmatch(string(course), -1)
	inREADME := map[string]bool{}
	for _, m := range listed {
		inREADME[m[1]] = true
		if m[1] != m[2] {
			t.Errorf("README.md links chapter %s to %s/", m[1], m[2])
		}
		if _, err := os.Stat(filepath.Join(root, m[1])); err != nil {
			t.Errorf("README.md lists %s, which does not exist", m[1])
		}
	}
	for _, ch := range chapters {
		if !inREADME[ch] {
			t.Errorf("README.md's chapter map does not list %s", ch)
		}
	}
}
