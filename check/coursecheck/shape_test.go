package coursecheck

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// readmeSections is every chapter README's outline (STYLE.md, "A
// chapter's README.md"), the same names in the same order, so that a
// reader finds the same thing in the same place in every chapter.
var readmeSections = []string{
	"What you will learn",
	"Run it",
	"The output, annotated",
	"Walk-through",
	"Diagram",
	"What changed in recent client-go versions",
	"Exercises",
	// Last, so that it stays out of the lesson's way: where to look with
	// --source (issue 34; TestSourceQuoted checks it).
	"What ran (`--source`)",
}

var (
	// splitHeading is a step heading built with +: a line copied from the
	// output could not be found with grep.
	splitHeading = regexp.MustCompile(`"(\\n)*(Step \d+[a-z]?\.|Setup\.)[^"]*"\s*\+`)
	stepN        = regexp.MustCompile(`(?m)^func step\d+\(`)
	heading      = regexp.MustCompile(`(?m)^## (.+)$`)
)

// TestOneChapterShape: the same README sections in every chapter, every
// step heading one string literal, and no step function named stepN. A
// lesson file has no line cap (issue 33: a cap of 450 lines on main.go
// was met by cutting comments, not code); TestLessonShare weighs what
// the lesson files hold instead.
func TestOneChapterShape(t *testing.T) {
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !e.IsDir() || !chapterDir.MatchString(e.Name()) {
			continue
		}
		ch := e.Name()
		readme, err := os.ReadFile(filepath.Join(root, ch, "README.md"))
		if err != nil {
			t.Error(err)
			continue
		}
		var got []string
		for _, m := range heading.FindAllStringSubmatch(string(readme), -1) {
			got = append(got, strings.TrimSpace(m[1]))
		}
		if !slices.Equal(got, readmeSections) {
			t.Errorf("%s/README.md sections are %q, want %q", ch, got, readmeSections)
		}
		files, _ := filepath.Glob(filepath.Join(root, ch, "*.go"))
		for _, f := range files {
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			rel, _ := filepath.Rel(root, f)
			if loc := splitHeading.FindIndex(src); loc != nil {
				t.Errorf("%s: a step heading split with +: %q; write it as one literal", rel, src[loc[0]:loc[1]])
			}
			if stepN.Match(src) {
				t.Errorf("%s: a function named stepN; name each step for its topic", rel)
			}
		}
	}
}

// standardNames are the names of standard packages a chapter imports or
// a reader knows; a chapter names nothing after one (issue 15, "one
// meaning per name"): a variable url hides net/url, one named sort the
// sort package.
var standardNames = map[string]bool{
	"bufio": true, "bytes": true, "cmp": true, "context": true, "errors": true,
	"flag": true, "fmt": true, "http": true, "io": true, "json": true, "log": true,
	"maps": true, "math": true, "net": true, "os": true, "path": true, "rand": true,
	"reflect": true, "regexp": true, "runtime": true, "slices": true, "sort": true,
	"strconv": true, "strings": true, "sync": true, "testing": true, "time": true,
	"unicode": true, "url": true,
}

// TestNoStandardPackageNames: no variable, parameter, field, constant,
// type or function of a chapter is named after a standard package.
func TestNoStandardPackageNames(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(root, "[0-9][0-9]-*", "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, f := range files {
		file, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		check := func(id *ast.Ident) {
			if id != nil && standardNames[id.Name] {
				rel, _ := filepath.Rel(root, fset.Position(id.Pos()).Filename)
				t.Errorf("%s:%d: %q is named after a standard package", rel, fset.Position(id.Pos()).Line, id.Name)
			}
		}
		ast.Inspect(file, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.AssignStmt:
				if n.Tok == token.DEFINE {
					for _, e := range n.Lhs {
						if id, ok := e.(*ast.Ident); ok {
							check(id)
						}
					}
				}
			case *ast.RangeStmt:
				if n.Tok == token.DEFINE {
					for _, e := range []ast.Expr{n.Key, n.Value} {
						if id, ok := e.(*ast.Ident); ok {
							check(id)
						}
					}
				}
			case *ast.ValueSpec:
				for _, id := range n.Names {
					check(id)
				}
			case *ast.Field:
				for _, id := range n.Names {
					check(id)
				}
			case *ast.TypeSpec:
				check(n.Name)
			case *ast.FuncDecl:
				check(n.Name)
			}
			return true
		})
	}
}
