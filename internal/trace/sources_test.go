package trace

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestSources checks every source link against the module cache: the
// line must declare the function it is named for, at ClientGo.
func TestSources(t *testing.T) {
	dirs := map[string]string{}
	for _, m := range []string{"client-go", "apimachinery"} {
		out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}} {{.Version}}", "k8s.io/"+m).Output()
		if err != nil {
			t.Fatalf("go list -m k8s.io/%s: %v", m, err)
		}
		dir, version, _ := strings.Cut(strings.TrimSpace(string(out)), " ")
		if version != ClientGo {
			t.Fatalf("k8s.io/%s is %s in go.mod; the links say %s", m, version, ClientGo)
		}
		dirs[m] = dir
	}
	for name, s := range sources {
		decl := declaration(name)
		lines, err := readLines(filepath.Join(dirs[s.module], s.path))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if s.line < 1 || s.line > len(lines) || !decl.MatchString(lines[s.line-1]) {
			found := 0
			for i, l := range lines {
				if decl.MatchString(l) {
					found = i + 1
				}
			}
			t.Errorf("%s: %s:%d does not declare it (it is at line %d)", name, s.path, s.line, found)
		}
	}
}

// declaration matches the line that declares the function named name:
// "cache.(*RealFIFO).Pop" → "func (f *RealFIFO) Pop(",
// "cache.processDeltas" → "func processDeltas(".
func declaration(name string) *regexp.Regexp {
	_, rest, _ := strings.Cut(name, ".")
	if strings.HasPrefix(rest, "(") {
		recv, fn, _ := strings.Cut(strings.TrimPrefix(rest, "("), ").")
		ptr := strings.HasPrefix(recv, "*")
		recv = regexp.QuoteMeta(strings.TrimPrefix(recv, "*"))
		star := ""
		if ptr {
			star = `\*`
		}
		return regexp.MustCompile(`^func \(\w+ ` + star + recv + `\) ` + regexp.QuoteMeta(fn) + `[\[(]`)
	}
	return regexp.MustCompile(`^func ` + regexp.QuoteMeta(rest) + `[\[(]`)
}

func readLines(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	return lines, sc.Err()
}

func TestLinkName(t *testing.T) {
	for fn, want := range map[string]string{
		"k8s.io/client-go/tools/cache.(*RealFIFO).Add":                                          "cache.(*RealFIFO).Add",
		"k8s.io/client-go/tools/cache.(*Reflector).watchList.func2.1":                           "cache.(*Reflector).watchList",
		"k8s.io/client-go/util/workqueue.(*Typed[...]).Add":                                     "workqueue.(*Typed[T]).Add",
		"github.com/informer-walkthrough/informer-walkthrough/internal/cachecopy.ProcessDeltas": "cache.processDeltas",
		"main.handler.OnAdd": "",
	} {
		if got, _ := linkName(fn); got != want {
			t.Errorf("linkName(%q) = %q, want %q", fn, got, want)
		}
	}
}
