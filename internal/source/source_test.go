package source

import (
	"bytes"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestParseFuncs: each function, declared or literal, is found at its
// body's "{" (where its first coverage block starts), and named.
func TestParseFuncs(t *testing.T) {
	const src = `package p

type Heap[T any] struct{}

func (h *Heap[T]) Pop() { f := func() { g := func() {}; g() }; f(); _ = func() {} }

func (Heap[T]) Len() int { return 0 }

func plain() {}
`
	ff, err := parseFuncs("p.go", src)
	if err != nil {
		t.Fatal(err)
	}
	got := map[pos]string{}
	for p, f := range ff.funcs {
		got[p] = f.name + "/" + f.recv
	}
	want := map[pos]string{
		{5, 25}: "(*Heap[...]).Pop/Heap",
		{5, 39}: "(*Heap[...]).Pop.func1/Heap",
		{5, 53}: "(*Heap[...]).Pop.func1.1/Heap",
		{5, 80}: "(*Heap[...]).Pop.func2/Heap",
		{7, 26}: "(Heap[...]).Len/Heap",
		{9, 14}: "plain/",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("functions (-want +got):\n%s", diff)
	}
}

// TestParseProfile: only blocks of instrumented packages that ran.
func TestParseProfile(t *testing.T) {
	const profile = `mode: atomic
k8s.io/client-go/tools/cache/reflector.go:423.60,425.2 2 1
k8s.io/client-go/tools/cache/reflector.go:426.3,427.4 1 0
example.com/chapter/main.go:1.1,2.2 1 5
`
	got, err := parseProfile([]byte(profile))
	if err != nil {
		t.Fatal(err)
	}
	want := []block{{file: "k8s.io/client-go/tools/cache/reflector.go", start: pos{423, 60}, end: pos{425, 2}, count: 1}}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(block{}, pos{})); diff != "" {
		t.Errorf("blocks (-want +got):\n%s", diff)
	}
	if _, err := parseProfile([]byte("k8s.io/client-go/tools/cache/x.go:bad\n")); err == nil {
		t.Error("a bad line: no error")
	}
}

// TestPart: files, and shared_informer.go's receivers, to the parts.
func TestPart(t *testing.T) {
	for _, c := range []struct{ pkg, file, recv, want string }{
		{"k8s.io/client-go/tools/cache", "reflector.go", "Reflector", "reflector"},
		{"k8s.io/client-go/tools/cache", "the_real_fifo.go", "RealFIFO", "FIFO"},
		{"k8s.io/client-go/tools/cache", "thread_safe_store.go", "threadSafeMap", "store"},
		{"k8s.io/client-go/tools/cache", "shared_informer.go", "processorListener", "handlers"},
		{"k8s.io/client-go/tools/cache", "shared_informer.go", "sharedIndexInformer", "informer loop"},
		{"k8s.io/client-go/tools/cache", "controller.go", "controller", "informer loop"},
		{"k8s.io/client-go/rest/watch", "decoder.go", "Decoder", "wire"},
		{"k8s.io/client-go/util/workqueue", "queue.go", "Typed", "workqueue"},
		{"k8s.io/client-go/tools/leaderelection", "leaderelection.go", "LeaderElector", "leader election"},
		{"sigs.k8s.io/controller-runtime/pkg/cache", "informer_cache.go", "informerCache", "controller-runtime cache"},
	} {
		if got := part(c.pkg, c.file, c.recv); got != c.want {
			t.Errorf("part(%s, %s, %s) = %q, want %q", c.pkg, c.file, c.recv, got, c.want)
		}
	}
}

// TestFormat: grouped by part, aligned, the part named once.
func TestFormat(t *testing.T) {
	var b bytes.Buffer
	err := Format(&b, []Func{
		{Part: "reflector", Name: "(*Reflector).list", File: "tools/cache/reflector.go", Line: 600, Count: 1},
		{Part: "FIFO", Name: "(*RealFIFO).Replace", File: "tools/cache/the_real_fifo.go", Line: 604, Count: 12},
		{Part: "FIFO", Name: "reconcileReplacement", File: "tools/cache/the_real_fifo.go", Line: 650, Count: 2},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := `  --source: entered 3 functions of client-go:
    reflector  (*Reflector).list     ×1   tools/cache/reflector.go:600
    FIFO       (*RealFIFO).Replace   ×12  tools/cache/the_real_fifo.go:604
               reconcileReplacement  ×2   tools/cache/the_real_fifo.go:650
`
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
