package coursecheck

import (
	"go/ast"
	"go/build"
	"go/build/constraint"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The exercise files of a chapter, and the build constraint each must
// carry: the learner's answers by default, the reference answers only
// with -tags solution. The checks build with both.
var exerciseFiles = []struct{ name, constraint string }{
	{"exercises.go", "!solution"},
	{"exercises_solution.go", "solution"},
	{"exercises_test.go", ""},
}

// chapters lists the chapter folders of the course.
func chapters(t *testing.T) []string {
	t.Helper()
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if e.IsDir() && chapterDir.MatchString(e.Name()) {
			out = append(out, e.Name())
		}
	}
	return out
}

// TestExercisesWired checks the exercise convention the course README
// describes, in every chapter: the three files exist with the right
// build constraints; every function of exercises.go that
// exercises_test.go checks has a reference answer with the same
// signature in exercises_solution.go; and the chapter README says how
// to run the checks and the reference answers.
func TestExercisesWired(t *testing.T) {
	for _, ch := range chapters(t) {
		fset := token.NewFileSet()
		files := map[string]*ast.File{}
		for _, ef := range exerciseFiles {
			path := filepath.Join(root, ch, ef.name)
			f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
			if err != nil {
				t.Errorf("%s: %v", ch, err)
				continue
			}
			files[ef.name] = f
			if got := buildConstraint(f); got != ef.constraint {
				t.Errorf("%s/%s: build constraint %q, want %q",
					ch, ef.name, got, ef.constraint)
			}
		}
		if len(files) != len(exerciseFiles) {
			continue
		}
		// The exercise functions are those of exercises.go that the
		// checks call. A learner's own helpers there are no concern.
		stubs := funcs(files["exercises.go"])
		answers := funcs(files["exercises_solution.go"])
		checked := calledFuncs(files["exercises_test.go"])
		n := 0
		for name, sig := range stubs {
			if !checked[name] {
				continue
			}
			n++
			switch answer, ok := answers[name]; {
			case !ok:
				t.Errorf("%s: exercises_solution.go has no answer for %s", ch, name)
			case answer != sig:
				t.Errorf("%s: %s is (%s) in exercises_solution.go, (%s) in exercises.go",
					ch, name, answer, sig)
			}
		}
		for name := range answers {
			if _, ok := stubs[name]; checked[name] && !ok {
				t.Errorf("%s: exercises_test.go checks %s, which exercises.go does not ask for",
					ch, name)
			}
		}
		if n == 0 {
			t.Errorf("%s: exercises_test.go checks no function of exercises.go", ch)
		}

		readme, _ := os.ReadFile(filepath.Join(root, ch, "README.md"))
		for _, cmd := range []string{
			"go test ./" + ch + " -run Exercise",
			"go test -tags solution ./" + ch + " -run Exercise",
		} {
			if !strings.Contains(string(readme), cmd) {
				t.Errorf("%s/README.md does not show %s", ch, cmd)
			}
		}
	}
	course, _ := os.ReadFile(filepath.Join(root, "README.md"))
	if !strings.Contains(string(course), "-tags solution") {
		t.Error("README.md does not explain the exercises' -tags solution")
	}
}

// TestSolutionsCompile type-checks the reference answers, which the
// default build leaves out: every chapter's package, its tests included,
// as -tags solution selects its files, checked with go/types against the
// compiled export data of its imports (exportData). It catches what go
// vet -tags solution caught here before: an answer, or a test of the
// exercises, that does not compile against the exercise's signatures or
// client-go's API. (go vet ran every dependency's type-check and
// analysis again, with flags go test's vet does not share; vet's own
// checks of the answers are CI's: .ci/run runs go vet -tags solution
// ./..., and go test -tags solution -run Exercise ./... runs them.)
func TestSolutionsCompile(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: not type-checking the reference answers")
	}
	exports, _ := exportData(t)
	ctx := build.Default
	ctx.BuildTags = []string{"solution"}
	for _, ch := range chapters(t) {
		dir := filepath.Join(root, ch)
		pkg, err := ctx.ImportDir(dir, 0)
		if err != nil {
			t.Errorf("%s: %v", ch, err)
			continue
		}
		if !slices.Contains(pkg.GoFiles, "exercises_solution.go") {
			t.Errorf("%s: -tags solution does not select exercises_solution.go", ch)
		}
		fset := token.NewFileSet()
		var files []*ast.File
		for _, name := range slices.Concat(pkg.GoFiles, pkg.TestGoFiles) {
			f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, 0)
			if err != nil {
				t.Errorf("%s: %v", ch, err)
				continue
			}
			files = append(files, f)
		}
		var errs []string
		conf := types.Config{
			Importer: exportImporter(fset, exports),
			Error:    func(err error) { errs = append(errs, err.Error()) },
		}
		_, _ = conf.Check(ch, fset, files, nil)
		if len(errs) > 0 {
			t.Errorf("%s with -tags solution does not compile:\n%s", ch, strings.Join(errs, "\n"))
		}
	}
}

// buildConstraint returns a file's //go:build expression, or "".
func buildConstraint(f *ast.File) string {
	for _, g := range f.Comments {
		if g.Pos() > f.Package {
			break
		}
		for _, c := range g.List {
			if constraint.IsGoBuild(c.Text) {
				expr, err := constraint.Parse(c.Text)
				if err != nil {
					return "invalid: " + c.Text
				}
				return expr.String()
			}
		}
	}
	return ""
}

// funcs maps each top-level function of f to its signature.
func funcs(f *ast.File) map[string]string {
	out := map[string]string{}
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Recv != nil {
			continue
		}
		var b strings.Builder
		for _, field := range fd.Type.Params.List {
			b.WriteString(types.ExprString(field.Type))
			b.WriteString(strings.Repeat(",", max(1, len(field.Names))))
		}
		b.WriteString(" -> ")
		if fd.Type.Results != nil {
			for _, field := range fd.Type.Results.List {
				b.WriteString(types.ExprString(field.Type))
				b.WriteString(strings.Repeat(",", max(1, len(field.Names))))
			}
		}
		out[fd.Name.Name] = b.String()
	}
	return out
}

// calledFuncs returns the names of the functions f calls by plain name.
func calledFuncs(f *ast.File) map[string]bool {
	found := map[string]bool{}
	ast.Inspect(f, func(n ast.Node) bool {
		if c, ok := n.(*ast.CallExpr); ok {
			if id, ok := c.Fun.(*ast.Ident); ok {
				found[id.Name] = true
			}
		}
		return true
	})
	return found
}
