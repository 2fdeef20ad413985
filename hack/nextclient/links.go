package main

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// repoModule maps the GitHub repositories the course links into to their
// Go modules, whose sources at both versions are in the module cache.
var repoModule = map[string]string{
	"client-go":    "k8s.io/client-go",
	"apimachinery": "k8s.io/apimachinery",
	"api":          "k8s.io/api",
	"apiserver":    "k8s.io/apiserver",
}

// linkPattern matches a pinned link in a README or a Go comment: into
// github.com/kubernetes/client-go (or apimachinery, api, apiserver), its
// blob at a tag, a path, and #L10 or #L10-L20.
var linkPattern = regexp.MustCompile(`https://github\.com/kubernetes/(client-go|apimachinery|api|apiserver)/blob/(v[^/\s]+)/([^)#\s\]>"'` + "`" + `]+)(?:#L(\d+)(?:-L(\d+))?)?`)

// sourcePattern matches internal/trace's table of declarations,
// {"client-go", "tools/cache/reflector.go", 423}: links built at run time.
var sourcePattern = regexp.MustCompile(`\{"(client-go|apimachinery)", "([^"]+)", (\d+)\}`)

// Link is one pinned reference to a line (or lines) of a module's file.
type Link struct {
	File     string // the course file that holds it, relative to the root
	Line     int    // its line in that file
	Repo     string // client-go, apimachinery, api, apiserver
	Tag      string
	Path     string // inside the module
	From, To int    // lines linked; 0 when the link names a whole file
	Table    bool   // a trace sources entry, not a URL
	Start    int    // byte offsets of the match in File, for the bump
	End      int
}

// String names the link as a reader would look for it.
func (l Link) String() string {
	s := fmt.Sprintf("%s:%d %s/%s", l.File, l.Line, l.Repo, l.Path)
	if l.From > 0 {
		s += "#L" + strconv.Itoa(l.From)
		if l.To != l.From {
			s += "-L" + strconv.Itoa(l.To)
		}
	}
	return s
}

// FindLinks returns the links in a course file's text pinned to tag.
func FindLinks(file, text, tag string) []Link {
	var links []Link
	for _, m := range linkPattern.FindAllStringSubmatchIndex(text, -1) {
		sub := func(i int) string {
			if m[2*i] < 0 {
				return ""
			}
			return text[m[2*i]:m[2*i+1]]
		}
		if sub(2) != tag {
			continue
		}
		l := Link{File: file, Line: 1 + strings.Count(text[:m[0]], "\n"), Repo: sub(1), Tag: tag,
			Path: sub(3), Start: m[0], End: m[1]}
		l.From, _ = strconv.Atoi(sub(4))
		l.To = l.From
		if sub(5) != "" {
			l.To, _ = strconv.Atoi(sub(5))
		}
		links = append(links, l)
	}
	if strings.HasSuffix(file, ".go") {
		for _, m := range sourcePattern.FindAllStringSubmatchIndex(text, -1) {
			n, _ := strconv.Atoi(text[m[6]:m[7]])
			links = append(links, Link{File: file, Line: 1 + strings.Count(text[:m[0]], "\n"),
				Repo: text[m[2]:m[3]], Tag: tag, Path: text[m[4]:m[5]], From: n, To: n, Table: true,
				Start: m[0], End: m[1]})
		}
	}
	sort.SliceStable(links, func(i, j int) bool { return links[i].Start < links[j].Start })
	return links
}

// Status says what became of a linked line in the new version.
type Status string

const (
	Same    Status = "same"    // the same text on the same line
	Moved   Status = "moved"   // the same text on another line
	Changed Status = "changed" // its place found by the lines around it, its text differs
	Gone    Status = "gone"    // neither the text nor its surroundings are found, or no file
	Broken  Status = "broken"  // the link is outside its file at the old version
)

// Anchor is where one old line is in the new version of its file.
type Anchor struct {
	Status           Status
	Old, New         int
	OldText, NewText string
}

// context is how many lines either side identify a line among equal ones.
const contextLines = 5

// Reanchor finds line n (1-based) of old in new by its content: the lines
// with the same text (spaces trimmed), the one whose surroundings match
// best, the nearest on a tie. Where the text is nowhere, the place whose
// surroundings match best (at least two of them) is where it changed.
// A nil new means the file is gone.
func Reanchor(old, new []string, n int) Anchor {
	a := Anchor{Old: n}
	if n < 1 || n > len(old) {
		a.Status = Broken
		return a
	}
	a.OldText = old[n-1]
	if new == nil {
		a.Status = Gone
		return a
	}
	want := strings.TrimSpace(old[n-1])
	best, bestScore := -1, -1
	consider := func(i, score int) {
		if score > bestScore || score == bestScore && abs(i-(n-1)) < abs(best-(n-1)) {
			best, bestScore = i, score
		}
	}
	for i, l := range new {
		if strings.TrimSpace(l) == want {
			consider(i, around(old, new, n-1, i))
		}
	}
	if best >= 0 && (want != "" || bestScore > 0) {
		a.New, a.NewText = best+1, new[best]
		a.Status = Moved
		if a.New == n && new[best] == old[n-1] {
			a.Status = Same
		}
		return a
	}
	best, bestScore = -1, -1
	for i := range new {
		consider(i, around(old, new, n-1, i))
	}
	if bestScore >= 2 {
		a.New, a.NewText, a.Status = best+1, new[best], Changed
		return a
	}
	a.Status = Gone
	return a
}

// around counts the lines within contextLines of old[i] that equal the lines
// at the same distance from new[j] (spaces trimmed, blank lines ignored).
func around(old, new []string, i, j int) int {
	score := 0
	for d := -contextLines; d <= contextLines; d++ {
		if d == 0 || i+d < 0 || i+d >= len(old) || j+d < 0 || j+d >= len(new) {
			continue
		}
		o := strings.TrimSpace(old[i+d])
		if o != "" && o == strings.TrimSpace(new[j+d]) {
			score++
		}
	}
	return score
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// Result is a link with where its lines are in the new version.
type Result struct {
	Link
	From, To Anchor
	NoFile   bool // the file is not in the new version
}

// Status is the worse of its two ends.
func (r Result) Status() Status {
	rank := map[Status]int{Same: 0, Moved: 1, Changed: 2, Gone: 3, Broken: 4}
	s := r.From.Status
	if rank[r.To.Status] > rank[s] {
		s = r.To.Status
	}
	return s
}

// Resolve re-anchors every link, reading a module's file at a version
// with read (nil lines: no such file).
func Resolve(links []Link, oldTag, newTag string, read func(repo, tag, path string) []string) []Result {
	var out []Result
	for _, l := range links {
		old, new := read(l.Repo, oldTag, l.Path), read(l.Repo, newTag, l.Path)
		r := Result{Link: l, NoFile: old != nil && new == nil}
		switch {
		case l.From == 0 && old != nil && new != nil:
			r.From, r.To = Anchor{Status: Same}, Anchor{Status: Same}
		case l.From == 0:
			r.From, r.To = Anchor{Status: Gone}, Anchor{Status: Gone}
			if old == nil {
				r.From.Status, r.To.Status = Broken, Broken
			}
		default:
			r.From = Reanchor(old, new, l.From)
			r.To = r.From
			if l.To != l.From {
				r.To = Reanchor(old, new, l.To)
			}
		}
		out = append(out, r)
	}
	return out
}

// Describe says in one line what became of a link.
func (r Result) Describe(newTag string) string {
	switch r.Status() {
	case Same:
		return fmt.Sprintf("same: %s", r.Link)
	case Moved:
		return fmt.Sprintf("moved: %s -> %s", r.Link, r.newRange())
	case Changed:
		a := r.From
		if a.Status != Changed {
			a = r.To
		}
		return fmt.Sprintf("changed: %s -> %s\n      was: %s\n      now: %s", r.Link, r.newRange(),
			strings.TrimSpace(a.OldText), strings.TrimSpace(a.NewText))
	case Broken:
		return fmt.Sprintf("broken: %s is not a line of the file at %s", r.Link, r.Tag)
	}
	a := r.From
	if a.Status != Gone {
		a = r.To
	}
	if r.NoFile {
		return fmt.Sprintf("gone: %s: no such file at %s", r.Link, newTag)
	}
	return fmt.Sprintf("gone: %s: not found at %s\n      was: %s", r.Link, newTag, strings.TrimSpace(a.OldText))
}

func (r Result) newRange() string {
	s := "#L" + strconv.Itoa(r.From.New)
	if r.To.New != r.From.New {
		s += "-L" + strconv.Itoa(r.To.New)
	}
	return s
}
