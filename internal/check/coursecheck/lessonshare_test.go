package coursecheck

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/build"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// lessonTarget is the part of a chapter's main.go code lines that
// should be lesson (issue 15, "main.go is the lesson"): most of them.
const lessonTarget = 50

// lessonFloor is, per chapter, the share (percent) its main.go has
// reached: TestLessonShare fails when a change lowers it. Raise a floor
// when a chapter gains; a chapter above lessonTarget needs no entry.
var lessonFloor = map[string]int{
	"01-watch":      38,
	"03-reflector":  31,
	"04-indexer":    43,
	"05-informer":   37,
	"06-factory":    47,
	"07-controller": 31,
	"08-testing":    38,
	"09-metadata":   44,
	"10-lifecycle":  46,
}

// TestLessonShare counts each chapter's main.go the way issue 15 counts
// it, so that the count can be repeated and kept.
//
// A code line is any line but blank lines, comments, the package clause,
// imports and lines of brackets alone (as `} {`). A code line is lesson when it
// names something k8s.io (client-go, api, apimachinery, utils) defines,
// as pods.Create, metav1.ListOptions, list.ResourceVersion or w.Stop do,
// or a variable holding such a thing (the objects the calls act on). It
// is scaffolding when it names nothing of theirs (if err != nil, return
// err, return obj, nil, a call of a course helper, a loop over names),
// when it is a function's signature, or when it is part of a call that
// prints or
// awaits (fmt.Fprint*, the show package, a chapter's print* helpers),
// whatever it prints.
//
// go test -v -run TestLessonShare ./internal/check/coursecheck prints
// the table; LESSON_SHARE=NN-topic lists that chapter's lines, each
// marked L (lesson) or - (scaffolding).
func TestLessonShare(t *testing.T) {
	if testing.Short() {
		t.Skip("type-checks every chapter")
	}
	chs := chapters(t)
	exports := exportData(t, chs)
	var table strings.Builder
	fmt.Fprintf(&table, "%-16s %6s %6s %6s %6s\n", "chapter", "lines", "code", "lesson", "share")
	for _, ch := range chs {
		s, err := lessonShare(filepath.Join(root, ch), exports)
		if err != nil {
			t.Errorf("%s: %v", ch, err)
			continue
		}
		pct := 100 * s.lesson / s.code
		fmt.Fprintf(&table, "%-16s %6d %6d %6d %5d%%\n", ch, s.lines, s.code, s.lesson, pct)
		if floor, ok := lessonFloor[ch]; ok && pct < floor || !ok && 2*s.lesson <= s.code {
			t.Errorf("%s/main.go: %d of %d code lines are lesson (%d%%): not more than half, or below its floor; LESSON_SHARE=%s go test -v -run TestLessonShare lists them",
				ch, s.lesson, s.code, pct, ch)
		}
		if os.Getenv("LESSON_SHARE") == ch {
			t.Logf("%s/main.go:\n%s", ch, strings.Join(s.listing, "\n"))
		}
	}
	t.Logf("main.go, lesson lines of code lines (target: more than %d%%):\n%s", lessonTarget, table.String())
}

type share struct {
	lines, code, lesson int
	listing             []string // each code line, marked
}

// exportData maps each import path the chapters need to its compiled
// export data, as go list -export reports it (from the build cache).
func exportData(t *testing.T, chs []string) map[string]string {
	t.Helper()
	args := []string{"list", "-export", "-deps", "-json=ImportPath,Export"}
	for _, ch := range chs {
		args = append(args, "./"+ch)
	}
	cmd := exec.Command("go", args...)
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.Bytes())
	}
	exports := map[string]string{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p struct{ ImportPath, Export string }
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		exports[p.ImportPath] = p.Export
	}
	return exports
}

// lessonShare type-checks the chapter's package (as built without tags)
// and classifies the code lines of its main.go.
func lessonShare(dir string, exports map[string]string) (share, error) {
	pkg, err := build.ImportDir(dir, 0)
	if err != nil {
		return share{}, err
	}
	fset := token.NewFileSet()
	var files []*ast.File
	var mainFile *ast.File
	for _, name := range pkg.GoFiles {
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.ParseComments)
		if err != nil {
			return share{}, err
		}
		files = append(files, f)
		if name == "main.go" {
			mainFile = f
		}
	}
	if mainFile == nil {
		return share{}, fmt.Errorf("no main.go")
	}
	info := &types.Info{Uses: map[*ast.Ident]types.Object{}, Defs: map[*ast.Ident]types.Object{}}
	conf := types.Config{Importer: importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		if exports[path] == "" {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(exports[path])
	})}
	if _, err := conf.Check(pkg.ImportPath, fset, files, info); err != nil {
		return share{}, err
	}
	src, err := os.ReadFile(filepath.Join(dir, "main.go"))
	if err != nil {
		return share{}, err
	}
	lines := strings.Split(string(src), "\n")
	line := func(p token.Pos) int { return fset.Position(p).Line }

	// Lines that are not code: comments, the package clause, imports.
	notCode := map[int]bool{line(mainFile.Package): true}
	for _, cg := range mainFile.Comments {
		for _, c := range cg.List {
			if strings.TrimSpace(lines[line(c.Pos())-1]) == strings.TrimSpace(c.Text) || strings.HasPrefix(strings.TrimSpace(lines[line(c.Pos())-1]), "/*") {
				for l := line(c.Pos()); l <= line(c.End()); l++ {
					notCode[l] = true
				}
			}
		}
	}
	for _, d := range mainFile.Decls {
		if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.IMPORT {
			for l := line(g.Pos()); l <= line(g.End()); l++ {
				notCode[l] = true
			}
		}
	}
	// Lines a printing call spans, and the lines of function signatures.
	printing := map[int]bool{}
	lesson := map[int]bool{}
	calls := map[int]bool{} // a client-go call, even one whose result is printed
	ast.Inspect(mainFile, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.CallExpr:
			if id := callee(n); id != nil && info.Uses[id] != nil && fromKubernetes(info.Uses[id]) {
				calls[line(id.Pos())] = true
			}
			if prints(n, info) {
				for l := line(n.Pos()); l <= line(n.End()); l++ {
					printing[l] = true
				}
			}
		case *ast.ReturnStmt:
			// return err, return obj, nil: plumbing, unless it returns
			// what a client-go call returns (return pods.Delete(...)).
			if !callsKubernetes(n, info) {
				for l := line(n.Pos()); l <= line(n.End()); l++ {
					printing[l] = true
				}
			}
		case *ast.FuncDecl:
			for l := line(n.Pos()); l <= line(n.Type.End()); l++ {
				printing[l] = true // a signature: not lesson either
			}
		case *ast.Ident:
			if obj := info.Uses[n]; obj != nil && (fromKubernetes(obj) || holdsKubernetes(obj)) {
				lesson[line(n.Pos())] = true
			}
			if obj := info.Defs[n]; obj != nil && holdsKubernetes(obj) {
				lesson[line(n.Pos())] = true
			}
		}
		return true
	})
	s := share{lines: len(lines)}
	if lines[len(lines)-1] == "" {
		s.lines--
	}
	for i, text := range lines {
		l := i + 1
		code := strings.TrimSpace(text)
		if code == "" || notCode[l] || strings.Trim(code, "{}()[],; ") == "" {
			continue
		}
		s.code++
		mark := "-"
		if calls[l] || lesson[l] && !printing[l] {
			s.lesson++
			mark = "L"
		}
		s.listing = append(s.listing, fmt.Sprintf("%s %4d  %s", mark, l, code))
	}
	return s, nil
}

// fromKubernetes reports whether obj is defined by a k8s.io module: a
// package name itself does not count, what it names does.
func fromKubernetes(obj types.Object) bool {
	if _, ok := obj.(*types.PkgName); ok || obj.Pkg() == nil {
		return false
	}
	return strings.HasPrefix(obj.Pkg().Path(), "k8s.io/")
}

// callee is the name a call calls by (f in f(), Get in x.Get()), or nil.
func callee(call *ast.CallExpr) *ast.Ident {
	switch f := call.Fun.(type) {
	case *ast.Ident:
		return f
	case *ast.SelectorExpr:
		return f.Sel
	}
	return nil
}

// callsKubernetes reports whether n calls a function or method that
// k8s.io defines.
func callsKubernetes(n ast.Node, info *types.Info) bool {
	found := false
	ast.Inspect(n, func(n ast.Node) bool {
		if call, ok := n.(*ast.CallExpr); ok {
			if id := callee(call); id != nil && info.Uses[id] != nil && fromKubernetes(info.Uses[id]) {
				found = true
			}
		}
		return !found
	})
	return found
}

// holdsKubernetes reports whether obj is a variable holding something
// of a type k8s.io defines (a pod, a watch, a list of events): the
// objects client-go's calls act on.
func holdsKubernetes(obj types.Object) bool {
	v, ok := obj.(*types.Var)
	if !ok || v.IsField() {
		return false
	}
	t := v.Type()
	for {
		switch u := t.(type) {
		case *types.Pointer:
			t = u.Elem()
			continue
		case *types.Slice:
			t = u.Elem()
			continue
		case *types.Map:
			t = u.Elem()
			continue
		}
		break
	}
	named, ok := t.(*types.Named)
	return ok && named.Obj().Pkg() != nil && strings.HasPrefix(named.Obj().Pkg().Path(), "k8s.io/")
}

// prints reports whether call only prints or awaits: fmt's printers, the
// course's show package (but for what returns an object, as GatedPod),
// or a chapter function named print*.
func prints(call *ast.CallExpr, info *types.Info) bool {
	id := callee(call)
	if id == nil {
		return false
	}
	obj := info.Uses[id]
	if obj == nil || obj.Pkg() == nil {
		return false
	}
	switch path := obj.Pkg().Path(); {
	case path == "fmt":
		return strings.HasPrefix(obj.Name(), "Fprint") || strings.HasPrefix(obj.Name(), "Print")
	case strings.HasSuffix(path, "/internal/show"):
		// Printing and awaiting; not what builds an object (GatedPod).
		sig, ok := obj.Type().(*types.Signature)
		return !ok || sig.Results().Len() == 0 || !holdsKubernetes(sig.Results().At(0))
	default:
		return strings.HasPrefix(obj.Name(), "print")
	}
}
