package nextpage

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

const (
	root = "../.."
	page = "docs/client-go-v0.38.md"
)

var (
	versionsRE = regexp.MustCompile(`<!-- versions (\S+) (\S+) -->`)
	chaptersRE = regexp.MustCompile(`(?m)^<!-- chapters((?: \S+)*) -->$`)
	claimRE    = regexp.MustCompile("(?m)^<!-- claim (line|only) (client-go|apimachinery|api|apiextensions-apiserver) (\\S+) (\\S+)(?: (\\d+))? `(.*)` -->$")
	anyClaimRE = regexp.MustCompile(`(?m)^<!-- claim .*$`)
	linkRE     = regexp.MustCompile(`https://github\.com/kubernetes/(client-go|apimachinery|api|apiextensions-apiserver)/blob/([^/\s]+)/([^#\s)]+)(?:#L(\d+)(?:-L(\d+))?)?`)
)

type claim struct {
	kind, repo, version, path string
	line                      int
	text                      string
}

func (c claim) String() string {
	s := fmt.Sprintf("%s@%s %s", c.repo, c.version, c.path)
	if c.line > 0 {
		s += ":" + strconv.Itoa(c.line)
	}
	return s
}

func readPage(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, page))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func parseClaims(t *testing.T, text string) (versions [2]string, claims []claim) {
	t.Helper()
	v := versionsRE.FindStringSubmatch(text)
	if v == nil {
		t.Fatalf("%s: no <!-- versions OLD NEW --> comment", page)
	}
	versions = [2]string{v[1], v[2]}
	if n, m := len(anyClaimRE.FindAllString(text, -1)), len(claimRE.FindAllString(text, -1)); n != m {
		for _, l := range anyClaimRE.FindAllString(text, -1) {
			if !claimRE.MatchString(l) {
				t.Errorf("%s: a claim the test cannot read: %s", page, l)
			}
		}
	}
	for _, m := range claimRE.FindAllStringSubmatch(text, -1) {
		c := claim{kind: m[1], repo: m[2], version: m[3], path: m[4], text: m[6]}
		c.line, _ = strconv.Atoi(m[5])
		if c.version != versions[0] && c.version != versions[1] {
			t.Errorf("%s: claim %s names %s, not one of the page's versions %v", page, c, c.version, versions)
		}
		if c.kind == "line" && c.line == 0 {
			t.Errorf("%s: claim line %s without a line number", page, c)
		}
		claims = append(claims, c)
	}
	if len(claims) == 0 {
		t.Fatalf("%s: no claims found: the pattern is broken", page)
	}
	return versions, claims
}

// source reads module files at a version from the module zip that
// `go mod download` fetches (or finds in the module cache). The zip is
// there even where the go command refuses the module for needing a newer
// Go: the check needs its files, not a build.
type source struct {
	t     *testing.T
	zips  map[string]*zip.Reader
	files map[string][]string
}

func (s *source) lines(repo, version, path string) []string {
	s.t.Helper()
	mod := "k8s.io/" + repo
	key := mod + "@" + version
	if s.zips == nil {
		s.zips, s.files = map[string]*zip.Reader{}, map[string][]string{}
	}
	if l, ok := s.files[key+"/"+path]; ok {
		return l
	}
	z, ok := s.zips[key]
	if !ok {
		out, _ := exec.Command("go", "mod", "download", "-json", key).Output()
		var info struct{ Zip, Error string }
		_ = json.Unmarshal(out, &info)
		data, err := os.ReadFile(info.Zip)
		if info.Zip == "" || err != nil {
			s.t.Fatalf("cannot get %s, which the page's claims are checked against (go mod download -json %s: %s)", key, key, strings.TrimSpace(info.Error+" "+string(out)))
		}
		z, err = zip.NewReader(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			s.t.Fatalf("%s: %v", info.Zip, err)
		}
		s.zips[key] = z
	}
	var lines []string
	f, err := z.Open(key + "/" + path)
	if err == nil {
		data, _ := io.ReadAll(f)
		f.Close()
		lines = strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	}
	s.files[key+"/"+path] = lines
	return lines
}

// TestClaims: each claim on the page is what the module source at that
// version says: a line's text at its number, a text in one version's
// file and not in the other's.
func TestClaims(t *testing.T) {
	versions, claims := parseClaims(t, readPage(t))
	src := &source{t: t}
	for _, c := range claims {
		lines := src.lines(c.repo, c.version, c.path)
		if lines == nil {
			t.Errorf("%s: claim %s: no such file at %s", page, c, c.version)
			continue
		}
		switch c.kind {
		case "line":
			if c.line > len(lines) {
				t.Errorf("%s: claim %s: the file has %d lines", page, c, len(lines))
			} else if got := strings.TrimSpace(lines[c.line-1]); got != c.text {
				t.Errorf("%s: claim %s: the line is\n\t%s\nnot\n\t%s", page, c, got, c.text)
			}
		case "only":
			other := versions[0]
			if c.version == other {
				other = versions[1]
			}
			if !contains(lines, c.text) {
				t.Errorf("%s: claim %s: %q is not in the file at %s", page, c, c.text, c.version)
			}
			if contains(src.lines(c.repo, other, c.path), c.text) {
				t.Errorf("%s: claim %s: %q is in the file at %s too", page, c, c.text, other)
			}
		}
	}
	t.Logf("%d claims checked against %v", len(claims), versions)
}

func contains(lines []string, text string) bool {
	for _, l := range lines {
		if strings.Contains(l, text) {
			return true
		}
	}
	return false
}

// TestLinksHaveClaims: every line the page links to, at either version,
// has a claim that says what is on it, so no link can drift unseen.
func TestLinksHaveClaims(t *testing.T) {
	text := readPage(t)
	versions, claims := parseClaims(t, text)
	claimed := map[string]bool{}
	for _, c := range claims {
		if c.kind == "line" {
			claimed[c.String()] = true
		}
	}
	n := 0
	for _, m := range linkRE.FindAllStringSubmatch(text, -1) {
		n++
		if m[2] != versions[0] && m[2] != versions[1] {
			t.Errorf("%s: %s links %s, not one of the page's versions %v", page, m[0], m[2], versions)
			continue
		}
		for _, l := range []string{m[4], m[5]} {
			if l == "" {
				continue
			}
			n, _ := strconv.Atoi(l)
			c := claim{repo: m[1], version: m[2], path: m[3], line: n}
			if !claimed[c.String()] {
				t.Errorf("%s: %s: no <!-- claim line %s %s %s %d `...` --> says what is on that line", page, m[0], c.repo, c.version, c.path, n)
			}
		}
	}
	if n == 0 {
		t.Fatalf("%s: no links found: the pattern is broken", page)
	}
}

// TestLinkedFromChapters: the course's README and every chapter a change
// extends link to the page.
func TestLinkedFromChapters(t *testing.T) {
	text := readPage(t)
	readmes := map[string]string{"README.md": page}
	for _, m := range chaptersRE.FindAllStringSubmatch(text, -1) {
		for _, ch := range strings.Fields(m[1]) {
			readmes[filepath.Join(ch, "README.md")] = "../" + page
		}
	}
	if len(readmes) < 2 {
		t.Fatalf("%s: no <!-- chapters ... --> comments found", page)
	}
	var names []string
	for readme := range readmes {
		names = append(names, readme)
	}
	sort.Strings(names)
	for _, readme := range names {
		target := readmes[readme]
		data, err := os.ReadFile(filepath.Join(root, readme))
		if err != nil {
			t.Errorf("%s names %s: %v", page, readme, err)
			continue
		}
		if !strings.Contains(string(data), "]("+target) {
			t.Errorf("%s does not link to %s (](%s...)), which names it", readme, page, target)
		}
	}
}
