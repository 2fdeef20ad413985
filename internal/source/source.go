// Package source is --source: which lines of client-go each step of a
// chapter ran. A chapter run with --source is built with Go's coverage
// instrumentation over the packages the course teaches (Packages); at
// each step's end the Session writes the counters of the step that just
// ended, clears them, reads them with `go tool covdata textfmt`, maps
// the blocks that ran to the functions they belong to (go/ast over the
// module cache's source, at the versions the binary was built with) and
// the functions to the pipeline's parts, and reports them: in the
// terminal, and to the trace (trace.RecordSource) for the page.
//
// A function's count is how many times its first block ran, that is how
// many times it was entered. The chapter's own code is instrumented too
// (ClearCounters needs the main package in -coverpkg) but never reported.
package source

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime/coverage"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/informer-walkthrough/informer-walkthrough/internal/trace"
)

// Session reads one run's counters, step by step. It is not safe for
// concurrent use: the runner calls it under its writer's lock.
type Session struct {
	chapter string                // "05-informer": what its reports show (see shown)
	dir     string                // where each step's counters are written
	covdata string                // the covdata tool
	modules []module              // the modules the binary was built with
	files   map[string]*fileFuncs // by file, as the profile names it; nil: unreadable
	sent    map[string]bool       // texts already given to the trace
	step    int                   // the step that is running: -1 before the first heading
	n       int                   // counter directories written
}

// module is a module the binary holds and where its source is.
type module struct{ path, version, dir string }

// Instrumented reports whether this binary was built with coverage.
func Instrumented() bool {
	return coverage.WriteMeta(io.Discard) == nil
}

// Start begins reading the counters: what ran before it is forgotten.
// dir is an empty directory the session may write to; chapter names the
// chapter ("05-informer"), whose reports show what it teaches (shown). It fails when the
// binary was not built for it (-cover -covermode=atomic with the main
// package in -coverpkg), or when the Go toolchain is not on PATH.
func Start(dir, chapter string) (*Session, error) {
	if !Instrumented() {
		return nil, errors.New("this binary was not built with coverage (go run builds it so: go run ./NN-chapter --source)")
	}
	if err := coverage.ClearCounters(); err != nil {
		return nil, fmt.Errorf("this binary's counters cannot be cleared: build it with -covermode=atomic and the main package in -coverpkg (%v)", err)
	}
	if _, err := exec.LookPath("go"); err != nil {
		return nil, errors.New("--source needs the Go toolchain on PATH, to read the counters (go tool covdata)")
	}
	tool, err := goOutput("tool", "-n", "covdata")
	if err != nil {
		return nil, fmt.Errorf("finding go tool covdata: %v", err)
	}
	modcache, err := goOutput("env", "GOMODCACHE")
	if err != nil {
		return nil, fmt.Errorf("go env GOMODCACHE: %v", err)
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return nil, errors.New("this binary holds no build information, so the versions of its modules are unknown")
	}
	s := &Session{chapter: chapter, dir: dir, covdata: tool, files: map[string]*fileFuncs{}, sent: map[string]bool{}, step: -1}
	for _, d := range info.Deps {
		if d.Replace != nil {
			d = d.Replace
		}
		dir := d.Path
		if !filepath.IsAbs(dir) && !strings.HasPrefix(dir, ".") {
			dir = filepath.Join(modcache, escape(d.Path)+"@"+d.Version)
		}
		s.modules = append(s.modules, module{path: d.Path, version: d.Version, dir: dir})
	}
	return s, nil
}

// goOutput runs the go command and returns its output's first line.
func goOutput(args ...string) (string, error) {
	out, err := exec.Command("go", args...).Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) && len(ee.Stderr) > 0 {
			return "", errors.New(firstLine(ee.Stderr))
		}
		return "", err
	}
	return firstLine(out), nil
}

func firstLine(b []byte) string {
	line, _, _ := strings.Cut(strings.TrimSpace(string(b)), "\n")
	return line
}

// escape is a module path as the module cache spells it (an upper-case
// letter becomes '!' and the letter in lower case).
func escape(p string) string {
	var b strings.Builder
	for _, r := range p {
		if unicode.IsUpper(r) {
			b.WriteByte('!')
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Func is a function a step entered, as a report lists it.
type Func struct {
	Part  string // "reflector"
	Name  string // "(*Reflector).list"
	File  string // "tools/cache/reflector.go"
	Line  int
	Count int
}

// Report ends the step that is running: it reads what the step ran,
// clears the counters, writes the step's functions to w (nothing if it
// ran none of the instrumented packages) and hands the step to the
// trace. The next step starts.
func (s *Session) Report(w io.Writer) error {
	files, funcs, err := s.end()
	if err != nil {
		return err
	}
	step := s.step
	s.step++
	if len(files) > 0 {
		texts := map[string]string{}
		for _, f := range files {
			k := trace.SourceKey(f)
			if !s.sent[k] {
				s.sent[k] = true
				texts[k] = s.files[f.Module+"/"+f.Path].text
			}
		}
		trace.RecordSource(trace.SourceStep{Step: step, Files: files}, texts)
	}
	if len(funcs) == 0 {
		return nil
	}
	return Format(w, funcs)
}

// Format writes a step's functions as the terminal shows them: a line
// that says what follows, then one line per function, grouped by part in
// pipeline order, each with how often it was entered and where it is.
func Format(w io.Writer, funcs []Func) error {
	partW, nameW, countW := 0, 0, 0
	for _, f := range funcs {
		partW = max(partW, len(f.Part))
		nameW = max(nameW, len(f.Name))
		countW = max(countW, len(strconv.Itoa(f.Count)))
	}
	var b bytes.Buffer
	plural := "s"
	if len(funcs) == 1 {
		plural = ""
	}
	fmt.Fprintf(&b, "  --source: entered %d function%s of %s:\n", len(funcs), plural, modulesOf(funcs))
	last := ""
	for _, f := range funcs {
		p := ""
		if f.Part != last {
			p, last = f.Part, f.Part
		}
		fmt.Fprintf(&b, "    %-*s  %-*s  ×%-*d  %s:%d\n", partW, p, nameW, f.Name, countW, f.Count, f.File, f.Line)
	}
	_, err := w.Write(b.Bytes())
	return err
}

// modulesOf names the modules funcs are in, for Format's first line.
func modulesOf(funcs []Func) string {
	cr := slices.ContainsFunc(funcs, func(f Func) bool { return strings.HasPrefix(f.Part, "controller-runtime") })
	cg := slices.ContainsFunc(funcs, func(f Func) bool { return !strings.HasPrefix(f.Part, "controller-runtime") })
	switch {
	case cr && cg:
		return "client-go and controller-runtime"
	case cr:
		return "controller-runtime"
	}
	return "client-go"
}

// end reads the counters of the step that is running and clears them.
func (s *Session) end() ([]trace.SourceFile, []Func, error) {
	dir := filepath.Join(s.dir, strconv.Itoa(s.n))
	s.n++
	if err := os.Mkdir(dir, 0o700); err != nil {
		return nil, nil, err
	}
	defer os.RemoveAll(dir)
	if err := coverage.WriteMetaDir(dir); err != nil {
		return nil, nil, err
	}
	if err := coverage.WriteCountersDir(dir); err != nil {
		return nil, nil, err
	}
	if err := coverage.ClearCounters(); err != nil {
		return nil, nil, err
	}
	profile := filepath.Join(dir, "profile.txt")
	if out, err := exec.Command(s.covdata, "textfmt", "-i="+dir, "-o="+profile).CombinedOutput(); err != nil {
		return nil, nil, fmt.Errorf("go tool covdata textfmt: %v: %s", err, firstLine(out))
	}
	text, err := os.ReadFile(profile)
	if err != nil {
		return nil, nil, err
	}
	blocks, err := parseProfile(text)
	if err != nil {
		return nil, nil, err
	}
	return s.mapBlocks(blocks)
}

// block is a line of a text coverage profile that ran.
type block struct {
	file       string // "k8s.io/client-go/tools/cache/reflector.go"
	start, end pos
	count      int
}

// parseProfile reads the blocks of a text profile
// (file:line.col,line.col statements count) that ran, in instrumented
// packages only.
func parseProfile(text []byte) ([]block, error) {
	var blocks []block
	sc := bufio.NewScanner(bytes.NewReader(text))
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "mode:") {
			continue
		}
		var b block
		file, rest, ok := strings.Cut(line, ":")
		fields := strings.Fields(rest)
		if !ok || len(fields) != 3 {
			return nil, fmt.Errorf("coverage profile: bad line %q", line)
		}
		if !slices.Contains(Packages, path.Dir(file)) {
			continue
		}
		count, err := strconv.Atoi(fields[2])
		if err != nil {
			return nil, fmt.Errorf("coverage profile: bad count in %q", line)
		}
		if count == 0 {
			continue
		}
		if _, err := fmt.Sscanf(fields[0], "%d.%d,%d.%d", &b.start.line, &b.start.col, &b.end.line, &b.end.col); err != nil {
			return nil, fmt.Errorf("coverage profile: bad block in %q", line)
		}
		b.file, b.count = file, count
		blocks = append(blocks, b)
	}
	return blocks, sc.Err()
}

// mapBlocks maps blocks to their files and functions.
func (s *Session) mapBlocks(blocks []block) ([]trace.SourceFile, []Func, error) {
	byFile := map[string][]block{}
	var names []string
	for _, b := range blocks {
		if !shown(s.chapter, path.Dir(b.file), path.Base(b.file)) {
			continue
		}
		if byFile[b.file] == nil {
			names = append(names, b.file)
		}
		byFile[b.file] = append(byFile[b.file], b)
	}
	slices.Sort(names)
	var files []trace.SourceFile
	var funcs []Func
	for _, name := range names {
		m, ok := s.moduleOf(name)
		if !ok {
			return nil, nil, fmt.Errorf("%s: in no module of this binary", name)
		}
		rel := strings.TrimPrefix(name, m.path+"/")
		ff, err := s.load(name, filepath.Join(m.dir, filepath.FromSlash(rel)))
		if err != nil {
			return nil, nil, err
		}
		pkg := path.Dir(name)
		sf := trace.SourceFile{Module: m.path, Version: m.version, Path: rel, Part: part(pkg, path.Base(name), "")}
		bs := byFile[name]
		slices.SortFunc(bs, func(a, b block) int { return a.start.line*10000 + a.start.col - b.start.line*10000 - b.start.col })
		for _, b := range bs {
			sf.Blocks = append(sf.Blocks, trace.SourceBlock{Start: b.start.line, End: b.end.line, Count: b.count})
			fi, ok := ff.funcs[b.start]
			if !ok {
				continue
			}
			sf.Funcs = append(sf.Funcs, trace.SourceFunc{Name: fi.name, Line: fi.line, Count: b.count})
			funcs = append(funcs, Func{Part: part(pkg, path.Base(name), fi.recv), Name: fi.name, File: shortPath(m.path, rel), Line: fi.line, Count: b.count})
		}
		slices.SortStableFunc(sf.Funcs, func(a, b trace.SourceFunc) int { return a.Line - b.Line })
		files = append(files, sf)
	}
	slices.SortStableFunc(funcs, func(a, b Func) int {
		if d := partIndex(a.Part) - partIndex(b.Part); d != 0 {
			return d
		}
		if a.File != b.File {
			return strings.Compare(a.File, b.File)
		}
		return a.Line - b.Line
	})
	return files, funcs, nil
}

// moduleOf is the module that holds file (the longest module path that
// is a prefix of it).
func (s *Session) moduleOf(file string) (module, bool) {
	var best module
	for _, m := range s.modules {
		if strings.HasPrefix(file, m.path+"/") && len(m.path) > len(best.path) {
			best = m
		}
	}
	return best, best.path != ""
}

// load reads and parses a source file once.
func (s *Session) load(name, filename string) (*fileFuncs, error) {
	if ff, ok := s.files[name]; ok {
		return ff, nil
	}
	text, err := os.ReadFile(filename)
	if err != nil {
		return nil, fmt.Errorf("reading the source of %s: %v", name, err)
	}
	ff, err := parseFuncs(filename, string(text))
	if err != nil {
		return nil, err
	}
	s.files[name] = ff
	return ff, nil
}
