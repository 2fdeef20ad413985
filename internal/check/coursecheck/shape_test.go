package coursecheck

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// readmeSections is every chapter README's outline (STYLE.md, "A
// chapter's README.md"), the same names in the same order, so that a
// reader finds the same thing in the same place in every chapter.
var readmeSections = []string{
	"What you will learn",
	"Run it",
	"The output, annotated",
	"Walk-through",
	"Diagram",
	"What changed in recent client-go versions",
	"Exercises",
}

var (
	// splitHeading is a step heading built with +: a line copied from the
	// output could not be found with grep.
	splitHeading = regexp.MustCompile(`"(\\n)*(Step \d+[a-z]?\.|Setup\.)[^"]*"\s*\+`)
	stepN        = regexp.MustCompile(`(?m)^func step\d+\(`)
	heading      = regexp.MustCompile(`(?m)^## (.+)$`)
)

// TestOneChapterShape: the same README sections in every chapter, every
// step heading one string literal, no step function named stepN, and
// main.go at most 450 lines (the lesson, with its harness elsewhere).
func TestOneChapterShape(t *testing.T) {
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !e.IsDir() || !chapterDir.MatchString(e.Name()) {
			continue
		}
		ch := e.Name()
		readme, err := os.ReadFile(filepath.Join(root, ch, "README.md"))
		if err != nil {
			t.Error(err)
			continue
		}
		var got []string
		for _, m := range heading.FindAllStringSubmatch(string(readme), -1) {
			got = append(got, strings.TrimSpace(m[1]))
		}
		if !slices.Equal(got, readmeSections) {
			t.Errorf("%s/README.md sections are %q, want %q", ch, got, readmeSections)
		}
		files, _ := filepath.Glob(filepath.Join(root, ch, "*.go"))
		for _, f := range files {
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			rel, _ := filepath.Rel(root, f)
			if loc := splitHeading.FindIndex(src); loc != nil {
				t.Errorf("%s: a step heading split with +: %q; write it as one literal", rel, src[loc[0]:loc[1]])
			}
			if stepN.Match(src) {
				t.Errorf("%s: a function named stepN; name each step for its topic", rel)
			}
			if filepath.Base(f) == "main.go" {
				if n := strings.Count(string(src), "\n"); n > 450 {
					t.Errorf("%s has %d lines; keep the lesson in at most 450, the harness in another file", rel, n)
				}
			}
		}
	}
}
