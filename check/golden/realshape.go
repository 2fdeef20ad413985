package golden

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// RealShape compares a chapter's output on a real cluster with its
// golden output: the same steps, equal but for numbers. It returns what
// differs, one problem a string.
func RealShape(got, want []byte) []string {
	var problems []string
	gotSteps, wantSteps := steps(string(got)), steps(string(want))
	if len(gotSteps) != len(wantSteps) {
		return []string{fmt.Sprintf("on a real cluster: %d steps, want the golden file's %d:\n%s", len(gotSteps), len(wantSteps), got)}
	}
	for i, g := range gotSteps {
		w := wantSteps[i]
		if slices.Equal(g, w) {
			continue
		}
		why := "differs beyond numbers"
		if strings.Contains(strings.Join(g, "\n"), skipped) {
			why = "says it is skipped: every step runs on a real cluster (issue 25)"
		}
		problems = append(problems, fmt.Sprintf("on a real cluster, step %d %s:\n got:\n%s\nwant:\n%s",
			i+1, why, strings.Join(g, "\n"), strings.Join(w, "\n")))
	}
	return problems
}

// skipped is what a step used to print on a real cluster where it
// needed the workshop server; RealShape names it when it sees it.
const skipped = "skipped on a real cluster"

var number = regexp.MustCompile(`\d+`)

// steps splits a chapter's output at blank lines, its numbers masked.
func steps(out string) [][]string {
	var s [][]string
	for _, step := range strings.Split(strings.TrimSpace(number.ReplaceAllString(out, "N")), "\n\n") {
		s = append(s, strings.Split(step, "\n"))
	}
	return s
}
