package main

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// gh begins a link; the tests spell links in two parts so that the
// course's own link check does not take them for links.
const gh = "https://" + "github.com/kubernetes/"

func lines(t *testing.T, name string) []string {
	t.Helper()
	data, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
}

func read(t *testing.T, name string) string {
	t.Helper()
	return strings.Join(lines(t, name), "\n") + "\n"
}

// TestReanchor: a line is found by its text, the nearest of equal ones
// told apart by its surroundings; a changed line by its surroundings.
func TestReanchor(t *testing.T) {
	old, new := lines(t, "old.txt"), lines(t, "new.txt")
	for _, c := range []struct {
		line   int
		status Status
		to     int
	}{
		{1, Same, 1},      // package cache
		{4, Moved, 6},     // func Add, two lines down
		{5, Moved, 7},     // f.lock.Lock() in Add, not Pop's
		{12, Moved, 14},   // f.lock.Lock() in Pop
		{8, Moved, 10},    // "}" after Add: told apart by the lines around it
		{19, Changed, 21}, // %v became %w
		{99, Broken, 0},   // beyond the end
	} {
		a := Reanchor(old, new, c.line)
		if a.Status != c.status || a.New != c.to {
			t.Errorf("line %d: %s at %d, want %s at %d", c.line, a.Status, a.New, c.status, c.to)
		}
	}
	if a := Reanchor(old, nil, 4); a.Status != Gone {
		t.Errorf("no file: %s, want gone", a.Status)
	}
	if a := Reanchor(old, []string{"package other", "", "func X() {}"}, 11); a.Status != Gone {
		t.Errorf("text and surroundings nowhere: %s, want gone", a.Status)
	}
}

// TestFindLinks: Markdown links, ranges, bare links in Go comments and
// the trace's table, pinned to the tag asked for; other tags ignored.
func TestFindLinks(t *testing.T) {
	md := "See [Pop](" + gh + "client-go/blob/v0.37.2/tools/cache/fifo.go#L11-L15)\n" +
		"and [old](" + gh + "client-go/blob/v0.36.0/tools/cache/fifo.go#L3),\n" +
		"[doc](" + gh + "apimachinery/blob/v0.37.2/pkg/watch/watch.go).\n"
	got := FindLinks("01-watch/README.md", md, "v0.37.2")
	if len(got) != 2 {
		t.Fatalf("%d links, want 2: %+v", len(got), got)
	}
	if l := got[0]; l.Repo != "client-go" || l.Path != "tools/cache/fifo.go" || l.From != 11 || l.To != 15 || l.Line != 1 {
		t.Errorf("first link: %+v", l)
	}
	if l := got[1]; l.Repo != "apimachinery" || l.From != 0 || l.Line != 3 {
		t.Errorf("whole-file link: %+v", l)
	}
	src := "// " + gh + "client-go/blob/v0.37.2/rest/request.go#L760\n" +
		`	"x": {"client-go", "tools/cache/reflector.go", 423},` + "\n"
	got = FindLinks("internal/trace/sources.go", src, "v0.37.2")
	if len(got) != 2 || got[0].From != 760 || !got[1].Table || got[1].From != 423 || got[1].Line != 2 {
		t.Errorf("Go file: %+v", got)
	}
	if got := FindLinks("README.md", src, "v0.37.2"); len(got) != 1 {
		t.Errorf("a README has no trace table: %+v", got)
	}
}

// TestResolve: a range re-anchors both ends; the worse end is its status.
func TestResolve(t *testing.T) {
	files := map[string][]string{"v1/a.go": lines(t, "old.txt"), "v2/a.go": lines(t, "new.txt")}
	read := func(repo, tag, path string) []string { return files[tag+"/"+path] }
	links := []Link{
		{File: "05-informer/README.md", Repo: "client-go", Path: "a.go", From: 17, To: 19},
		{File: "README.md", Repo: "client-go", Path: "gone.go", From: 1, To: 1},
	}
	got := Resolve(links, "v1", "v2", read)
	if got[0].Status() != Changed || got[0].From.New != 19 || got[0].To.New != 21 {
		t.Errorf("range: %s %+v", got[0].Status(), got[0])
	}
	if d := got[0].Describe("v2"); !strings.Contains(d, "#L19-L21") || !strings.Contains(d, "%w") {
		t.Errorf("range described as %q", d)
	}
	if got[1].Status() != Broken {
		t.Errorf("a file at neither version: %s", got[1].Status())
	}
	files["v1/gone.go"] = []string{"package x"}
	got = Resolve(links[1:], "v1", "v2", read)
	if d := got[0].Describe("v2"); got[0].Status() != Gone || !strings.Contains(d, "no such file at v2") {
		t.Errorf("a removed file: %s", d)
	}
}

func TestChooseVersion(t *testing.T) {
	listed := []string{"v0.36.0", "v0.37.2", "v0.38.0-alpha.0", "v0.38.0-alpha.2", "v0.37.3"}
	for _, c := range []struct{ asked, want, err string }{
		{"", "v0.38.0-alpha.2", ""},
		{"v0.38.0-alpha.0", "v0.38.0-alpha.0", ""},
		{"v0.36.0", "", "not newer"},
		{"v0.39.0", "", "not among"},
		{"latest", "", "not a semantic version"},
	} {
		got, err := ChooseVersion(listed, "v0.37.2", c.asked)
		if got != c.want || (err == nil) != (c.err == "") || err != nil && !strings.Contains(err.Error(), c.err) {
			t.Errorf("ChooseVersion(%q) = %q, %v; want %q, %q", c.asked, got, err, c.want, c.err)
		}
	}
	if _, err := ChooseVersion([]string{"v0.37.2"}, "v0.37.2", ""); err == nil {
		t.Error("nothing newer: no error")
	}
}

func TestChooseToolchain(t *testing.T) {
	mod := "module k8s.io/client-go\n\ngo 1.27.0\n\ngodebug default=go1.27\n"
	need := GoLine(mod)
	if need != "1.27.0" {
		t.Fatalf("GoLine = %q", need)
	}
	for _, c := range []struct {
		local  string
		cached []string
		want   string
	}{
		{"go1.27.1", nil, "local"},
		{"go1.26.8", []string{"go1.26.9", "go1.27.3", "go1.27.1", "go1.28.0"}, "go1.27.3"},
		{"go1.26.8", nil, "go1.27.0"},
	} {
		if got := ChooseToolchain(c.local, need, c.cached); got != c.want {
			t.Errorf("ChooseToolchain(%s, %v) = %s, want %s", c.local, c.cached, got, c.want)
		}
	}
	if m := cachedToolchain.FindStringSubmatch("toolchain@v0.0.1-go1.27.3.linux-amd64"); m == nil || m[1] != "go1.27.3" {
		t.Errorf("cached toolchain directory: %v", m)
	}
}

// TestUnserved reads the go command's error for a pseudo-version the
// proxy does not serve (as issue 37 met it).
func TestUnserved(t *testing.T) {
	got := Unserved(read(t, "get-error.txt"))
	want := [][2]string{{"k8s.io/kube-openapi", "v0.0.0-20260929181212-2cfbdf149b9a"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Unserved = %v, want %v", got, want)
	}
	if !Newer("v0.0.0-20261014044854-ca3452a79603", "v0.0.0-20260929181212-2cfbdf149b9a") {
		t.Error("a later pseudo-version is not newer")
	}
}

// TestWaiting: a module of the build (not an older version of it, not a
// k8s.io module) that asks for an older client-go minor.
func TestWaiting(t *testing.T) {
	selected := map[string]string{"sigs.k8s.io/controller-runtime": "v0.25.2", "github.com/other/uptodate": "v1.0.0"}
	got := Waiting(read(t, "graph.txt"), selected, "k8s.io/client-go", "v0.38.0-alpha.2")
	want := map[string]string{"sigs.k8s.io/controller-runtime": "v0.25.2 requires k8s.io/client-go v0.37.0"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Waiting = %v, want %v", got, want)
	}
}

// TestMajorMoves: the build error names the course's structured-merge-diff
// v6 and the new modules' v7.
func TestMajorMoves(t *testing.T) {
	errs := read(t, "build-errors.txt")
	got := MajorMoves([]string{"k8s.io/client-go", "sigs.k8s.io/structured-merge-diff/v6", "sigs.k8s.io/yaml"},
		[]string{"sigs.k8s.io/structured-merge-diff/v6", "sigs.k8s.io/structured-merge-diff/v7", "sigs.k8s.io/json"}, errs)
	want := []MajorMove{{"sigs.k8s.io/structured-merge-diff/v6", "sigs.k8s.io/structured-merge-diff/v7"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("MajorMoves = %v, want %v", got, want)
	}
	be := BuildErrors(errs)
	if l := be["github.com/informer-walkthrough/informer-walkthrough/internal/apiserver"]; len(be) != 1 || len(l) != 2 || !strings.HasPrefix(l[1], "internal/apiserver/scale.go:65") {
		t.Errorf("BuildErrors = %v", be)
	}
}

func TestParseTestJSON(t *testing.T) {
	got := ParseTestJSON([]byte(read(t, "test.json")))
	var summary []string
	for _, p := range got {
		summary = append(summary, p.Path[len("example.com/course/"):]+" "+p.Result+" "+strings.Join(p.Failed, ","))
	}
	want := []string{"01-watch FAIL TestGolden", "12-scale timeout ", "cmd/tool no tests ",
		"internal/apiserver/crd FAIL (does not build) ", "internal/cluster ok "}
	if !reflect.DeepEqual(summary, want) {
		t.Errorf("packages: %q, want %q", summary, want)
	}
	if l := got[0].Lines; len(l) != 1 || l[0] != "main_test.go:11: golden mismatch" {
		t.Errorf("failure lines: %q", l)
	}
	if l := got[3].Lines; len(l) != 1 || l[0] != "internal/apiserver/crd/x_test.go:9:2: undefined: y" {
		t.Errorf("build failure lines: %q", l)
	}
}

// TestCompare uses the course's own comparison: numbers are masked.
func TestCompare(t *testing.T) {
	want := []byte("Step 1. Watch\n  ADDED pod/web-1 rv=2\n")
	if s, d := Compare(want, want, time.Second); !strings.HasPrefix(s, "identical") || d != nil {
		t.Errorf("same output: %s %v", s, d)
	}
	if s, d := Compare([]byte("Step 1. Watch\n  ADDED pod/web-1 rv=3\n"), want, time.Second); !strings.Contains(s, "only in numbers") || len(d) != 1 {
		t.Errorf("numbers: %s %v", s, d)
	}
	if s, d := Compare([]byte("Step 1. Watch\n  DELETED pod/web-1 rv=2\n"), want, time.Second); !strings.Contains(s, "differs from") || len(d) != 1 || !strings.Contains(d[0], "step 1") {
		t.Errorf("a changed line: %s %v", s, d)
	}
}

// TestFormat: per chapter, what differs and why; then a summary.
func TestFormat(t *testing.T) {
	r := Report{
		Current: "v0.37.2", Target: "v0.38.0-alpha.2", Toolchain: "go1.27.3",
		Waiting: map[string]string{"sigs.k8s.io/controller-runtime": "v0.25.2 requires k8s.io/client-go v0.37.0"},
		Chapters: []Chapter{
			{Name: "01-watch", Output: "identical to the golden file (1s)",
				Links: []Result{{Link: Link{File: "01-watch/README.md", Line: 3, Repo: "client-go", Path: "a.go", From: 4, To: 4},
					From: Anchor{Status: Moved, Old: 4, New: 6}, To: Anchor{Status: Moved, Old: 4, New: 6}}}},
			{Name: "03-reflector", BrokeFirst: []string{"m/internal/apiserver"}, Output: "identical to the golden file (1s)"},
			{Name: "11-controller-runtime", BuildErr: []string{"x.go:1:1: undefined: y"},
				Waiting: []string{"sigs.k8s.io/controller-runtime: v0.25.2 requires k8s.io/client-go v0.37.0"}},
		},
		Tests: []TestPackage{{Path: "m/01-watch", Result: "ok"}, {Path: "m/check/coursecheck", Result: "FAIL", Failed: []string{"TestSourceLinks"},
			OnCurrent: "they pass on v0.37.2 (one run): likely the new version's doing"}},
	}
	got := Format(r)
	for _, want := range []string{
		"client-go v0.37.2 -> v0.38.0-alpha.2, GOTOOLCHAIN=go1.27.3",
		"waiting for a release of sigs.k8s.io/controller-runtime: v0.25.2 requires",
		"== 01-watch\n  build: ok\n  output: identical",
		"    moved: 01-watch/README.md:3 client-go/a.go#L4 -> #L6\n  tests m/01-watch: ok",
		"== 11-controller-runtime\n  build: does not build\n    x.go:1:1: undefined: y\n  waiting for a release of sigs.k8s.io/controller-runtime",
		"tests m/check/coursecheck: FAIL TestSourceLinks\n    [they pass on v0.37.2 (one run): likely the new version's doing]",
		"== 03-reflector\n  build: ok only once adapted as above: it imports m/internal/apiserver\n",
		"chapters: 2 of 3 build, 2 print their golden output exactly",
		"links: 1 (0 same, 1 moved, 0 changed, 0 gone, 0 broken)",
		"tests: 2 packages, 1 failed",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("report lacks %q:\n%s", want, got)
		}
	}
}

// TestWalkLinks: the copy has no .git; the walk skips what is not a pin.
func TestWalkLinks(t *testing.T) {
	dir := t.TempDir()
	link := gh + "client-go/blob/v0.37.2/tools/cache/fifo.go#L4"
	for file, text := range map[string]string{
		"01-watch/README.md":                    "[x](" + link + ")\n",
		"docs/client-go-v0.38.md":               "[a]: " + link + "\n",
		"check/coursecheck/coursecheck_test.go": "// " + link + "\n",
		".git/x.md":                             link + "\n",
	} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, file)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, file), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := walkLinks(dir, "v0.37.2")
	if err != nil || len(got) != 1 || got[0].File != "01-watch/README.md" {
		t.Errorf("walkLinks = %+v, %v; want the chapter's link only", got, err)
	}
}
