package main

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// Report is what a run found, printed by Format.
type Report struct {
	Current, Target, Toolchain string
	Did                        []string // what the run did to the copy, in order
	BuildErrors                map[string][]string
	Adapted                    []string // what was changed in the copy after the first build
	AdaptedErrors              map[string][]string
	Waiting                    map[string]string // module → why
	Chapters                   []Chapter
	Other                      []Result // links outside the chapters
	Tests                      []TestPackage
	TestsNote                  string // why tests did not run, or their time limit
	Elapsed                    time.Duration
}

// Chapter is what the run found for one chapter.
type Chapter struct {
	Name     string
	BuildErr []string
	Waiting  []string // the modules it imports that wait for a release
	// BrokeFirst are the packages it imports that did not build before
	// the copy was adapted (Report.Adapted).
	BrokeFirst []string
	Output     string // what its output is compared with the golden file
	Diffs      []string
	Links      []Result
}

// TestPackage is one package's result in the copy's test run.
type TestPackage struct {
	Path   string
	Result string // ok, FAIL, no tests, timeout
	Failed []string
	Lines  []string // the first output lines of the failures
	// OnCurrent says how the failed tests do on the current version.
	OnCurrent string
}

const maxErrLines = 6

// Format renders the report, per chapter, then the rest of the course.
func Format(r Report) string {
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format+"\n", a...) }
	p("client-go %s -> %s, GOTOOLCHAIN=%s", r.Current, r.Target, r.Toolchain)
	for _, d := range r.Did {
		p("  did: %s", d)
	}
	if len(r.BuildErrors) == 0 {
		p("go build ./...: ok")
	} else {
		p("go build ./...: fails in %d package(s):", len(r.BuildErrors))
		writeErrors(&b, r.BuildErrors)
	}
	for _, a := range r.Adapted {
		p("  adapted in the copy (the course must do this too): %s", a)
	}
	if len(r.Adapted) > 0 {
		if len(r.AdaptedErrors) == 0 {
			p("go build ./... after adapting: ok")
		} else {
			p("go build ./... after adapting: fails in %d package(s):", len(r.AdaptedErrors))
			writeErrors(&b, r.AdaptedErrors)
		}
	}
	for _, m := range sortedKeys(r.Waiting) {
		p("waiting for a release of %s: %s", m, r.Waiting[m])
	}
	tests := map[string][]TestPackage{}
	for _, t := range r.Tests {
		tests[chapterOf(t.Path)] = append(tests[chapterOf(t.Path)], t)
	}
	var total linkCount
	for _, c := range r.Chapters {
		p("")
		p("== %s", c.Name)
		if len(c.BuildErr) > 0 {
			p("  build: does not build")
			for _, l := range head(c.BuildErr, maxErrLines) {
				p("    %s", l)
			}
		} else if len(c.BrokeFirst) > 0 {
			p("  build: ok only once adapted as above: it imports %s", strings.Join(c.BrokeFirst, ", "))
		} else {
			p("  build: ok")
		}
		for _, w := range c.Waiting {
			p("  waiting for a release of %s (kept at the course's version)", w)
		}
		if c.Output != "" {
			p("  output: %s", c.Output)
		}
		for _, d := range c.Diffs {
			p("    %s", indent(d, "    "))
		}
		total.add(writeLinks(&b, c.Links, r.Target))
		writeTests(&b, tests[c.Name])
	}
	p("")
	p("== the rest of the course (README.md, INSTRUCTORS.md, BENCHMARKS.md, internal/, cmd/, ...)")
	total.add(writeLinks(&b, r.Other, r.Target))
	var rest []TestPackage
	for k, ts := range tests {
		if !isChapter(k) {
			rest = append(rest, ts...)
		}
	}
	sort.Slice(rest, func(i, j int) bool { return rest[i].Path < rest[j].Path })
	writeTests(&b, rest)
	if r.TestsNote != "" {
		p("  tests: %s", r.TestsNote)
	}
	p("")
	p("Summary")
	built, same := 0, 0
	for _, c := range r.Chapters {
		if len(c.BuildErr) == 0 {
			built++
		}
		if strings.HasPrefix(c.Output, "identical") {
			same++
		}
	}
	p("  chapters: %d of %d build, %d print their golden output exactly", built, len(r.Chapters), same)
	p("  links: %d (%d same, %d moved, %d changed, %d gone, %d broken)", total.n, total.c[Same], total.c[Moved], total.c[Changed], total.c[Gone], total.c[Broken])
	if len(r.Tests) > 0 {
		failed := 0
		for _, t := range r.Tests {
			if t.Result != "ok" && t.Result != "no tests" {
				failed++
			}
		}
		p("  tests: %d packages, %d failed", len(r.Tests), failed)
	}
	if r.Elapsed > 0 {
		p("  time: %s", r.Elapsed.Round(time.Second))
	}
	return b.String()
}

type linkCount struct {
	n int
	c map[Status]int
}

func (l *linkCount) add(o linkCount) {
	if l.c == nil {
		l.c = map[Status]int{}
	}
	l.n += o.n
	for k, v := range o.c {
		l.c[k] += v
	}
}

func writeLinks(b *strings.Builder, rs []Result, target string) linkCount {
	c := linkCount{n: len(rs), c: map[Status]int{}}
	for _, r := range rs {
		c.c[r.Status()]++
	}
	if len(rs) == 0 {
		return c
	}
	fmt.Fprintf(b, "  links: %d (%d same, %d moved, %d changed, %d gone, %d broken)\n",
		c.n, c.c[Same], c.c[Moved], c.c[Changed], c.c[Gone], c.c[Broken])
	for _, r := range rs {
		if r.Status() != Same {
			fmt.Fprintf(b, "    %s\n", r.Describe(target))
		}
	}
	return c
}

func writeTests(b *strings.Builder, ts []TestPackage) {
	for _, t := range ts {
		if t.Result == "ok" || t.Result == "no tests" {
			fmt.Fprintf(b, "  tests %s: %s\n", t.Path, t.Result)
			continue
		}
		fmt.Fprintf(b, "  tests %s: %s %s\n", t.Path, t.Result, strings.Join(t.Failed, " "))
		if t.OnCurrent != "" {
			fmt.Fprintf(b, "    [%s]\n", t.OnCurrent)
		}
		for _, l := range head(t.Lines, maxErrLines) {
			fmt.Fprintf(b, "    %s\n", l)
		}
	}
}

func writeErrors(b *strings.Builder, errs map[string][]string) {
	for _, pkg := range sortedKeys(errs) {
		fmt.Fprintf(b, "  %s\n", pkg)
		for _, l := range head(errs[pkg], maxErrLines) {
			fmt.Fprintf(b, "    %s\n", l)
		}
	}
}

func head(lines []string, n int) []string {
	if len(lines) <= n {
		return lines
	}
	return append(lines[:n:n], fmt.Sprintf("... and %d more lines", len(lines)-n))
}

func indent(s, pre string) string { return strings.ReplaceAll(s, "\n", "\n"+pre) }

func sortedKeys[V any](m map[string]V) []string {
	var k []string
	for s := range m {
		k = append(k, s)
	}
	sort.Strings(k)
	return k
}

// isChapter reports whether a directory name is a chapter's: "01-watch".
func isChapter(dir string) bool {
	return len(dir) > 3 && dir[0] >= '0' && dir[0] <= '9' && dir[1] >= '0' && dir[1] <= '9' && dir[2] == '-'
}

// chapterOf is the chapter a package or file belongs to ("01-watch"), or
// "" for the rest of the course. p is a path relative to the root, or a
// package path under the module.
func chapterOf(p string) string {
	for _, part := range strings.Split(p, "/") {
		if isChapter(part) {
			return part
		}
	}
	return ""
}
