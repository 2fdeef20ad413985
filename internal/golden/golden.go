// Package golden compares what a chapter printed with its pinned output in
// testdata/<name>.golden, and rewrites those files on request.
//
// To regenerate every golden file of the course:
//
//	UPDATE_GOLDEN=1 go test ./...
//
// or, for one package, go test ./01-watch -update.
package golden

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// update is the one switch that rewrites golden files. The environment
// variable exists because `go test ./... -update` would hand the flag to
// packages that do not define it.
var update = flag.Bool("update", false, "rewrite testdata/*.golden with the current output")

// Updating reports whether golden files are being rewritten in this run.
func Updating() bool {
	return *update || os.Getenv("UPDATE_GOLDEN") != ""
}

// Assert compares got with testdata/<name>.golden. With -update (or
// UPDATE_GOLDEN=1) it writes got to that file instead.
func Assert(t testing.TB, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if Updating() {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s", path)
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run UPDATE_GOLDEN=1 go test ./... to create it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("output differs from %s (-want +got):\n%s\n"+
			"If the change is intended, regenerate with UPDATE_GOLDEN=1 go test ./... and review the diff.",
			path, diff)
	}
}

// AssertQuoted checks that the chapter README quotes the golden output
// verbatim: the first ```text block of README.md must equal
// testdata/<name>.golden, so the lesson's printed output cannot drift from
// what the chapter prints.
func AssertQuoted(t testing.TB, name string) {
	t.Helper()
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join("testdata", name+".golden"))
	if err != nil {
		t.Fatal(err)
	}
	const open, fence = "```text\n", "```"
	s := string(readme)
	i := strings.Index(s, open)
	if i < 0 {
		t.Fatalf("README.md has no ```text block quoting %s.golden", name)
	}
	s = s[i+len(open):]
	j := strings.Index(s, "\n"+fence)
	if j < 0 {
		t.Fatal("README.md: unterminated ```text block")
	}
	if diff := cmp.Diff(string(want), s[:j+1]); diff != "" {
		t.Errorf("README.md's output block differs from testdata/%s.golden (-golden +README):\n%s", name, diff)
	}
}
