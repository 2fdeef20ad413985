// Command nextclient runs the course on a newer client-go than the one it
// pins (issue 37), in a temporary copy of the repository: the course's own
// go.mod is not touched.
//
//	go run ./hack/nextclient [-tests=false] [VERSION]
//
// It moves the k8s.io modules the course pins to VERSION (by default the
// newest version listed, pre-releases included), with the Go toolchain
// their go.mod asks for (GOTOOLCHAIN); stands in a newer version for a
// pseudo-version the module proxy does not serve; builds every package;
// runs every chapter that builds and compares what it prints with its
// golden file (as golden.RealShape does: equal but for numbers, or
// which step differs); runs the test suite with a time limit; and finds
// every source link pinned to the current version by its line's content
// in the new version. It prints what it found per chapter. Once the
// modules are in the module cache it needs no network.
//
//	go run ./hack/nextclient -bump [-dir DIR] VERSION
//
// moves the course itself (bump.go): go.mod, links re-anchored by content,
// the versions on the lines that pin them; it lists what it left.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/version"

	"github.com/informer-walkthrough/informer-walkthrough/check/golden"
)

func main() {
	// Its own flag set: the packages it imports register flags of their
	// own (golden's -update) that mean nothing here.
	fs := flag.NewFlagSet("nextclient", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	tests := fs.Bool("tests", true, "run the test suite in the copy")
	testTime := fs.Duration("testtime", 40*time.Minute, "time limit of the test suite")
	chapterTime := fs.Duration("chaptertime", 2*time.Minute, "time limit of one chapter's run")
	keep := fs.Bool("keep", false, "keep the temporary copy (its path is printed)")
	bump := fs.Bool("bump", false, "move the course itself (this repository, or -dir) to VERSION")
	dir := fs.String("dir", "", "with -bump: the repository to move (default: this one)")
	if err := fs.Parse(os.Args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Println("usage: go run ./hack/nextclient [-tests=false] [-keep] [VERSION]\n       go run ./hack/nextclient -bump [-dir DIR] VERSION")
			fs.SetOutput(os.Stdout)
			fs.PrintDefaults()
			return
		}
		fail(fmt.Errorf("%v (see -h)", err))
	}
	switch {
	case fs.NArg() > 1:
		fail(errors.New("at most one argument, the version (e.g. v0.38.0-alpha.2)"))
	case *bump && fs.NArg() != 1:
		fail(errors.New("-bump needs the version to move to (e.g. v0.38.0)"))
	case fs.NArg() == 1 && !semantic(fs.Arg(0)):
		fail(fmt.Errorf("version %q is not a semantic version (e.g. v0.38.0-alpha.2)", fs.Arg(0)))
	}
	ctx, stop := signalContext()
	defer stop()
	var err error
	if *bump {
		err = runBump(ctx, os.Stdout, *dir, fs.Arg(0))
	} else {
		err = run(ctx, os.Stdout, options{version: fs.Arg(0), tests: *tests, testTime: *testTime,
			chapterTime: *chapterTime, keep: *keep})
	}
	if err != nil {
		fail(err)
	}
}

// fail is how bad input and failures end: one line, exit 1.
func fail(err error) {
	fmt.Fprintln(os.Stderr, "nextclient:", err)
	os.Exit(1)
}

func semantic(v string) bool {
	_, err := version.ParseSemantic(v)
	return err == nil && strings.HasPrefix(v, "v")
}

type options struct {
	version     string
	tests, keep bool
	testTime    time.Duration
	chapterTime time.Duration
}

// run makes the copy, moves it, and reports.
func run(ctx context.Context, out io.Writer, o options) error {
	start := time.Now()
	root, err := repoRoot(ctx)
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "nextclient-")
	if err != nil {
		return err
	}
	if o.keep {
		fmt.Fprintln(os.Stderr, "nextclient: the copy is", tmp)
	} else {
		defer os.RemoveAll(tmp)
	}
	copyDir := filepath.Join(tmp, "course")
	if err := copyTracked(ctx, root, copyDir); err != nil {
		return err
	}
	m, err := moveModules(ctx, copyDir, o.version, progress)
	if err != nil {
		return err
	}
	r := Report{Current: m.current, Target: m.target, Toolchain: m.toolchain, Did: m.did, Waiting: map[string]string{}}
	g := gocmd{dir: copyDir, toolchain: m.toolchain}

	progress("go build ./...")
	buildOut, _ := g.run(ctx, "build", "./...")
	r.BuildErrors = BuildErrors(buildOut)
	if len(r.BuildErrors) > 0 {
		r.Adapted, err = adaptMajorMoves(ctx, g, copyDir, buildOut)
		if err != nil {
			return err
		}
		if len(r.Adapted) > 0 {
			progress("go build ./... (adapted)")
			buildOut, _ = g.run(ctx, "build", "./...")
			r.AdaptedErrors = BuildErrors(buildOut)
		}
	}

	graph, _ := g.run(ctx, "mod", "graph")
	selected := map[string]string{}
	list, _ := g.run(ctx, "list", "-m", "all")
	for _, l := range strings.Split(list, "\n") {
		if f := strings.Fields(l); len(f) >= 2 {
			selected[f[0]] = f[1]
		}
	}
	r.Waiting = Waiting(graph, selected, "k8s.io/client-go", m.target)

	links, err := courseLinks(ctx, copyDir, m.current)
	if err != nil {
		return err
	}
	cache, err := g.run(ctx, "env", "GOMODCACHE")
	if err != nil {
		return err
	}
	cache = strings.TrimSpace(cache)
	for _, mod := range sortedKeys(repoModule) {
		for _, v := range []string{m.current, m.target} {
			if _, err := g.run(ctx, "mod", "download", repoModule[mod]+"@"+v); err != nil {
				return fmt.Errorf("the module %s@%s is needed to re-anchor links: %v", repoModule[mod], v, err)
			}
		}
	}
	results := Resolve(links, m.current, m.target, moduleReader(cache))
	byChapter := map[string][]Result{}
	for _, res := range results {
		c := chapterOf(res.File)
		if c == "" {
			r.Other = append(r.Other, res)
		} else {
			byChapter[c] = append(byChapter[c], res)
		}
	}

	chapters, err := chapterDirs(copyDir)
	if err != nil {
		return err
	}
	bin := filepath.Join(tmp, "bin")
	for _, name := range chapters {
		progress("chapter " + name)
		c := Chapter{Name: name, Links: byChapter[name]}
		mods, _ := g.run(ctx, "list", "-e", "-deps", "-f", "{{with .Module}}{{.Path}}{{end}}", "./"+name)
		for _, mod := range uniq(strings.Fields(mods)) {
			if why, ok := r.Waiting[mod]; ok {
				c.Waiting = append(c.Waiting, mod+": "+why)
			}
		}
		if len(r.Adapted) > 0 {
			deps, _ := g.run(ctx, "list", "-e", "-deps", "-f", "{{.ImportPath}}", "./"+name)
			for _, d := range strings.Fields(deps) {
				if _, failed := r.BuildErrors[d]; failed {
					c.BrokeFirst = append(c.BrokeFirst, d)
				}
			}
		}
		exe := filepath.Join(bin, name)
		if bout, err := g.run(ctx, "build", "-o", exe, "./"+name); err != nil {
			c.BuildErr = nonEmpty(bout)
		} else {
			c.Output, c.Diffs = runChapter(ctx, copyDir, exe, name, o.chapterTime)
			if !strings.HasPrefix(c.Output, "identical") {
				c.Output += " " + onCurrent(ctx, root, filepath.Join(bin, name+"-current"), name, o.chapterTime, m.current)
			}
		}
		r.Chapters = append(r.Chapters, c)
	}

	if o.tests {
		progress(fmt.Sprintf("go test ./... (at most %s)", o.testTime))
		r.Tests, r.TestsNote = runTests(ctx, g, o.testTime)
		for i, t := range r.Tests {
			if len(t.Failed) > 0 {
				progress("the failed tests of " + t.Path + " on " + m.current)
				r.Tests[i].OnCurrent = testsOnCurrent(ctx, root, t, m.current)
			}
		}
	} else {
		r.TestsNote = "not run (-tests=false)"
	}
	r.Elapsed = time.Since(start)
	_, err = io.WriteString(out, Format(r))
	return err
}

func progress(s string) { fmt.Fprintln(os.Stderr, "nextclient:", s) }

// gocmd runs the go command in the copy with the toolchain the new
// modules need.
type gocmd struct {
	dir, toolchain string
	timeout        time.Duration
}

func (g gocmd) cmd(ctx context.Context, args ...string) *exec.Cmd {
	c := exec.CommandContext(ctx, "go", args...)
	c.Dir = g.dir
	c.Env = append(os.Environ(), "GOTOOLCHAIN="+g.toolchain, "GOFLAGS=-mod=mod", "GOWORK=off")
	killGroup(c) // go test's test binaries end with it
	c.WaitDelay = 5 * time.Second
	return c
}

// run returns the command's output (stdout and stderr).
func (g gocmd) run(ctx context.Context, args ...string) (string, error) {
	var b bytes.Buffer
	c := g.cmd(ctx, args...)
	c.Stdout, c.Stderr = &b, &b
	err := c.Run()
	return b.String(), err
}

// repoRoot is the course's root: the directory of the main module.
func repoRoot(ctx context.Context) (string, error) {
	out, err := exec.CommandContext(ctx, "go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %v", err)
	}
	mod := strings.TrimSpace(string(out))
	if mod == "" || mod == os.DevNull {
		return "", errors.New("run it inside the course's repository (no go.mod here)")
	}
	return filepath.Dir(mod), nil
}

// copyTracked copies the files git tracks (as they are in the work tree).
func copyTracked(ctx context.Context, root, dst string) error {
	out, err := exec.CommandContext(ctx, "git", "-C", root, "ls-files", "-z").Output()
	if err != nil {
		return fmt.Errorf("git ls-files: %v", err)
	}
	for _, f := range strings.Split(string(out), "\x00") {
		if f == "" {
			continue
		}
		data, err := os.ReadFile(filepath.Join(root, f))
		if errors.Is(err, os.ErrNotExist) {
			continue // deleted in the work tree
		}
		if err != nil {
			return err
		}
		info, err := os.Stat(filepath.Join(root, f))
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dst, f)), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dst, f), data, info.Mode().Perm()); err != nil {
			return err
		}
	}
	return nil
}

// moved is what moveModules did.
type moved struct {
	current, target, toolchain string
	did                        []string
}

var requireLine = regexp.MustCompile(`(?m)^\s*(?:require\s+)?(k8s\.io/[^\s]+) (v[^\s]+)`)

// moveModules moves, in the module at dir, every k8s.io module pinned at
// client-go's version to the target version, standing in newer versions
// for any the proxy does not serve.
func moveModules(ctx context.Context, dir, asked string, progress func(string)) (moved, error) {
	var m moved
	gomod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		return m, err
	}
	var pinned []string
	for _, r := range requireLine.FindAllStringSubmatch(string(gomod), -1) {
		if r[1] == "k8s.io/client-go" {
			m.current = r[2]
		}
	}
	if m.current == "" {
		return m, errors.New("go.mod does not require k8s.io/client-go")
	}
	for _, r := range requireLine.FindAllStringSubmatch(string(gomod), -1) {
		if r[2] == m.current {
			pinned = append(pinned, r[1])
		}
	}
	local := gocmd{dir: dir, toolchain: "local"}
	progress("go list -m -versions k8s.io/client-go")
	listed, err := local.run(ctx, "list", "-m", "-versions", "k8s.io/client-go")
	var versions []string
	if err != nil {
		if asked == "" {
			return m, fmt.Errorf("cannot list client-go's versions (offline? give the version): %s", firstLine(listed))
		}
		versions = []string{asked}
		m.did = append(m.did, "could not list client-go's versions; took "+asked+" as given")
	} else {
		versions = strings.Fields(listed)[1:]
	}
	if m.target, err = ChooseVersion(versions, m.current, asked); err != nil {
		return m, err
	}
	dl, err := local.run(ctx, "mod", "download", "-json", "k8s.io/client-go@"+m.target)
	var info struct{ GoMod, Error string }
	if jerr := json.Unmarshal([]byte(dl), &info); jerr != nil || info.GoMod == "" {
		return m, fmt.Errorf("go mod download k8s.io/client-go@%s: %s %v", m.target, firstLine(info.Error+dl), err)
	}
	newMod, err := os.ReadFile(info.GoMod)
	if err != nil {
		return m, err
	}
	need := GoLine(string(newMod))
	goVersion, _ := local.run(ctx, "env", "GOVERSION")
	cacheDir, _ := local.run(ctx, "env", "GOMODCACHE")
	var cached []string
	entries, _ := os.ReadDir(filepath.Join(strings.TrimSpace(cacheDir), "golang.org"))
	for _, e := range entries {
		if c := cachedToolchain.FindStringSubmatch(e.Name()); c != nil {
			cached = append(cached, c[1])
		}
	}
	m.toolchain = ChooseToolchain(strings.TrimSpace(goVersion), need, cached)
	if env := os.Getenv("GOTOOLCHAIN"); env != "" && env != "auto" && env != "local" {
		m.toolchain = env
	}
	m.did = append(m.did, fmt.Sprintf("client-go %s's go.mod says go %s: GOTOOLCHAIN=%s", m.target, need, m.toolchain))
	g := gocmd{dir: dir, toolchain: m.toolchain}
	args := []string{"get"}
	for _, p := range pinned {
		args = append(args, p+"@"+m.target)
	}
	m.did = append(m.did, "go "+strings.Join(args, " "))
	for try := 0; ; try++ {
		progress(strings.Join(args[:min(len(args), 3)], " ") + " ...")
		out, err := g.run(ctx, args...)
		if err == nil {
			break
		}
		bad := Unserved(out)
		if len(bad) == 0 || try > 5 {
			return m, fmt.Errorf("go get failed:\n%s", strings.TrimSpace(out))
		}
		for _, mv := range bad {
			// A module the course pins beside client-go (as code-generator
			// for chapter 13) whose pre-release is not published: it stays
			// at the course's version, said so.
			if asked := mv[0] + "@" + m.target; mv[1] == m.target && mv[0] != "k8s.io/client-go" && slices.Contains(pinned, mv[0]) {
				args = slices.DeleteFunc(args, func(a string) bool { return a == asked })
				// The new k8s.io modules may require it at the target
				// too: then its tools (go.mod's tool directive) cannot
				// be built in the copy, and go.mod drops them.
				tools, err := dropTools(ctx, g, dir, mv[0])
				if err != nil {
					return m, err
				}
				what := fmt.Sprintf("%s is not served by the module proxy; %s stays at %s", asked, mv[0], m.current)
				if len(tools) > 0 {
					what = fmt.Sprintf("%s is not served by the module proxy; the copy's go.mod drops its tools (%s), which wait for it", asked, strings.Join(tools, ", "))
				}
				m.did = append(m.did, what)
				continue
			}
			repl, how := newerServed(ctx, g, strings.TrimSpace(cacheDir), mv[0], mv[1])
			if repl == "" {
				return m, fmt.Errorf("%s@%s is not served and no newer version is at hand:\n%s", mv[0], mv[1], strings.TrimSpace(out))
			}
			m.did = append(m.did, fmt.Sprintf("%s@%s is not served by the module proxy; required %s (%s) instead", mv[0], mv[1], repl, how))
			args = append(args, mv[0]+"@"+repl)
		}
	}
	return m, nil
}

// dropTools removes from dir's go.mod the tool directives of module's
// packages, and module's requirement, and its go.sum lines, and returns
// the tools it removed.
func dropTools(ctx context.Context, g gocmd, dir, module string) ([]string, error) {
	gomod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		return nil, err
	}
	var tools []string
	edit := []string{"mod", "edit"}
	for _, f := range strings.Fields(string(gomod)) {
		if strings.HasPrefix(f, module+"/") {
			tools = append(tools, f)
			edit = append(edit, "-droptool="+f)
		}
	}
	if len(tools) == 0 {
		return nil, nil
	}
	edit = append(edit, "-droprequire="+module)
	if out, err := g.run(ctx, edit...); err != nil {
		return nil, fmt.Errorf("go mod edit: %s", strings.TrimSpace(out))
	}
	// And its go.sum lines: with its zip's hash there, go get wants the
	// new version's hash too, which an unserved version cannot give.
	sumFile := filepath.Join(dir, "go.sum")
	sum, err := os.ReadFile(sumFile)
	if err != nil {
		return nil, err
	}
	lines := strings.SplitAfter(string(sum), "\n")
	lines = slices.DeleteFunc(lines, func(l string) bool { return strings.HasPrefix(l, module+" ") })
	return tools, os.WriteFile(sumFile, []byte(strings.Join(lines, "")), 0o644)
}

// newerServed finds a version of module newer than the unserved one: the
// proxy's latest, or else the newest in the module cache.
func newerServed(ctx context.Context, g gocmd, cache, module, unserved string) (string, string) {
	out, err := g.run(ctx, "list", "-m", "-json", module+"@latest")
	var info struct{ Version string }
	if err == nil && json.Unmarshal([]byte(out), &info) == nil && Newer(info.Version, unserved) {
		return info.Version, "the newest the proxy serves, @latest"
	}
	entries, _ := os.ReadDir(filepath.Join(cache, "cache", "download", escapePath(module), "@v"))
	best := ""
	for _, e := range entries {
		if v, ok := strings.CutSuffix(e.Name(), ".zip"); ok && Newer(v, unserved) && (best == "" || Newer(v, best)) {
			best = v
		}
	}
	return best, "the newest in the module cache"
}

// escapePath is the module cache's spelling of a path: capitals as !x.
func escapePath(p string) string {
	var b strings.Builder
	for _, c := range p {
		if c >= 'A' && c <= 'Z' {
			b.WriteString("!" + string(c+'a'-'A'))
		} else {
			b.WriteRune(c)
		}
	}
	return b.String()
}

// adaptMajorMoves rewrites, in the copy, the imports of a module the new
// modules use at a newer major version, where the build errors name both.
func adaptMajorMoves(ctx context.Context, g gocmd, dir, buildOut string) ([]string, error) {
	gomod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		return nil, err
	}
	var requires []string
	for _, l := range strings.Split(string(gomod), "\n") {
		if f := strings.Fields(strings.TrimPrefix(strings.TrimSpace(l), "require ")); len(f) >= 2 && strings.Contains(f[0], ".") {
			requires = append(requires, f[0])
		}
	}
	list, _ := g.run(ctx, "list", "-m", "all")
	var build []string
	for _, l := range strings.Split(list, "\n") {
		if f := strings.Fields(l); len(f) >= 1 {
			build = append(build, f[0])
		}
	}
	var did []string
	for _, mv := range MajorMoves(requires, build, buildOut) {
		var files []string
		err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") {
				return err
			}
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			if n := bytes.ReplaceAll(data, []byte(`"`+mv.From+`/`), []byte(`"`+mv.To+`/`)); !bytes.Equal(n, data) {
				rel, _ := filepath.Rel(dir, p)
				files = append(files, rel)
				return os.WriteFile(p, n, 0o644)
			}
			return nil
		})
		if err != nil {
			return did, err
		}
		did = append(did, fmt.Sprintf("the new modules use %s where the course imports %s: rewrote the imports of %s",
			mv.To, mv.From, strings.Join(files, ", ")))
	}
	return did, nil
}

func courseLinks(ctx context.Context, root, tag string) ([]Link, error) {
	out, err := exec.CommandContext(ctx, "git", "-C", root, "ls-files", "-z").Output()
	if err != nil {
		// The copy is no git repository: walk it instead.
		return walkLinks(root, tag)
	}
	var links []Link
	for _, f := range strings.Split(string(out), "\x00") {
		if (strings.HasSuffix(f, ".md") || strings.HasSuffix(f, ".go")) && !notLinks(f) {
			data, err := os.ReadFile(filepath.Join(root, f))
			if err != nil {
				continue
			}
			links = append(links, FindLinks(f, string(data), tag)...)
		}
	}
	return links, nil
}

// notLinks are files whose links are not pins to move: examples in the
// course's link check and this program's tests, and the page that
// compares two fixed tags on purpose (check/nextpage checks it).
func notLinks(file string) bool {
	return strings.HasPrefix(file, "check/coursecheck/") || strings.HasPrefix(file, "hack/nextclient/") ||
		strings.HasPrefix(file, "docs/client-go-v")
}

func walkLinks(root, tag string) ([]Link, error) {
	var links []Link
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && strings.HasPrefix(d.Name(), ".") && p != root {
			return filepath.SkipDir
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if !d.IsDir() && (strings.HasSuffix(p, ".md") || strings.HasSuffix(p, ".go")) && !notLinks(rel) {
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			links = append(links, FindLinks(rel, string(data), tag)...)
		}
		return nil
	})
	sort.SliceStable(links, func(i, j int) bool { return links[i].File < links[j].File })
	return links, err
}

// moduleReader reads a module's file at a version from the module cache.
func moduleReader(cache string) func(repo, tag, path string) []string {
	return func(repo, tag, path string) []string {
		data, err := os.ReadFile(filepath.Join(cache, escapePath(repoModule[repo])+"@"+tag, path))
		if err != nil {
			return nil
		}
		return strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	}
}

func chapterDirs(root string) ([]string, error) {
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil, err
	}
	var c []string
	for _, e := range entries {
		if e.IsDir() && isChapter(e.Name()) {
			if _, err := os.Stat(filepath.Join(root, e.Name(), "main.go")); err == nil {
				c = append(c, e.Name())
			}
		}
	}
	return c, nil
}

// onCurrent tells a difference the new version makes from one the
// chapter has anyway: it runs the chapter as the course builds it, on the
// current version, and says whether that run prints the golden file.
func onCurrent(ctx context.Context, root, exe, name string, limit time.Duration, current string) string {
	local := gocmd{dir: root, toolchain: "local"}
	if out, err := local.run(ctx, "build", "-o", exe, "./"+name); err != nil {
		return "(could not build it on " + current + " to compare: " + firstLine(out) + ")"
	}
	res, _ := runChapter(ctx, root, exe, name, limit)
	if strings.HasPrefix(res, "identical") {
		return "[on " + current + " it prints the golden file: the new version makes this difference]"
	}
	return "[on " + current + " it differs too (" + strings.TrimSuffix(res, ":") + "): not the new version's doing]"
}

// runChapter runs a built chapter on its embedded workshop cluster and
// compares what it printed with its golden file.
func runChapter(ctx context.Context, root, exe, name string, limit time.Duration) (string, []string) {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	var stdout, stderr bytes.Buffer
	c := exec.CommandContext(ctx, exe)
	c.Dir = root
	c.Stdout, c.Stderr = &stdout, &stderr
	c.WaitDelay = 5 * time.Second
	start := time.Now()
	err := c.Run()
	took := time.Since(start).Round(10 * time.Millisecond)
	want, rerr := os.ReadFile(filepath.Join(root, name, "testdata", name+".golden"))
	if rerr != nil {
		return "no golden file: " + rerr.Error(), nil
	}
	if ctx.Err() != nil {
		return fmt.Sprintf("did not end within %s", limit), head(nonEmpty(stderr.String()), maxErrLines)
	}
	if err != nil {
		return fmt.Sprintf("exit: %v after %s", err, took), head(nonEmpty(stderr.String()), maxErrLines)
	}
	return Compare(stdout.Bytes(), want, took)
}

// Compare says how a chapter's output differs from its golden file: not
// at all, only in numbers (what RealShape masks), or in which steps.
func Compare(got, want []byte, took time.Duration) (string, []string) {
	if bytes.Equal(got, want) {
		return fmt.Sprintf("identical to the golden file (%s)", took), nil
	}
	problems := golden.RealShape(got, want)
	if len(problems) == 0 {
		return fmt.Sprintf("differs from the golden file only in numbers (%s):", took), numberDiff(got, want)
	}
	return fmt.Sprintf("differs from the golden file (%s):", took), problems
}

// numberDiff lists the lines that differ (only in numbers).
func numberDiff(got, want []byte) []string {
	g, w := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	var d []string
	for i := range min(len(g), len(w)) {
		if g[i] != w[i] {
			d = append(d, fmt.Sprintf("line %d: %q, golden %q", i+1, strings.TrimSpace(g[i]), strings.TrimSpace(w[i])))
		}
	}
	return head(d, 8)
}

// runTests runs the copy's test suite as `go test -json`, within limit.
func runTests(ctx context.Context, g gocmd, limit time.Duration) ([]TestPackage, string) {
	ctx, cancel := context.WithTimeout(ctx, limit+time.Minute)
	defer cancel()
	var stdout, stderr bytes.Buffer
	c := g.cmd(ctx, "test", "-json", "-timeout", limit.String(), "./...")
	c.Stdout, c.Stderr = &stdout, &stderr
	start := time.Now()
	err := c.Run()
	pkgs := ParseTestJSON(stdout.Bytes())
	note := fmt.Sprintf("go test ./... took %s", time.Since(start).Round(time.Second))
	if ctx.Err() != nil {
		note += fmt.Sprintf(", stopped at its time limit (%s)", limit)
	} else if err != nil && len(pkgs) == 0 {
		note += ": " + firstLine(stderr.String())
	}
	return pkgs, note
}

// testsOnCurrent runs a package's failed tests as the course has them,
// on the current version, to tell what the new version broke from what
// fails anyway.
func testsOnCurrent(ctx context.Context, root string, t TestPackage, current string) string {
	var top []string
	for _, f := range t.Failed {
		top = append(top, regexp.QuoteMeta(strings.SplitN(f, "/", 2)[0]))
	}
	local := gocmd{dir: root, toolchain: "local"}
	out, err := local.run(ctx, "test", "-count=1", "-run", "^("+strings.Join(uniq(top), "|")+")$", t.Path)
	if err == nil {
		return "they pass on " + current + " (one run): likely the new version's doing"
	}
	return "they fail on " + current + " too: " + firstLine(out)
}

// ParseTestJSON reads `go test -json` output into a result per package.
func ParseTestJSON(data []byte) []TestPackage {
	type event struct{ Action, Package, ImportPath, Test, Output string }
	built := map[string][]string{} // package → its build output
	byPkg := map[string]*TestPackage{}
	outputs := map[string][]string{} // package/test → its output lines
	var order []string
	dec := json.NewDecoder(bytes.NewReader(data))
	for {
		var e event
		if err := dec.Decode(&e); err != nil {
			break
		}
		if e.Action == "build-output" && e.ImportPath != "" {
			// "pkg [pkg.test]" while building its test binary
			ip := strings.Fields(e.ImportPath)[0]
			if l := strings.TrimSpace(e.Output); l != "" && !strings.HasPrefix(l, "# ") {
				built[ip] = append(built[ip], l)
			}
			continue
		}
		if e.Package == "" {
			continue
		}
		p := byPkg[e.Package]
		if p == nil {
			p = &TestPackage{Path: e.Package, Result: "timeout"}
			byPkg[e.Package] = p
			order = append(order, e.Package)
		}
		key := e.Package + " " + e.Test
		switch e.Action {
		case "output":
			if l := strings.TrimRight(e.Output, "\n"); strings.TrimSpace(l) != "" && !strings.HasPrefix(strings.TrimSpace(l), "=== ") {
				outputs[key] = append(outputs[key], strings.TrimSpace(l))
			}
		case "fail":
			if e.Test != "" {
				p.Failed = append(p.Failed, e.Test)
				p.Lines = append(p.Lines, head(outputs[key], 3)...)
			} else {
				p.Result = "FAIL"
				if len(p.Failed) == 0 {
					if b := built[e.Package]; len(b) > 0 {
						p.Result = "FAIL (does not build)"
						p.Lines = append(p.Lines, b...)
					} else {
						p.Lines = append(p.Lines, head(outputs[key], maxErrLines)...)
					}
				}
			}
		case "pass":
			if e.Test == "" {
				p.Result = "ok"
			}
		case "skip":
			if e.Test == "" {
				p.Result = "no tests"
			}
		}
	}
	sort.Strings(order)
	var out []TestPackage
	for _, k := range order {
		out = append(out, *byPkg[k])
	}
	return out
}

func nonEmpty(s string) []string {
	var l []string
	for _, x := range strings.Split(s, "\n") {
		if strings.TrimSpace(x) != "" {
			l = append(l, x)
		}
	}
	return l
}

func uniq(s []string) []string {
	seen := map[string]bool{}
	var u []string
	for _, x := range s {
		if !seen[x] {
			seen[x] = true
			u = append(u, x)
		}
	}
	return u
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
