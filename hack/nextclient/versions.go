package main

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/util/version"
)

// ChooseVersion picks what to move to: the version asked for, or else the
// newest of versions (as `go list -m -versions` lists them, pre-releases
// included) that is newer than current.
func ChooseVersion(versions []string, current, asked string) (string, error) {
	cur, err := version.ParseSemantic(current)
	if err != nil {
		return "", fmt.Errorf("current version %q: %v", current, err)
	}
	if asked != "" {
		v, err := version.ParseSemantic(asked)
		if err != nil {
			return "", fmt.Errorf("version %q is not a semantic version (e.g. v0.38.0-alpha.2)", asked)
		}
		if !slicesContains(versions, asked) {
			return "", fmt.Errorf("version %s is not among the module's versions (%s)", asked, strings.Join(versions, " "))
		}
		if !v.GreaterThan(cur) {
			return "", fmt.Errorf("version %s is not newer than the course's %s", asked, current)
		}
		return asked, nil
	}
	var best *version.Version
	bestS := ""
	for _, s := range versions {
		v, err := version.ParseSemantic(s)
		if err != nil || !v.GreaterThan(cur) {
			continue
		}
		if best == nil || v.GreaterThan(best) {
			best, bestS = v, s
		}
	}
	if best == nil {
		return "", fmt.Errorf("no version newer than %s is listed", current)
	}
	return bestS, nil
}

func slicesContains(s []string, x string) bool {
	for _, y := range s {
		if y == x {
			return true
		}
	}
	return false
}

var goLine = regexp.MustCompile(`(?m)^go (\d+\.\d+(?:\.\d+)?)\s*$`)

// GoLine is the go version a go.mod asks for ("1.27.0"), or "".
func GoLine(gomod string) string {
	m := goLine.FindStringSubmatch(gomod)
	if m == nil {
		return ""
	}
	return m[1]
}

// ChooseToolchain names the GOTOOLCHAIN that can build modules asking for
// go need: "local" when the go command's own version (local, "go1.26.8")
// suffices; else the newest toolchain already in the module cache
// (cached, e.g. "go1.27.3") of need's minor and at least need; else
// "go"+need, which the go command fetches from the module proxy.
func ChooseToolchain(local, need string, cached []string) string {
	n, err := version.ParseGeneric(need)
	if err != nil {
		return "local"
	}
	if l, err := version.ParseGeneric(strings.TrimPrefix(local, "go")); err == nil && l.AtLeast(n) {
		return "local"
	}
	best := ""
	var bestV *version.Version
	for _, c := range cached {
		v, err := version.ParseGeneric(strings.TrimPrefix(c, "go"))
		if err != nil || !v.AtLeast(n) || v.Major() != n.Major() || v.Minor() != n.Minor() {
			continue
		}
		if bestV == nil || v.GreaterThan(bestV) {
			best, bestV = c, v
		}
	}
	if best != "" {
		return best
	}
	return "go" + need
}

// cachedToolchain matches a toolchain's directory in the module cache:
// golang.org/toolchain@v0.0.1-go1.27.3.linux-amd64.
var cachedToolchain = regexp.MustCompile(`^toolchain@v0\.0\.1-(go\d+\.\d+(?:\.\d+)?)\.[a-z0-9]+-[a-z0-9]+$`)

// unserved matches the go command's words for a version the proxy does
// not serve: "k8s.io/kube-openapi@v0.0.0-2026...: reading https://...:
// 403 Forbidden" or "... 404 Not Found" or "... 410 Gone".
var unserved = regexp.MustCompile(`(?m)([a-z0-9.\-]+\.[a-z]+/[^@\s:]+)@(v[^\s:]+): (?:reading|verifying|invalid version)[^\n]*(?:40[34]|410|not available|unknown revision)`)

// Unserved lists the module versions an error from the go command says
// the proxy would not give, each once.
func Unserved(out string) [][2]string {
	var mv [][2]string
	seen := map[string]bool{}
	for _, m := range unserved.FindAllStringSubmatch(out, -1) {
		if k := m[1] + "@" + m[2]; !seen[k] {
			seen[k] = true
			mv = append(mv, [2]string{m[1], m[2]})
		}
	}
	return mv
}

// Newer reports whether version a is newer than b (pseudo-versions
// compare by their time stamp).
func Newer(a, b string) bool {
	va, err1 := version.ParseSemantic(a)
	vb, err2 := version.ParseSemantic(b)
	return err1 == nil && err2 == nil && va.GreaterThan(vb)
}

// Waiting finds the modules of the build list (selected: path → version)
// that require module at an older minor than target: a release of them
// for the new version has yet to come. graph is `go mod graph`.
func Waiting(graph string, selected map[string]string, module, target string) map[string]string {
	t, err := version.ParseSemantic(target)
	if err != nil {
		return nil
	}
	w := map[string]string{}
	for _, line := range strings.Split(graph, "\n") {
		f := strings.Fields(line)
		if len(f) != 2 {
			continue
		}
		from, to := strings.SplitN(f[0], "@", 2), strings.SplitN(f[1], "@", 2)
		if len(from) != 2 || len(to) != 2 || to[0] != module || strings.HasPrefix(from[0], "k8s.io/") {
			continue
		}
		if selected[from[0]] != from[1] {
			continue // an older version, not in the build
		}
		v, err := version.ParseSemantic(to[1])
		if err == nil && (v.Major() != t.Major() || v.Minor() != t.Minor()) {
			w[from[0]] = from[1] + " requires " + module + " " + to[1]
		}
	}
	return w
}

// majorSuffix splits "sigs.k8s.io/structured-merge-diff/v6" into its base
// and major version 6.
var majorSuffix = regexp.MustCompile(`^(.+)/v(\d+)$`)

// MajorMove is a module the course imports at one major version while
// the new modules use the next: the build error names both.
type MajorMove struct{ From, To string }

// MajorMoves finds, among the module paths of the build list, those
// that the build's errors name at two major versions: the course's
// (required in its go.mod) and a newer one the new modules brought.
func MajorMoves(courseRequires, buildList []string, buildErrors string) []MajorMove {
	var moves []MajorMove
	for _, p := range courseRequires {
		m := majorSuffix.FindStringSubmatch(p)
		if m == nil || !strings.Contains(buildErrors, `"`+p+`/`) && !strings.Contains(buildErrors, `"`+p+`"`) {
			continue
		}
		for _, q := range buildList {
			n := majorSuffix.FindStringSubmatch(q)
			if n == nil || n[1] != m[1] || !(atoi(n[2]) > atoi(m[2])) {
				continue
			}
			if strings.Contains(buildErrors, `"`+q+`/`) || strings.Contains(buildErrors, `"`+q+`"`) {
				moves = append(moves, MajorMove{p, q})
			}
		}
	}
	sort.Slice(moves, func(i, j int) bool { return moves[i].From < moves[j].From })
	return moves
}

func atoi(s string) int {
	n := 0
	for _, c := range s {
		n = n*10 + int(c-'0')
	}
	return n
}

// BuildErrors splits `go build` output by the package each error is in
// ("# pkg" headers), keeping the first lines of each.
func BuildErrors(out string) map[string][]string {
	errs := map[string][]string{}
	pkg := ""
	for _, line := range strings.Split(out, "\n") {
		switch {
		case strings.HasPrefix(line, "# "):
			pkg = strings.TrimPrefix(line, "# ")
		case strings.TrimSpace(line) == "" || pkg == "":
		default:
			errs[pkg] = append(errs[pkg], line)
		}
	}
	return errs
}
