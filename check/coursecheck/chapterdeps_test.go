package coursecheck

import (
	"go/build"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestChapterdepsComplete: check/chapterdeps imports exactly
// the packages that the chapters import, code and tests, with and
// without -tags solution. A chapter that imports a new package needs it
// there too, or the checks' go commands may compile it a second time.
// (It is here, not in chapterdeps, whose test binary would link every
// package a chapter imports to run it.)
func TestChapterdepsComplete(t *testing.T) {
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	need := map[string][]string{} // import path → the chapters that import it
	for _, e := range entries {
		if !e.IsDir() || !regexp.MustCompile(`^\d\d-[a-z0-9-]+$`).MatchString(e.Name()) {
			continue
		}
		for _, tags := range [][]string{nil, {"solution"}} {
			ctx := build.Default
			ctx.BuildTags = tags
			pkg, err := ctx.ImportDir(filepath.Join(root, e.Name()), 0)
			if err != nil {
				t.Fatal(err)
			}
			for _, path := range slices.Concat(pkg.Imports, pkg.TestImports, pkg.XTestImports) {
				if !slices.Contains(need[path], e.Name()) {
					need[path] = append(need[path], e.Name())
				}
			}
		}
	}
	f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(root, "check", "chapterdeps", "chapterdeps.go"), nil, parser.ImportsOnly)
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, imp := range f.Imports {
		path, _ := strconv.Unquote(imp.Path.Value)
		have[path] = true
		if need[path] == nil {
			t.Errorf("chapterdeps.go imports %s, which no chapter imports: remove it", path)
		}
	}
	for path, chs := range need {
		if !have[path] {
			t.Errorf("%s imports %s: add _ %q to chapterdeps.go", strings.Join(chs, ", "), path, path)
		}
	}
	if len(need) == 0 {
		t.Fatal("found no chapter imports")
	}
}
