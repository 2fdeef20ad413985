package reliability

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"

	"github.com/informer-walkthrough/informer-walkthrough/internal/source"
)

// build makes the chapters' binaries: one binary that holds every
// chapter, linked under each chapter's name (dir/01-watch, …), which
// runs the chapter it is named after.
//
// One link instead of one per chapter saves most of what building the
// chapters costs. It works by compiling each chapter as a package of its
// own, its package clause and its main function renamed (package
// ch01watch, func Main), beside a main package that picks one by name.
// The renamed copies live in a temporary folder and reach the build
// through -overlay, so nothing is written into the source tree, and each
// chapter's code, entry point and all, runs unchanged. Everything the
// chapters import is already compiled when this runs (this test package
// imports check/chapterdeps), so the go command compiles only
// the renamed chapters and the main package, and links.
//
// It builds with go run, not go build: go run keeps what it links in the
// build cache, so a run of the tests whose chapters have not changed
// links nothing, where go build -o links every time (about 4 s of CPU on
// a 2-core machine). The binary go run starts is told to copy itself out
// of the cache (source.EnvCopy, as --source tells a chapter); go run
// also leaves out the debugger's information, which nothing here reads.
//
// With cover (the packages to instrument) the chapters are built as
// --source builds one: with -cover -covermode=atomic, and their main
// package among the instrumented ones, which runtime/coverage needs to
// write and clear the counters. The cover tool reads the main package
// from disk, where an overlay does not reach, so that build's main is
// sourcemain (built only with -tags sourcemain), which calls the
// chapter-picking code below as package chapters.
func build(dir string, cover []string) (chapters []chapter, err error) {
	virtual, err := filepath.Abs(filepath.Join(root, "check", "reliability", "chapters"))
	if err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil, err
	}
	overlay := map[string]string{} // virtual source file → real file
	var imports, cases strings.Builder
	for _, e := range entries {
		if !e.IsDir() || !chapterDir.MatchString(e.Name()) {
			continue
		}
		name, pkg := e.Name(), "ch"+strings.ReplaceAll(e.Name(), "-", "")
		files, err := filepath.Glob(filepath.Join(root, name, "*.go"))
		if err != nil {
			return nil, err
		}
		hasInit, main := false, -1 // main: the chapter's index in chapters
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			src, err := os.ReadFile(f)
			if err != nil {
				return nil, err
			}
			if filepath.Base(f) == "main.go" {
				ch := chapter{
					name:    name,
					bin:     filepath.Join(dir, name+exe),
					offline: bytes.Contains(src, []byte("runner.MainInMemory(")),
				}
				if m := sharedMain.FindSubmatch(src); m != nil && string(m[2]) == name {
					ch.entry = string(m[1])
				}
				main = len(chapters)
				chapters = append(chapters, ch)
			}
			hasInit = hasInit || funcInit.Match(src)
			src = packageMain.ReplaceAll(src, []byte("package "+pkg))
			src = funcMain.ReplaceAll(src, []byte("func Main() {"))
			copied := filepath.Join(dir, pkg+"-"+filepath.Base(f))
			if err := os.WriteFile(copied, src, 0o600); err != nil {
				return nil, err
			}
			overlay[filepath.Join(virtual, pkg, filepath.Base(f))] = copied
		}
		if hasInit && main >= 0 {
			chapters[main].entry = "" // an init runs before the shared main
		}
		fmt.Fprintf(&imports, "\t%q\n", chaptersPkg+"/"+pkg)
		fmt.Fprintf(&cases, "\tcase %q:\n\t\t%s.Main()\n", name, pkg)
	}
	if len(chapters) == 0 {
		return nil, fmt.Errorf("no chapter folders in %s", root)
	}
	mainGo := filepath.Join(dir, "main.go")
	pkgClause, mainFunc, target, goArgs := "package main", "func main() {", "./check/reliability/chapters", []string(nil)
	if cover != nil {
		pkgClause, mainFunc, target = "package chapters", "func Main() {", "./check/reliability/sourcemain"
		goArgs = []string{"-tags", "sourcemain", "-cover", "-covermode=atomic",
			"-coverpkg=" + strings.Join(append(slices.Clone(cover), sourceMainPkg), ",")}
	}
	err = os.WriteFile(mainGo, fmt.Appendf(nil, `%s

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/informer-walkthrough/informer-walkthrough/internal/source"
%s)

// main runs the chapter this binary is named after. Run by go run with
// source.EnvCopy set, it copies itself there instead, as a chapter's
// main does for --source (source.CopyRequested).
%s
	if code, done := source.CopyRequested(); done {
		os.Exit(code)
	}
	switch strings.TrimSuffix(filepath.Base(os.Args[0]), ".exe") {
%s	default:
		fmt.Fprintln(os.Stderr, "no chapter is named", os.Args[0])
		os.Exit(2)
	}
}
`, pkgClause, imports.String(), mainFunc, cases.String()), 0o600)
	if err != nil {
		return nil, err
	}
	overlay[filepath.Join(virtual, "main.go")] = mainGo
	overlayJSON, err := json.Marshal(map[string]any{"Replace": overlay})
	if err != nil {
		return nil, err
	}
	overlayFile := filepath.Join(dir, "overlay.json")
	if err := os.WriteFile(overlayFile, overlayJSON, 0o600); err != nil {
		return nil, err
	}

	all := filepath.Join(dir, "chapters"+exe)
	args := append(append([]string{"run", "-overlay", overlayFile}, goArgs...), target)
	cmd := exec.Command("go", args...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), source.EnvCopy+"="+all)
	// Output to a file, not a buffer: exec then starts no goroutine, which
	// the leak checks of the tests running meanwhile would count.
	logFile := filepath.Join(dir, "build.log")
	log, err := os.Create(logFile)
	if err != nil {
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = log, log
	err = cmd.Run()
	log.Close()
	if err != nil {
		out, _ := os.ReadFile(logFile)
		return nil, fmt.Errorf("%s: %v\n%s", strings.Join(cmd.Args, " "), err, out)
	}
	for _, ch := range chapters {
		if err := os.Link(all, ch.bin); err != nil {
			return nil, err
		}
	}
	return chapters, nil
}

// exe is what executables' names end in.
var exe = func() string {
	if runtime.GOOS == "windows" {
		return ".exe"
	}
	return ""
}()

// chaptersPkg is the import path of the package that holds the chapters.
const chaptersPkg = "github.com/informer-walkthrough/informer-walkthrough/check/reliability/chapters"

// sourceMainPkg is the main package of the build with coverage.
const sourceMainPkg = "github.com/informer-walkthrough/informer-walkthrough/check/reliability/sourcemain"

var (
	chapterDir  = regexp.MustCompile(`^\d\d-[a-z0-9-]+$`)
	packageMain = regexp.MustCompile(`(?m)^package main$`)
	funcMain    = regexp.MustCompile(`(?m)^func main\(\) \{`)
	funcInit    = regexp.MustCompile(`(?m)^func init\(\)`)
	// sharedMain is a main that only calls a shared one (chapter.entry).
	sharedMain = regexp.MustCompile(`(?m)^func main\(\) \{ (cluster\.Main|cluster\.MainWith|runner\.MainInMemory)\("([^"]+)", [\w.]+(?:, [\w.]+)?\) \}$`)
)
