// Package golden compares what a chapter printed with its pinned output in
// testdata/<name>.golden, and rewrites those files on request.
//
// To regenerate every golden file of the course:
//
//	UPDATE_GOLDEN=1 go test ./...
//
// or, for one package, go test ./01-watch -update.
package golden

import (
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// update is the one switch that rewrites golden files. The environment
// variable exists because `go test ./... -update` would hand the flag to
// packages that do not define it.
var update = flag.Bool("update", false, "rewrite testdata/*.golden with the current output")

// Updating reports whether golden files are being rewritten in this run.
func Updating() bool {
	return *update || os.Getenv("UPDATE_GOLDEN") != ""
}

// Assert compares got with testdata/<name>.golden. With -update (or
// UPDATE_GOLDEN=1) it writes got to that file instead.
func Assert(t testing.TB, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if Updating() {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s", path)
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run UPDATE_GOLDEN=1 go test ./... to create it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("output differs from %s (-want +got):\n%s\n"+
			"If the change is intended, regenerate with UPDATE_GOLDEN=1 go test ./... and review the diff.",
			path, diff)
	}
}

// AssertQuoted checks that the chapter README quotes only what the
// chapter prints: every ```text block of README.md appears verbatim in
// testdata/<name>.golden, in the README's order, and there is at least
// one. So the lesson's quoted output cannot drift from the program.
func AssertQuoted(t testing.TB, name string) {
	t.Helper()
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join("testdata", name+".golden"))
	if err != nil {
		t.Fatal(err)
	}
	const open, fence = "```text\n", "```"
	rest, golden := string(readme), string(want)
	blocks := 0
	for {
		_, after, ok := strings.Cut(rest, open)
		if !ok {
			break
		}
		block, tail, ok := strings.Cut(after, fence)
		if !ok {
			t.Fatal("README.md: unterminated ```text block")
		}
		blocks++
		i := strings.Index(golden, block)
		if i < 0 {
			t.Errorf("README.md's output block %d is not in testdata/%s.golden (or not in order); "+
				"quote the golden file again:\n%s", blocks, name, block)
			break
		}
		golden, rest = golden[i+len(block):], tail
	}
	if blocks == 0 {
		t.Errorf("README.md quotes no output: add a ```text block from testdata/%s.golden", name)
	}
}

// AssertCodeQuoted checks that every ```go block of the chapter's
// README.md is a region of the chapter's own code, byte for byte, so the
// lesson cannot show code that the chapter does not run. A region is
// marked in a .go file of the chapter's folder by a line `// !+name`
// before it and `// !-name` after it; its text is the lines between,
// without the marker lines of regions nested in it, and without the
// indentation (tabs) that all its lines share; trailing blank lines
// are not compared. A region may also come from one of the folders in
// also: a package in internal/ holding what the chapter teaches and a
// later chapter reuses (internal/cachecopy).
func AssertCodeQuoted(t testing.TB, also ...string) {
	t.Helper()
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	regions, err := Regions(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range also {
		more, err := Regions(dir)
		if err != nil {
			t.Fatal(err)
		}
		for name, r := range more {
			regions[dir+":"+name] = r
		}
	}
	const open, fence = "```go\n", "```"
	rest := string(readme)
	for n := 1; ; n++ {
		_, after, ok := strings.Cut(rest, open)
		if !ok {
			break
		}
		block, tail, ok := strings.Cut(after, fence)
		if !ok {
			t.Fatal("README.md: unterminated ```go block")
		}
		rest = tail
		if !slices.ContainsFunc(slices.Collect(maps.Values(regions)), func(r string) bool {
			return trimBlank(r) == trimBlank(block)
		}) {
			t.Errorf("README.md's go block %d is not a marked region of the chapter's code "+
				"(mark it with // !+name … // !-name and quote it byte for byte):\n%s", n, block)
		}
	}
}

// Regions returns the marked regions of the .go files in dir, by name.
func Regions(dir string) (map[string]string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	regions := map[string]string{}
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		open := map[string][]string{} // region name -> lines so far
		var order []string
		for i, line := range strings.SplitAfter(string(src), "\n") {
			mark := strings.TrimSpace(line)
			if name, ok := strings.CutPrefix(mark, "// !+"); ok {
				if _, dup := regions[name]; dup || open[name] != nil {
					return nil, fmt.Errorf("%s:%d: region %q marked twice", f, i+1, name)
				}
				open[name] = []string{}
				order = append(order, name)
				continue
			}
			if name, ok := strings.CutPrefix(mark, "// !-"); ok {
				lines, isOpen := open[name]
				if !isOpen {
					return nil, fmt.Errorf("%s:%d: region %q ends but never began", f, i+1, name)
				}
				regions[name] = dedent(lines)
				delete(open, name)
				continue
			}
			for name := range open {
				open[name] = append(open[name], line)
			}
		}
		for _, name := range order {
			if _, left := open[name]; left {
				return nil, fmt.Errorf("%s: region %q never ends", f, name)
			}
		}
	}
	return regions, nil
}

// trimBlank drops trailing blank lines: a region that ends with a whole
// func often has one before its end marker, which a README need not show.
func trimBlank(s string) string { return strings.TrimRight(s, "\n") + "\n" }

// dedent removes the leading tabs that all non-empty lines share.
func dedent(lines []string) string {
	common := -1
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		n := len(l) - len(strings.TrimLeft(l, "\t"))
		if common < 0 || n < common {
			common = n
		}
	}
	var b strings.Builder
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			b.WriteString(strings.TrimLeft(l, "\t"))
			continue
		}
		b.WriteString(l[max(common, 0):])
	}
	return b.String()
}
