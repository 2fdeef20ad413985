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
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
)

// lessonTarget is the part (percent) of a chapter's lesson code lines
// that must be lesson: issue 15 asked for most of them, issue 25 for at
// least 55% once a call's own error check counts with the call.
const lessonTarget = 55

// lessonFloor is, per chapter, the share (percent) its lesson files
// have reached: TestLessonShare fails when a change lowers it (a
// ratchet). Raise a floor when a chapter gains; a chapter at
// lessonTarget needs no entry, since the target holds for every chapter.
//
// Until issue 33 the floors were main.go's alone; they were recounted
// over all of each chapter's lesson files when the count changed, and
// again when issue 33 taught the counter what 04 and 08 showed it did
// not see: an IndexFunc's check of the object client-go hands it and
// its answer read from the object, a k8s.io map or slice built in place
// (cache.Indexers{…}, []*corev1.Pod{…}), and what a README quotes (08's
// appCounter, the plain Go under test, and its awaits). Every chapter
// is at lessonTarget or above since; the floors are where each stood.
var lessonFloor = map[string]int{
	"01-watch":              63,
	"02-deltafifo":          61,
	"03-reflector":          61,
	"04-indexer":            59,
	"05-informer":           61,
	"06-factory":            64,
	"07-controller":         61,
	"08-testing":            60,
	"09-metadata":           66,
	"10-lifecycle":          66,
	"11-controller-runtime": 69,
	"12-scale":              60,
	"13-generated":          69,
}

var lessonReferences = []struct{ pkg, file string }{
	{"k8s.io/client-go/examples/workqueue", "main.go"},
	{"k8s.io/client-go/examples/create-update-delete-deployment", "main.go"},
}

// isLessonFile reports whether name, a Go file of a chapter's package
// as built without tags, is one of its lesson files (STYLE.md, "A
// chapter's lesson files"): every such file but observe.go, which holds
// what only shows the lesson, and exercises*.go, the reader's to fill
// in. Test files are not in the package as built, so never counted.
func isLessonFile(name string) bool {
	return name != "observe.go" && !strings.HasPrefix(name, "exercises")
}

// TestLessonShare counts each chapter's lesson files (isLessonFile) the
// way issue 15 counts them, so that the count can be repeated and kept:
// main.go and every other file the lesson is split into (issue 33), all
// counted as one.
//
// A code line is any line but blank lines, comments, the package clause,
// imports, lines of brackets alone (as `} {`) and the lines a multi-line
// string literal spans after its first (data, as 09's pod in JSON). A code line is lesson when it
// names something k8s.io (client-go, api, apimachinery, utils) defines,
// as pods.Create, metav1.ListOptions, list.ResourceVersion or w.Stop do,
// or a variable holding such a thing (the objects the calls act on); a
// call of a lesson file's function that itself calls client-go (setRunning,
// p.stop) counts as the client-go call it is. It is scaffolding when it
// names nothing of theirs (if err != nil, a call of a helper in
// observe.go, a loop over names), when it is a function's signature, a return
// of values already made (return err, return obj, nil; but not return
// pods.Delete(...) or return cache.ResourceEventHandlerFuncs{...}), or
// part of a call that prints or awaits (fmt.Fprint*, the show package,
// a chapter's print* helpers), whatever it prints. A client-go call's
// own error check counts with the call (issue 25): the lines of
// `if err != nil { return … }` right after a statement that calls
// client-go and assigns err, or of `if x, err := call(); err != nil {
// return … }`, or of `if !cache.WaitFor(…) { return … }`, are lesson, since client-go's examples handle errors the
// same way and the check is part of calling it; so are the lines of
// `if !ok { return … }` after `p, ok := obj.(*corev1.Pod)`, the check
// an IndexFunc or a handler makes of what client-go hands it. A return
// that reads a field of such a variable (return p.Labels["app"]) is
// lesson, outside fmt's calls; every line of a k8s.io value built in
// place is (a map's or a slice's entries as a struct's fields); and so
// is what the chapter's README quotes (between `// !+name` and
// `// !-name`), where it neither prints nor is a signature: the README
// shows it to the reader as the lesson.
//
// go test -v -run TestLessonShare ./check/coursecheck prints
// the table; LESSON_SHARE=NN-topic lists that chapter's lines, each
// marked L (lesson) or - (scaffolding), file by file.
func TestLessonShare(t *testing.T) {
	if testing.Short() {
		t.Skip("type-checks every chapter")
	}
	chs := chapters(t)
	exports, dirs := exportData(t)
	var table strings.Builder
	fmt.Fprintf(&table, "%-42s %6s %6s %6s %6s\n", "chapter (lesson files)", "lines", "code", "lesson", "share")
	for _, ch := range chs {
		s, err := lessonShare(filepath.Join(root, ch), exports)
		if err != nil {
			t.Errorf("%s: %v", ch, err)
			continue
		}
		pct := 100 * s.lesson / s.code
		fmt.Fprintf(&table, "%-42s %6d %6d %6d %5d%%\n", fmt.Sprintf("%s (%d)", ch, s.files), s.lines, s.code, s.lesson, pct)
		if floor, ok := lessonFloor[ch]; ok && pct < floor || !ok && pct < lessonTarget {
			t.Errorf("%s: %d of %d code lines of its lesson files are lesson (%d%%): under %d%%, or below its floor; LESSON_SHARE=%s go test -v -run TestLessonShare lists them",
				ch, s.lesson, s.code, pct, lessonTarget, ch)
		}
		if os.Getenv("LESSON_SHARE") == ch {
			t.Logf("%s, its lesson files:\n%s", ch, strings.Join(s.listing, "\n"))
		}
	}
	fmt.Fprintf(&table, "for comparison, client-go v0.37.2's own examples:\n")
	for _, ref := range lessonReferences {
		s, err := lessonShareOf(dirs[ref.pkg], func(name string) bool { return name == ref.file }, exports)
		if err != nil {
			t.Errorf("%s: %v", ref.pkg, err)
			continue
		}
		name := strings.TrimPrefix(ref.pkg, "k8s.io/client-go/")
		fmt.Fprintf(&table, "%-42s %6d %6d %6d %5d%%\n", name, s.lines, s.code, s.lesson, 100*s.lesson/s.code)
	}
	t.Logf("lesson files, lesson lines of code lines (target: at least %d%%):\n%s", lessonTarget, table.String())
}

type share struct {
	files, lines, code, lesson int
	listing                    []string // each code line, marked
}

// exportData maps each import path the chapters and lessonReferences
// need to its compiled export data, as go list -export reports it (from
// the build cache), and each package to its directory. It asks for the
// dependencies of check/chapterdeps, which imports every package
// the chapters import, not for the chapters themselves: the chapters are
// type-checked here from source (and with -tags solution too), so
// compiling them would be wasted. This test package imports chapterdeps,
// so go test has compiled all of it before this runs: go list compiles
// only lessonReferences' two examples. One go list serves every test.
func exportData(t *testing.T) (exports, dirs map[string]string) {
	t.Helper()
	exportsOnce.Do(func() {
		pkgs := []string{"./check/chapterdeps"}
		for _, ref := range lessonReferences {
			pkgs = append(pkgs, ref.pkg)
		}
		exportsOf, dirsOf, exportsErr = goListExport(pkgs)
	})
	if exportsErr != nil {
		t.Fatal(exportsErr)
	}
	return exportsOf, dirsOf
}

// goListFlags are the build flags this test binary was built with that
// change how packages compile (race_test.go), so that go list asks for
// the compiled packages go test made, not others.
var goListFlags []string

var (
	exportsOnce       sync.Once
	exportsOf, dirsOf map[string]string
	exportsErr        error
)

func goListExport(pkgs []string) (exports, dirs map[string]string, err error) {
	args := slices.Concat([]string{"list", "-export", "-deps", "-json=ImportPath,Export,Dir"}, goListFlags, pkgs)
	cmd := exec.Command("go", args...)
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, nil, fmt.Errorf("go list: %v\n%s", err, stderr.Bytes())
	}
	exports, dirs = map[string]string{}, map[string]string{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p struct{ ImportPath, Export, Dir string }
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			return nil, nil, err
		}
		exports[p.ImportPath] = p.Export
		dirs[p.ImportPath] = p.Dir
	}
	return exports, dirs, nil
}

// exportImporter imports packages from the export data exportData found.
func exportImporter(fset *token.FileSet, exports map[string]string) types.Importer {
	return importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		if exports[path] == "" {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(exports[path])
	})
}

// lessonShare type-checks the chapter's package (as built without tags)
// and classifies the code lines of its lesson files.
func lessonShare(dir string, exports map[string]string) (share, error) {
	return lessonShareOf(dir, isLessonFile, exports)
}

// lessonShareOf classifies the code lines of the files of the package
// main in dir that counted reports true for, and sums them.
func lessonShareOf(dir string, counted func(name string) bool, exports map[string]string) (share, error) {
	pkg, err := build.ImportDir(dir, 0)
	if err != nil {
		return share{}, err
	}
	fset := token.NewFileSet()
	var files, lessonFiles []*ast.File
	var names []string
	for _, name := range pkg.GoFiles {
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.ParseComments)
		if err != nil {
			return share{}, err
		}
		files = append(files, f)
		if counted(name) {
			lessonFiles = append(lessonFiles, f)
			names = append(names, name)
		}
	}
	if len(lessonFiles) == 0 {
		return share{}, fmt.Errorf("no lesson file in %s", dir)
	}
	info := &types.Info{
		Uses:  map[*ast.Ident]types.Object{},
		Defs:  map[*ast.Ident]types.Object{},
		Types: map[ast.Expr]types.TypeAndValue{},
	}
	conf := types.Config{Importer: exportImporter(fset, exports)}
	// Checked under a path outside k8s.io, so that what the files
	// themselves define never counts as k8s.io's (client-go's examples
	// are k8s.io/...).
	if _, err := conf.Check("lessonshare/"+filepath.Base(dir), fset, files, info); err != nil {
		return share{}, err
	}
	callsClientGo := lessonFuncs(lessonFiles, info)
	var sum share
	for i, f := range lessonFiles {
		s, err := classify(fset, f, filepath.Join(dir, names[i]), info, callsClientGo)
		if err != nil {
			return share{}, err
		}
		sum.files++
		sum.lines += s.lines
		sum.code += s.code
		sum.lesson += s.lesson
		if len(lessonFiles) > 1 {
			sum.listing = append(sum.listing, names[i]+":")
		}
		sum.listing = append(sum.listing, s.listing...)
	}
	return sum, nil
}

// classify classifies the code lines of one lesson file, whose package
// info describes; callsClientGo are the lesson files' functions that
// call client-go (lessonFuncs).
func classify(fset *token.FileSet, file *ast.File, path string, info *types.Info, callsClientGo map[types.Object]bool) (share, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return share{}, err
	}
	lines := strings.Split(string(src), "\n")
	line := func(p token.Pos) int { return fset.Position(p).Line }

	// Lines that are not code: comments, the package clause, imports.
	notCode := map[int]bool{line(file.Package): true}
	for _, cg := range file.Comments {
		for _, c := range cg.List {
			if strings.TrimSpace(lines[line(c.Pos())-1]) == strings.TrimSpace(c.Text) || strings.HasPrefix(strings.TrimSpace(lines[line(c.Pos())-1]), "/*") {
				for l := line(c.Pos()); l <= line(c.End()); l++ {
					notCode[l] = true
				}
			}
		}
	}
	// The lines a multi-line string spans after its first are data (09's
	// pod as JSON), not code.
	ast.Inspect(file, func(n ast.Node) bool {
		if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
			for l := line(lit.Pos()) + 1; l <= line(lit.End()); l++ {
				notCode[l] = true
			}
		}
		return true
	})
	for _, d := range file.Decls {
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
	ast.Inspect(file, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.CallExpr:
			if id := callee(n); id != nil && info.Uses[id] != nil && (fromKubernetes(info.Uses[id]) || callsClientGo[info.Uses[id]]) {
				calls[line(id.Pos())] = true
			}
			if prints(n, info) {
				for l := line(n.Pos()); l <= line(n.End()); l++ {
					printing[l] = true
				}
			}
		case *ast.ReturnStmt:
			// return err, return obj, nil: plumbing, unless it returns
			// what a client-go call returns (return pods.Delete(...)),
			// builds a k8s.io value (return cache.ResourceEventHandlerFuncs{...})
			// or reads one (return []string{p.Spec.NodeName}, nil: an
			// IndexFunc's answer).
			if !callsKubernetes(n, info) && !buildsKubernetes(n, info) && !readsKubernetes(n, info) {
				for l := line(n.Pos()); l <= line(n.End()); l++ {
					printing[l] = true
				}
			}
		case *ast.FuncDecl:
			for l := line(n.Pos()); l <= line(n.Type.End()); l++ {
				printing[l] = true // a signature: not lesson either
			}
		case *ast.CompositeLit:
			// A k8s.io value built in place, every line of it: a struct's
			// fields name k8s.io's, a map's or a slice's entries do not
			// (cache.Indexers{byApp: appIndex}, []*corev1.Pod{newPod(…)}),
			// yet they are the value as much.
			if t := info.TypeOf(n); t != nil && holdsKubernetes(types.NewVar(n.Pos(), nil, "", t)) {
				for l := line(n.Lbrace); l <= line(n.Rbrace); l++ {
					lesson[l] = true
				}
			}
		case *ast.Ident:
			if obj := info.Uses[n]; obj != nil && (fromKubernetes(obj) || holdsKubernetes(obj)) {
				lesson[line(n.Pos())] = true
			}
			// The blank identifier defines no variable: `_, err :=
			// feed.Await(…)` holds nothing the line acts on.
			if obj := info.Defs[n]; obj != nil && n.Name != "_" && holdsKubernetes(obj) {
				lesson[line(n.Pos())] = true
			}
		}
		return true
	})
	// What the README quotes (between `// !+name` and `// !-name`,
	// checked by each chapter's TestREADME) is what the README shows the
	// reader as the lesson: 08's appCounter, the plain Go under test.
	// It is lesson but where it prints or is a signature.
	open := 0
	for i, text := range lines {
		switch t := strings.TrimSpace(text); {
		case strings.HasPrefix(t, "// !+"):
			open++
		case strings.HasPrefix(t, "// !-"):
			open = max(0, open-1)
		case open > 0:
			lesson[i+1] = true
		}
	}
	for l := range errorChecks(file, info, callsClientGo, line) {
		calls[l] = true
	}
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
	return kubernetesPath(obj.Pkg().Path())
}

// kubernetesPath reports whether a package is Kubernetes' client side:
// a k8s.io module, or controller-runtime, which 11-controller-runtime
// teaches as chapters 01-10 teach client-go, or a package inside a
// chapter's folder: 13-generated's API types and the clientset,
// listers and informers k8s.io/code-generator wrote for them, which are
// to its kind what k8s.io/api and client-go are to pods.
func kubernetesPath(path string) bool {
	return strings.HasPrefix(path, "k8s.io/") || strings.HasPrefix(path, "sigs.k8s.io/controller-runtime/") ||
		chapterPackage.MatchString(path)
}

// chapterPackage matches the import path of a package inside a chapter's folder.
var chapterPackage = regexp.MustCompile(`^github\.com/informer-walkthrough/informer-walkthrough/\d\d-[a-z0-9-]+/`)

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
	// klog.Logger is k8s.io's name for logr.Logger (an alias): a
	// controller's logger, as sample-controller takes it from its
	// context, is k8s.io's too.
	if alias, ok := t.(*types.Alias); ok && alias.Obj().Pkg() != nil && kubernetesPath(alias.Obj().Pkg().Path()) {
		return true
	}
	named, ok := types.Unalias(t).(*types.Named)
	return ok && named.Obj().Pkg() != nil && kubernetesPath(named.Obj().Pkg().Path())
}

// prints reports whether call only prints or awaits: fmt's printers, the
// course's show package (but for what returns an object),
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
		// Printing and awaiting; not what builds an object.
		sig, ok := obj.Type().(*types.Signature)
		return !ok || sig.Results().Len() == 0 || !holdsKubernetes(sig.Results().At(0))
	default:
		return strings.HasPrefix(obj.Name(), "print")
	}
}

// buildsKubernetes reports whether a return statement returns a
// composite literal of a type k8s.io defines, or of a slice or map of
// them, as holdsKubernetes counts a variable of such a type (return
// []*corev1.Pod{...}, as a variable pods []*corev1.Pod would be).
func buildsKubernetes(n *ast.ReturnStmt, info *types.Info) bool {
	for _, r := range n.Results {
		if u, ok := r.(*ast.UnaryExpr); ok && u.Op == token.AND {
			r = u.X // return &appsv1.Deployment{...}
		}
		if _, ok := r.(*ast.CompositeLit); !ok {
			continue
		}
		if holdsKubernetes(types.NewVar(r.Pos(), nil, "", info.TypeOf(r))) {
			return true
		}
	}
	return false
}

// readsKubernetes reports whether a return statement reads a field of a
// k8s.io value held in a variable (return p.Labels["app"], return
// []string{p.Spec.NodeName}, nil), outside a call of fmt: what an
// IndexFunc or a handler's helper answers from the object, not a value
// made earlier and passed on (return obj, nil) nor a formatted one.
func readsKubernetes(n *ast.ReturnStmt, info *types.Info) bool {
	found := false
	for _, r := range n.Results {
		ast.Inspect(r, func(m ast.Node) bool {
			switch m := m.(type) {
			case *ast.CallExpr:
				if id := callee(m); id != nil && info.Uses[id] != nil && info.Uses[id].Pkg() != nil && info.Uses[id].Pkg().Path() == "fmt" {
					return false
				}
			case *ast.SelectorExpr:
				if id, ok := m.X.(*ast.Ident); ok && info.Uses[id] != nil && holdsKubernetes(info.Uses[id]) {
					found = true
				}
			}
			return !found
		})
	}
	return found
}

// lessonFuncs are the functions and methods of the lesson files, but
// print*, that call client-go, directly or through another of them: a
// call of one is a client-go call one name away, still in the lesson.
func lessonFuncs(lessonFiles []*ast.File, info *types.Info) map[types.Object]bool {
	decls := map[types.Object]*ast.FuncDecl{}
	for _, f := range lessonFiles {
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Body != nil && !strings.HasPrefix(fd.Name.Name, "print") {
				decls[info.Defs[fd.Name]] = fd
			}
		}
	}
	found := map[types.Object]bool{}
	for changed := true; changed; {
		changed = false
		for obj, fd := range decls {
			ast.Inspect(fd.Body, func(n ast.Node) bool {
				if found[obj] {
					return false
				}
				if call, ok := n.(*ast.CallExpr); ok {
					if id := callee(call); id != nil && info.Uses[id] != nil &&
						(fromKubernetes(info.Uses[id]) || found[info.Uses[id]]) {
						found[obj], changed = true, true
					}
				}
				return true
			})
		}
	}
	return found
}

// errorChecks are the lines of each client-go call's own error check:
// an `if err != nil { return … }` whose err the statement just before
// it (or its own init statement) assigned from a call of client-go or
// of a main.go function that calls it. Only a check whose body is one
// return counts; one that does more is the chapter's own code.
func errorChecks(f *ast.File, info *types.Info, callsClientGo map[types.Object]bool, line func(token.Pos) int) map[int]bool {
	lines := map[int]bool{}
	clientGoCall := func(n ast.Node) bool {
		found := false
		ast.Inspect(n, func(n ast.Node) bool {
			if call, ok := n.(*ast.CallExpr); ok {
				if id := callee(call); id != nil && info.Uses[id] != nil &&
					(fromKubernetes(info.Uses[id]) || callsClientGo[info.Uses[id]]) {
					found = true
				}
			}
			return !found
		})
		return found
	}
	// fromClientGo are the variables some statement assigns from a
	// client-go call (err1 in `reg, err1 := inf.AddEventHandler(h)`).
	fromClientGo := map[types.Object]bool{}
	ast.Inspect(f, func(n ast.Node) bool {
		if as, ok := n.(*ast.AssignStmt); ok && clientGoCall(as) {
			for _, lhs := range as.Lhs {
				if id, ok := lhs.(*ast.Ident); ok {
					if obj := info.ObjectOf(id); obj != nil {
						fromClientGo[obj] = true
					}
				}
			}
		}
		return true
	})
	// joinsClientGo reports whether e is errors.Join of errors that
	// client-go calls returned (the chapters check several calls at once).
	joinsClientGo := func(e ast.Expr) bool {
		call, ok := e.(*ast.CallExpr)
		if !ok || len(call.Args) == 0 {
			return false
		}
		if id := callee(call); id == nil || info.Uses[id] == nil || info.Uses[id].Pkg() == nil ||
			info.Uses[id].Pkg().Path() != "errors" || id.Name != "Join" {
			return false
		}
		for _, arg := range call.Args {
			id, ok := arg.(*ast.Ident)
			if !ok || !fromClientGo[info.Uses[id]] {
				return false
			}
		}
		return true
	}
	// assignsErr reports whether stmt assigns errVar from a client-go
	// call, or from errors.Join of such calls' errors.
	assignsErr := func(stmt ast.Stmt, errVar types.Object) bool {
		as, ok := stmt.(*ast.AssignStmt)
		if !ok {
			return false
		}
		for i, lhs := range as.Lhs {
			if id, ok := lhs.(*ast.Ident); ok && info.ObjectOf(id) == errVar {
				return clientGoCall(as) || len(as.Rhs) == len(as.Lhs) && joinsClientGo(as.Rhs[i])
			}
		}
		return false
	}
	// assertsKubernetes reports whether stmt is `x, ok := v.(T)` with T
	// a type k8s.io defines, and returns ok.
	assertsKubernetes := func(stmt ast.Stmt) types.Object {
		as, ok := stmt.(*ast.AssignStmt)
		if !ok || len(as.Lhs) != 2 || len(as.Rhs) != 1 {
			return nil
		}
		ta, ok := as.Rhs[0].(*ast.TypeAssertExpr)
		if !ok || ta.Type == nil {
			return nil
		}
		if t := info.TypeOf(ta.Type); t == nil || !holdsKubernetes(types.NewVar(ta.Pos(), nil, "", t)) {
			return nil
		}
		id, ok := as.Lhs[1].(*ast.Ident)
		if !ok {
			return nil
		}
		return info.ObjectOf(id)
	}
	check := func(ifs *ast.IfStmt, before ast.Stmt) {
		// `p, ok := obj.(*corev1.Pod); if !ok { return … }`: the check an
		// IndexFunc or a handler makes of what client-go hands it (an
		// any), as a call's error check is the call's.
		if not, ok := ifs.Cond.(*ast.UnaryExpr); ok && not.Op == token.NOT && ifs.Else == nil && len(ifs.Body.List) == 1 {
			if id, ok := not.X.(*ast.Ident); ok && info.Uses[id] != nil {
				var okVar types.Object
				if ifs.Init != nil {
					okVar = assertsKubernetes(ifs.Init)
				} else if before != nil {
					okVar = assertsKubernetes(before)
				}
				if _, ret := ifs.Body.List[0].(*ast.ReturnStmt); ret && okVar != nil && okVar == info.Uses[id] {
					for l := line(ifs.Pos()); l <= line(ifs.End()); l++ {
						lines[l] = true
					}
					return
				}
			}
		}
		// `if !cache.WaitFor(…) { return … }`: a client-go call that
		// reports failure as false, and its own check.
		if not, ok := ifs.Cond.(*ast.UnaryExpr); ok && not.Op == token.NOT && ifs.Else == nil &&
			len(ifs.Body.List) == 1 && clientGoCall(not.X) {
			if _, ok := ifs.Body.List[0].(*ast.ReturnStmt); ok {
				for l := line(ifs.Pos()); l <= line(ifs.End()); l++ {
					lines[l] = true
				}
			}
			return
		}
		bin, ok := ifs.Cond.(*ast.BinaryExpr)
		if !ok || bin.Op != token.NEQ || ifs.Else != nil || len(ifs.Body.List) != 1 {
			return
		}
		if _, ok := ifs.Body.List[0].(*ast.ReturnStmt); !ok {
			return
		}
		id, ok := bin.X.(*ast.Ident)
		nilID, isNil := bin.Y.(*ast.Ident)
		if !ok || !isNil || nilID.Name != "nil" || info.Uses[id] == nil {
			return
		}
		errVar := info.Uses[id]
		if errVar.Type().String() != "error" {
			return
		}
		if ifs.Init != nil && assignsErr(ifs.Init, errVar) ||
			ifs.Init == nil && before != nil && assignsErr(before, errVar) {
			for l := line(ifs.Pos()); l <= line(ifs.End()); l++ {
				lines[l] = true
			}
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		var list []ast.Stmt
		switch n := n.(type) {
		case *ast.BlockStmt:
			list = n.List
		case *ast.CaseClause:
			list = n.Body
		case *ast.CommClause:
			list = n.Body
		default:
			return true
		}
		for i, stmt := range list {
			if ifs, ok := stmt.(*ast.IfStmt); ok {
				var before ast.Stmt
				if i > 0 {
					before = list[i-1]
				}
				check(ifs, before)
			}
		}
		return true
	})
	return lines
}
