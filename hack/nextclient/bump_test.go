package main

import (
	"strings"
	"testing"
)

// TestBumpText: links re-anchored and retagged, the pin lines' versions
// moved, history left and listed, a link that cannot move listed.
func TestBumpText(t *testing.T) {
	in := read(t, "bump-in.txt")
	in = strings.Replace(in, "LINK4", gh+"client-go/blob/v0.37.2/tools/cache/fifo.go#L19", 1)
	in = strings.Replace(in, "LINKGONE", gh+"client-go/blob/v0.37.2/tools/cache/gone.go#L1", 1)
	files := map[string][]string{
		"v0.37.2/tools/cache/fifo.go":          lines(t, "old.txt"),
		"v0.38.0-alpha.2/tools/cache/fifo.go":  lines(t, "new.txt"),
		"v0.37.2/tools/cache/gone.go":          {"package cache"},
		"v0.38.0-alpha.2/tools/cache/other.go": {"package cache"},
	}
	read := func(repo, tag, path string) []string { return files[tag+"/"+path] }
	p := Pins{Cur: "v0.37.2", Next: "v0.38.0-alpha.2", GoCur: "1.26.0", GoNext: "1.27.0"}
	results := Resolve(FindLinks("99-x/main.go", in, p.Cur), p.Cur, p.Next, read)
	got, moved, left := BumpText("99-x/main.go", in, p, results)
	for _, want := range []string{
		"// Read alongside (client-go v0.38.0-alpha.2): tools/cache/fifo.go,",
		"// " + gh + "client-go/blob/v0.38.0-alpha.2/tools/cache/fifo.go#L21\n", // %v → %w: changed, re-anchored
		`{"client-go", "tools/cache/fifo.go", 13}`,                              // moved two lines down
		`const ClientGo = "v0.38.0-alpha.2"`,
		`Minor: "38", GitVersion: "v1.38.0-alpha.2-workshop"`,
		"// In v0.37 informers queue through RealFIFO (history: stays).",
		"// With Go 1.26 or newer",
		gh + "client-go/blob/v0.37.2/tools/cache/gone.go#L1", // not moved
	} {
		if !strings.Contains(got, want) {
			t.Errorf("bumped text lacks %q:\n%s", want, got)
		}
	}
	all := strings.Join(left, "\n")
	for _, want := range []string{
		"its text changed: changed: 99-x/main.go:4",
		"link not moved: gone: 99-x/main.go:17 client-go/tools/cache/gone.go#L1: no such file",
		"99-x/main.go:7: // In v0.37 informers",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("left lacks %q:\n%s", want, all)
		}
	}
	if strings.Contains(all, "Read alongside") || strings.Contains(all, "ClientGo") {
		t.Errorf("a pin line is left for review:\n%s", all)
	}
	if m := strings.Join(moved, "\n"); !strings.Contains(m, "moved: 99-x/main.go:9") || !strings.Contains(m, "99-x/main.go:14: var info") {
		t.Errorf("moved:\n%s", m)
	}
}

// TestPinLines: the course's pin lines as they are written.
func TestPinLines(t *testing.T) {
	p := Pins{Cur: "v0.37.2", Next: "v0.38.0", GoCur: "1.26.0", GoNext: "1.27.0"}
	for in, want := range map[string]string{
		"The course pins **client-go v0.37.2** (with k8s.io/api and k8s.io/apimachinery v0.37.2) and Go 1.26.": "The course pins **client-go v0.38.0** (with k8s.io/api and k8s.io/apimachinery v0.38.0) and Go 1.27.",
		"- **Go 1.26 or newer on every laptop.** `go.mod` says `go 1.26.0`. An older":                          "- **Go 1.27 or newer on every laptop.** `go.mod` says `go 1.27.0`. An older",
		"- Go 1.26.8 linux/amd64; client-go, k8s.io/api and k8s.io/apimachinery v0.37.2.":                      "- Go 1.27 linux/amd64; client-go, k8s.io/api and k8s.io/apimachinery v0.38.0.",
		"With Go 1.26 or newer, from a clone of this repository:":                                              "With Go 1.27 or newer, from a clone of this repository:",
		"of a real kube-apiserver v1.36.3. Its `/version` says `v1.37.2-workshop`, a version picked to match":  "of a real kube-apiserver v1.36.3. Its `/version` says `v1.38.0-workshop`, a version picked to match",
		"All links point at client-go **v0.37.2**.":                                                            "All links point at client-go **v0.38.0**.",
	} {
		got, _, _ := BumpText("README.md", in, p, nil)
		if got != want {
			t.Errorf("BumpText(%q)\n = %q\nwant %q", in, got, want)
		}
	}
}
