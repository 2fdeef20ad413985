package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/util/version"
)

// Pins are the versions a bump moves from and to.
type Pins struct {
	Cur, Next     string // client-go: v0.37.2, v0.38.0
	GoCur, GoNext string // go lines: 1.26.0, 1.27.0
}

// kube is the Kubernetes version that goes with a client-go version:
// v0.38.0-alpha.2 → v1.38.0-alpha.2.
func kube(clientGo string) string { return strings.Replace(clientGo, "v0.", "v1.", 1) }

// minorOf is a version's major.minor: v0.37.2 → v0.37, 1.26.0 → 1.26.
func minorOf(v string) string {
	parts := strings.SplitN(v, ".", 3)
	if len(parts) < 2 {
		return v
	}
	return parts[0] + "." + parts[1]
}

// pinLines are the lines whose versions are the course's pins, not
// history: the bump moves the versions on them. Any other line that
// names the current version is listed for a reviewer.
var pinLines = []*regexp.Regexp{
	regexp.MustCompile(`Read alongside \(client-go`),                   // a chapter's package comment
	regexp.MustCompile(`All links (point at|are to) client-go`),        // a chapter README's walk-through
	regexp.MustCompile(`The course pins \*\*client-go`),                // README, Versions
	regexp.MustCompile(`point at their v[0-9.]+ tag`),                  // README, Versions
	regexp.MustCompile(`^With Go [0-9.]+ or newer`),                    // README, Quick start
	regexp.MustCompile(`Go [0-9.]+ or newer on every laptop`),          // INSTRUCTORS
	regexp.MustCompile(`^- Go [0-9.]+ [a-z0-9]+/[a-z0-9]+; client-go`), // BENCHMARKS' environment
	regexp.MustCompile(`^const ClientGo = "`),                          // internal/trace
	regexp.MustCompile(`GitVersion: "v1\.[0-9.]+[^"]*-workshop"`),      // the workshop cluster's /version
	regexp.MustCompile("`/version` says `v1\\."),                       // README: what the workshop cluster's /version says
}

// BumpText moves the pins in one course file's text: its links (as
// resolved, each already re-anchored in the new version), the version on
// its pin lines. It returns the new text, what it moved, and what names
// the current version but was left for a reviewer.
func BumpText(file, text string, p Pins, results []Result) (string, []string, []string) {
	var moved, left []string
	// Links first, from the end, so that offsets stay valid.
	sort.Slice(results, func(i, j int) bool { return results[i].Start > results[j].Start })
	for _, r := range results {
		switch r.Status() {
		case Same, Moved, Changed:
			var repl string
			if r.Table {
				repl = fmt.Sprintf(`{"%s", "%s", %d}`, r.Repo, r.Path, r.From.New)
			} else {
				repl = "https://github.com/kubernetes/" + r.Repo + "/blob/" + p.Next + "/" + r.Path
				if r.Link.From > 0 {
					repl += r.newRange()
				}
			}
			text = text[:r.Start] + repl + text[r.End:]
			if r.Status() == Changed {
				left = append(left, "re-anchored by the lines around it, its text changed: "+r.Describe(p.Next))
			} else if r.Status() == Moved {
				moved = append(moved, "link "+r.Describe(p.Next))
			}
		default:
			left = append(left, "link not moved: "+r.Describe(p.Next))
		}
	}
	slices.Reverse(moved) // in the file's order
	slices.Reverse(left)
	curMinor, goCurMinor := minorOf(p.Cur), minorOf(p.GoCur)
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		pin := false
		for _, re := range pinLines {
			if re.MatchString(l) {
				pin = true
			}
		}
		if pin {
			n := strings.ReplaceAll(l, p.Cur, p.Next)
			n = strings.ReplaceAll(n, kube(p.Cur), kube(p.Next))
			n = strings.ReplaceAll(n, "go "+p.GoCur, "go "+p.GoNext)
			n = replaceGo(n, goCurMinor, minorOf(p.GoNext))
			if strings.Contains(n, "GitVersion:") {
				n = strings.Replace(n, `Minor: "`+strings.TrimPrefix(curMinor, "v0.")+`"`,
					`Minor: "`+strings.TrimPrefix(minorOf(p.Next), "v0.")+`"`, 1)
			}
			if n != l {
				moved = append(moved, fmt.Sprintf("%s:%d: %s", file, i+1, strings.TrimSpace(n)))
				lines[i] = n
				if file == "BENCHMARKS.md" {
					left = append(left, fmt.Sprintf("%s:%d: moved, but the numbers beside it were measured on %s: measure again", file, i+1, p.Cur))
				}
			}
			continue
		}
		if mentions(l, p) {
			left = append(left, fmt.Sprintf("%s:%d: %s", file, i+1, clip(strings.TrimSpace(l), 140)))
		}
	}
	return strings.Join(lines, "\n"), moved, left
}

// replaceGo moves "Go 1.26" (and "Go 1.26.8") on a pin line to the new
// minor: a pin line names the Go the course needs.
func replaceGo(l, from, to string) string {
	re := regexp.MustCompile(`\bGo ` + regexp.QuoteMeta(from) + `(\.[0-9]+)?\b`)
	return re.ReplaceAllString(l, "Go "+to)
}

// mentions reports whether a line names the current version in any of
// its forms outside a link: v0.37.2, v0.37, v1.37.2, 1.37.
func mentions(l string, p Pins) bool {
	l = linkPattern.ReplaceAllString(l, "")
	for _, v := range []string{p.Cur, kube(p.Cur), minorOf(p.Cur), minorOf(kube(p.Cur))} {
		re := regexp.MustCompile(regexp.QuoteMeta(v) + `\b`)
		if re.MatchString(l) {
			return true
		}
	}
	return false
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// bumpSkip are files a bump leaves as they are: a page that compares two
// fixed versions, a program on a pre-release (its own module), and files
// whose links are examples.
func bumpSkip(file string) bool {
	return strings.HasPrefix(file, "docs/client-go-v") || strings.HasPrefix(file, "docs/v0.") || notLinks(file)
}

// runBump moves the course at dir (by default this repository) to the
// client-go version asked for: go.mod, a dependency's major version where
// the build needs it, every pinned link re-anchored by content, and the
// versions on pin lines; it lists what it left for a reviewer.
func runBump(ctx context.Context, out io.Writer, dir, asked string) error {
	if dir == "" {
		root, err := repoRoot(ctx)
		if err != nil {
			return err
		}
		dir = root
	}
	if _, err := version.ParseSemantic(asked); err != nil {
		return fmt.Errorf("version %q is not a semantic version (e.g. v0.38.0)", asked)
	}
	gomod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		return fmt.Errorf("no go.mod in %s: %v", dir, err)
	}
	m, err := moveModules(ctx, dir, asked, progress)
	if err != nil {
		return err
	}
	g := gocmd{dir: dir, toolchain: m.toolchain}
	newMod, _ := os.ReadFile(filepath.Join(dir, "go.mod"))
	p := Pins{Cur: m.current, Next: m.target, GoCur: GoLine(string(gomod)), GoNext: GoLine(string(newMod))}
	fmt.Fprintf(out, "bump: client-go %s -> %s, go %s -> %s, GOTOOLCHAIN=%s\n", p.Cur, p.Next, p.GoCur, p.GoNext, m.toolchain)
	for _, d := range m.did {
		fmt.Fprintf(out, "  did: %s\n", d)
	}

	progress("go build ./...")
	buildOut, _ := g.run(ctx, "build", "./...")
	if errs := BuildErrors(buildOut); len(errs) > 0 {
		adapted, err := adaptMajorMoves(ctx, g, dir, buildOut)
		if err != nil {
			return err
		}
		for _, a := range adapted {
			fmt.Fprintf(out, "  did: %s\n", a)
		}
		if len(adapted) > 0 {
			if _, err := g.run(ctx, "mod", "tidy"); err != nil {
				fmt.Fprintln(out, "  left: go mod tidy failed; run it")
			}
			buildOut, _ = g.run(ctx, "build", "./...")
		}
		if errs := BuildErrors(buildOut); len(errs) > 0 {
			fmt.Fprintln(out, "  left: go build ./... fails:")
			writeErrorsTo(out, errs)
		} else {
			fmt.Fprintln(out, "  go build ./...: ok")
		}
	} else {
		fmt.Fprintln(out, "  go build ./...: ok")
	}

	cache, err := g.run(ctx, "env", "GOMODCACHE")
	if err != nil {
		return err
	}
	for _, mod := range sortedKeys(repoModule) {
		for _, v := range []string{p.Cur, p.Next} {
			if o, err := g.run(ctx, "mod", "download", repoModule[mod]+"@"+v); err != nil {
				return fmt.Errorf("the module %s@%s is needed to re-anchor links: %s", repoModule[mod], v, firstLine(o))
			}
		}
	}
	read := moduleReader(strings.TrimSpace(cache))
	files, err := exec.CommandContext(ctx, "git", "-C", dir, "ls-files", "-z").Output()
	if err != nil {
		return fmt.Errorf("git ls-files in %s: %v", dir, err)
	}
	var moved, left []string
	nLinks := 0
	for _, f := range strings.Split(string(files), "\x00") {
		if !(strings.HasSuffix(f, ".md") || strings.HasSuffix(f, ".go")) || bumpSkip(f) {
			continue
		}
		path := filepath.Join(dir, f)
		data, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		results := Resolve(FindLinks(f, string(data), p.Cur), p.Cur, p.Next, read)
		nLinks += len(results)
		text, mv, lf := BumpText(f, string(data), p, results)
		moved, left = append(moved, mv...), append(left, lf...)
		if text != string(data) {
			if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
				return err
			}
		}
	}
	if o, err := g.run(ctx, "fmt", "./..."); err != nil {
		fmt.Fprintf(out, "  left: gofmt failed: %s\n", firstLine(o))
	}
	fmt.Fprintf(out, "  links re-anchored: %d (%d moved lines listed below)\n", nLinks, countPrefix(moved, "link "))
	fmt.Fprintf(out, "moved (%d):\n", len(moved))
	for _, s := range moved {
		fmt.Fprintf(out, "  %s\n", indent(s, "  "))
	}
	fmt.Fprintf(out, "left for a reviewer (%d): history, or a claim about %s that may or may not still hold\n", len(left), p.Cur)
	for _, s := range left {
		fmt.Fprintf(out, "  %s\n", indent(s, "  "))
	}
	fmt.Fprintln(out, "not moved by design: docs/client-go-v*.md (compares two fixed tags), docs/v0.*/ (a module of its own);")
	fmt.Fprintln(out, "  sample-controller links (k8s.io/sample-controller is not in the module graph: check its tag by hand)")
	return nil
}

func countPrefix(s []string, pre string) int {
	n := 0
	for _, x := range s {
		if strings.HasPrefix(x, pre) {
			n++
		}
	}
	return n
}

func writeErrorsTo(w io.Writer, errs map[string][]string) {
	var b strings.Builder
	writeErrors(&b, errs)
	io.WriteString(w, b.String())
}
