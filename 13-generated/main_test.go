package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	coursev1alpha1 "github.com/informer-walkthrough/informer-walkthrough/13-generated/apis/course/v1alpha1"
	"github.com/informer-walkthrough/informer-walkthrough/13-generated/generated/informers/externalversions"
	memoinformers "github.com/informer-walkthrough/informer-walkthrough/13-generated/generated/informers/externalversions/course/v1alpha1"
	memolisters "github.com/informer-walkthrough/informer-walkthrough/13-generated/generated/listers/course/v1alpha1"

	"github.com/informer-walkthrough/informer-walkthrough/check/chaptertest"
	"github.com/informer-walkthrough/informer-walkthrough/internal/cluster"
	"github.com/informer-walkthrough/informer-walkthrough/internal/heap"
	"github.com/informer-walkthrough/informer-walkthrough/internal/show"
)

// options start the workshop cluster as main does: serving CRDs.
var options = cluster.Options{Server: extras.Server}

// TestGolden runs the chapter as main does, on a fresh workshop cluster,
// and compares every line it prints with testdata/13-generated.golden.
func TestGolden(t *testing.T) { chaptertest.GoldenWith(t, "13-generated", options, run) }

// TestREADME keeps the README's output blocks equal to the golden file
// and its code blocks equal to the chapter's code.
func TestREADME(t *testing.T) { chaptertest.README(t, "13-generated") }

// TestRealClusterShape runs the chapter as on a real cluster (no
// workshop-server hooks) and checks that it prints the golden file's
// steps but for numbers.
func TestRealClusterShape(t *testing.T) {
	chaptertest.RealClusterShapeWith(t, "13-generated", options, run)
}

// TestREADMEQuotesGeneratedCode checks the README's quotes of generated
// code, which no `// !+name` marker can mark (the generators would drop
// it): a block opened with "```go generated/…/file.go" must be lines of
// that file, byte for byte but for the indentation they share.
func TestREADMEQuotesGeneratedCode(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	const open = "```go generated/"
	rest, n := string(readme), 0
	for {
		_, after, ok := strings.Cut(rest, open)
		if !ok {
			break
		}
		n++
		header, body, _ := strings.Cut(after, "\n")
		block, tail, ok := strings.Cut(body, "```")
		if !ok {
			t.Fatal("README.md: unterminated ```go block")
		}
		rest = tail
		file := "generated/" + strings.TrimSpace(header)
		src, err := os.ReadFile(file)
		if err != nil {
			t.Errorf("README.md quotes %s: %v", file, err)
			continue
		}
		if !quotes(string(src), block) {
			t.Errorf("README.md's block from %s is not in that file "+
				"(did the generators change it? quote it again):\n%s", file, block)
		}
	}
	if n == 0 {
		t.Error("README.md quotes no generated code")
	}
}

// quotes reports whether block is a run of whole lines of src, each
// line with the same number of leading tabs removed.
func quotes(src, block string) bool {
	want := strings.Split(strings.TrimRight(block, "\n"), "\n")
	lines := strings.Split(src, "\n")
	for tabs := 0; tabs < 4; tabs++ {
		indent := strings.Repeat("\t", tabs)
		var shifted []string
		for _, l := range want {
			if l != "" {
				l = indent + l
			}
			shifted = append(shifted, l)
		}
		for i := 0; i+len(shifted) <= len(lines); i++ {
			if cmp.Equal(lines[i:i+len(shifted)], shifted) {
				return true
			}
		}
	}
	return false
}

// codegen turns TestGeneratedCodeIsCurrent on. It runs the four code
// generators, each loading and type-checking its packages from source:
// about 9 s of CPU, and on a fresh clone `go tool` builds them first. So
// go test ./... leaves it out, as Kubernetes projects leave their
// hack/verify-codegen.sh out of go test, and CI (.ci/run) runs it.
var codegen = flag.Bool("codegen", false,
	"run hack/update-codegen.sh on a copy and compare (TestGeneratedCodeIsCurrent)")

// TestGeneratedCodeIsCurrent runs hack/update-codegen.sh on a copy of
// the chapter, in a module of its own with the course's go.mod (so the
// generators are the pinned ones, from the module cache, offline), and
// fails if what they write differs from what is checked in: a file
// changed, missing or extra. It runs with -codegen (see codegen).
func TestGeneratedCodeIsCurrent(t *testing.T) {
	if !*codegen {
		t.Skip("runs the code generators: go test ./13-generated -run GeneratedCode -codegen (.ci/run does)")
	}
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("hack/update-codegen.sh needs bash")
	}
	// Parallel: the generators are processes of their own, and the
	// chapter's runs, which run apart (leakcheck.RunApart), wait on
	// client-go's timers meanwhile. Nothing here starts a goroutine that
	// a serial test's leak check could count: those have all ended.
	t.Parallel()
	tmp := t.TempDir()
	for _, f := range []string{"../go.mod", "../go.sum"} {
		copyFile(t, f, filepath.Join(tmp, filepath.Base(f)))
	}
	chapter := filepath.Join(tmp, "13-generated")
	for _, dir := range []string{"apis", "hack", "generated"} {
		err := filepath.WalkDir(dir, func(file string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			copyFile(t, file, filepath.Join(chapter, file))
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("bash", filepath.Join(chapter, "hack", "update-codegen.sh"))
	// The generators are the tool directive's, at the versions go.mod
	// pins (-mod=readonly). Offline once in the module cache (`go mod
	// download` fetches them with the rest); on a fresh machine the go
	// command fetches them as it fetches any dependency.
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=readonly")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("hack/update-codegen.sh: %v\n%s", err, out)
	}
	want := generatedFiles(t, ".")
	got := generatedFiles(t, chapter)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the checked-in generated code is not what the generators write now; "+
			"run 13-generated/hack/update-codegen.sh (-checked in +generated):\n%s", diff)
	}
}

// generatedFiles reads every generated file under dir: the
// zz_generated files beside the types, and generated/.
func generatedFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(file string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, file)
		rel = filepath.ToSlash(rel)
		if strings.HasPrefix(rel, "generated/") || strings.HasPrefix(filepath.Base(rel), "zz_generated.") {
			b, err := os.ReadFile(file)
			if err != nil {
				return err
			}
			files[rel] = string(bytes.ReplaceAll(b, []byte("\r\n"), []byte("\n")))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o755); err != nil {
		t.Fatal(err)
	}
}

// TestListerObjectsStayUnchanged is the test step 3 promises: it would
// catch code that changes an object a lister returned, which is the
// informer's cached object, shared with every other reader (client-go's
// own check, KUBE_CACHE_MUTATION_DETECTOR=true, panics the process a
// second later). It snapshots the cache, runs the code, and compares:
// withText must pass, and a mutation in place must be caught.
func TestListerObjectsStayUnchanged(t *testing.T) {
	c, client := withMemos(t)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	informer := memoinformers.NewMemoInformer(client, c.Namespace, 0, cache.Indexers{})
	wg.Go(func() { informer.RunWithContext(ctx) })
	if !cache.WaitFor(ctx, "", informer.HasSyncedChecker()) {
		t.Fatal("the informer did not sync")
	}
	lister := memolisters.NewMemoLister(informer.GetIndexer())

	changedBy := func(code func(m *coursev1alpha1.Memo)) []string {
		before := map[string]*coursev1alpha1.Memo{}
		memos, err := lister.List(labels.Everything())
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range memos {
			before[m.Name] = m.DeepCopy()
		}
		for _, m := range memos {
			code(m)
		}
		var changed []string
		for _, m := range memos {
			if !apiequality.Semantic.DeepEqual(before[m.Name], m) {
				changed = append(changed, m.Name)
			}
		}
		slices.Sort(changed)
		return changed
	}
	if got := changedBy(func(m *coursev1alpha1.Memo) { withText(m, "changed") }); len(got) > 0 {
		t.Errorf("withText changed the cached memos %v", got)
	}
	got := changedBy(func(m *coursev1alpha1.Memo) { m.Spec.Text = "changed in place" })
	if want := []string{"lunch", "standup", "welcome"}; !slices.Equal(got, want) {
		t.Errorf("a change in place was caught for %v, want %v", got, want)
	}
}

// BenchmarkMemoCaches is step 6's measurement at scale, for BENCHMARKS.md:
// 1 000 memos cached by the generated (typed) informer and by a dynamic
// one, and the live heap each cache keeps per memo.
//
//	go test ./13-generated -run '^$' -bench MemoCaches -benchtime 1x
func BenchmarkMemoCaches(b *testing.B) {
	const n = 1000
	c, client := withMemos(b)
	memos := client.CourseV1alpha1().Memos(c.Namespace)
	for i := range n - 3 {
		if _, err := memos.Create(b.Context(), newMemo(fmt.Sprintf("note-%04d", i), "c",
			"A note of the course, number "+fmt.Sprint(i)), metav1.CreateOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	dc, err := dynamic.NewForConfig(c.Config)
	if err != nil {
		b.Fatal(err)
	}
	for range b.N {
		ctx, cancel := context.WithCancel(b.Context())
		typed := externalversions.NewSharedInformerFactoryWithOptions(client, 0,
			externalversions.WithNamespace(c.Namespace))
		dyn := dynamicinformer.NewFilteredDynamicSharedInformerFactory(dc, 0, c.Namespace, nil)
		caches := []cache.SharedIndexInformer{
			typed.Course().V1alpha1().Memos().Informer(),
			dyn.ForResource(coursev1alpha1.SchemeGroupVersion.WithResource("memos")).Informer(),
		}
		typed.Start(ctx.Done())
		dyn.Start(ctx.Done())
		if !cache.WaitFor(ctx, "", caches[0].HasSyncedChecker(), caches[1].HasSyncedChecker()) {
			b.Fatal("the informers did not sync")
		}
		cancel()
		typed.Shutdown()
		dyn.Shutdown()
		perObject := heap.ReleasePerObject(caches, n)
		b.ReportMetric(perObject[0], "typed-B/memo")
		b.ReportMetric(perObject[1], "dynamic-B/memo")
	}
}

// TestControllerRecreatesDeletedConfigMap pins the path of step 5's
// controller that the chapter's run does not take: a ConfigMap it owns
// is deleted by someone else, the ConfigMap handler enqueues the owner,
// and the sync makes the ConfigMap again.
func TestControllerRecreatesDeletedConfigMap(t *testing.T) {
	c, client := withMemos(t)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	ownOnly := func(o *metav1.ListOptions) { o.LabelSelector = own.LabelSelector }
	memoFactory := externalversions.NewSharedInformerFactoryWithOptions(client, 0,
		externalversions.WithNamespace(c.Namespace), externalversions.WithTweakListOptions(ownOnly))
	kubeFactory := informers.NewSharedInformerFactoryWithOptions(c.Client, 0,
		informers.WithNamespace(c.Namespace), informers.WithTweakListOptions(ownOnly))
	var wg sync.WaitGroup
	defer func() {
		cancel()
		memoFactory.Shutdown()
		kubeFactory.Shutdown()
		wg.Wait()
	}()
	cmInformer := kubeFactory.Core().V1().ConfigMaps()
	controller, err := newMemoController(c.Client, client,
		memoFactory.Course().V1alpha1().Memos(), cmInformer)
	if err != nil {
		t.Fatal(err)
	}
	added := show.NewLines(ctx)
	_, err = cmInformer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) { added.Send(obj.(*corev1.ConfigMap).Name) },
	})
	if err != nil {
		t.Fatal(err)
	}
	memoFactory.Start(ctx.Done())
	kubeFactory.Start(ctx.Done())
	// The controller logs as sample-controller does; not to the test's
	// output.
	logged := klog.NewContext(ctx, logr.Discard())
	wg.Go(func() { _ = controller.run(logged, 1) })

	got, err := added.AwaitSorted(ctx, 3)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"lunch-memo", "standup-memo", "welcome-memo"}; !slices.Equal(got, want) {
		t.Fatalf("the controller made %v, want %v", got, want)
	}
	err = c.Client.CoreV1().ConfigMaps(c.Namespace).Delete(ctx, "lunch-memo", metav1.DeleteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got, err = added.Await(ctx, 1)
	if err != nil {
		t.Fatalf("no ConfigMap made again after the delete: %v", err)
	}
	if got[0] != "lunch-memo" {
		t.Errorf("after deleting lunch-memo the controller made %s", got[0])
	}
}
