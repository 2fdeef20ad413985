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

// AssertQuoted checks that the chapter README quotes only what the
// chapter prints: every ```text block of README.md appears verbatim in
// testdata/<name>.golden, in the README's order, and there is at least
// one. So the lesson's quoted output cannot drift from the program.
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
	rest, golden := string(readme), string(want)
	blocks := 0
	for {
		_, after, ok := strings.Cut(rest, open)
		if !ok {
			break
		}
		block, tail, ok := strings.Cut(after, fence)
		if !ok {
			t.Fatal("README.md: unterminated ```text block")
		}
		blocks++
		i := strings.Index(golden, block)
		if i < 0 {
			t.Errorf("README.md's output block %d is not in testdata/%s.golden (or not in order); "+
				"quote the golden file again:\n%s", blocks, name, block)
			break
		}
		golden, rest = golden[i+len(block):], tail
	}
	if blocks == 0 {
		t.Errorf("README.md quotes no output: add a ```text block from testdata/%s.golden", name)
	}
}
