package realcluster

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/informer-walkthrough/informer-walkthrough/internal/check/chaptertest"
	"github.com/informer-walkthrough/informer-walkthrough/internal/cluster"
	"github.com/informer-walkthrough/informer-walkthrough/internal/runner"
)

const root = "../../.."

// TestChaptersOnRealCluster: see the package comment.
func TestChaptersOnRealCluster(t *testing.T) {
	kubeconfig := os.Getenv("REAL_KUBECONFIG")
	if kubeconfig == "" {
		t.Skip("REAL_KUBECONFIG names no kubeconfig: see hack/realk8s/README.md")
	}
	chapters, err := filepath.Glob(filepath.Join(root, "[0-9][0-9]-*"))
	if err != nil || len(chapters) == 0 {
		t.Fatalf("no chapters under %s: %v", root, err)
	}
	bin := t.TempDir()
	for _, dir := range chapters {
		chapter := filepath.Base(dir)
		t.Run(chapter, func(t *testing.T) {
			exe := filepath.Join(bin, chapter)
			build := exec.Command("go", "build", "-o", exe, "./"+chapter)
			build.Dir = root
			if out, err := build.CombinedOutput(); err != nil {
				t.Fatalf("go build ./%s: %v\n%s", chapter, err, out)
			}
			want, err := os.ReadFile(filepath.Join(dir, "testdata", chapter+".golden"))
			if err != nil {
				t.Fatal(err)
			}
			for run := 1; run <= 2; run++ { // the second run finds what the first left
				got := runChapter(t, exe, kubeconfig)
				for _, problem := range chaptertest.RealShape(namingTheCluster(chapter, got), namingTheCluster(chapter, want)) {
					t.Errorf("run %d: %s", run, problem)
				}
				leftovers(t, kubeconfig, runner.DefaultNamespace)
			}
		})
	}
}

// runChapter runs exe against the cluster and returns its stdout; a run
// that fails fails t with what it wrote on stderr.
func runChapter(t *testing.T, exe, kubeconfig string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*runner.Patience)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe, "--kubeconfig", kubeconfig)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	if err := cmd.Run(); err != nil {
		t.Errorf("%s: %v after %v\n%s", filepath.Base(exe), err, time.Since(start).Round(time.Millisecond), stderr.Bytes())
	}
	t.Logf("%s: %v", filepath.Base(exe), time.Since(start).Round(time.Millisecond))
	return stdout.Bytes()
}

// clusterName is how 08-testing names the cluster it compares the fake
// with: the workshop cluster it starts, or the real one it was given.
var clusterName = regexp.MustCompile(`(the|a) (workshop|real) cluster( it starts)?|(workshop|real) cluster:| {2,}`)

// namingTheCluster makes 08's output the same on both kinds of cluster
// but for the cluster's name (and the padding that aligns it); other
// chapters' output is left as it is.
func namingTheCluster(chapter string, out []byte) []byte {
	if chapter != "08-testing" {
		return out
	}
	return clusterName.ReplaceAllFunc(out, func(m []byte) []byte {
		if bytes.Trim(m, " ") == nil {
			return []byte(" ")
		}
		return []byte("CLUSTER")
	})
}

// leftovers fails t if anything labelled as the course's is left in ns:
// every namespaced resource the server serves that can be listed.
func leftovers(t *testing.T, kubeconfig, ns string) {
	t.Helper()
	config, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	config.WarningHandler = rest.NoWarnings{} // listing deprecated kinds (v1 Endpoints) is the point
	disc, err := discovery.NewDiscoveryClientForConfig(config)
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(config)
	if err != nil {
		t.Fatal(err)
	}
	lists, err := disc.ServerPreferredNamespacedResources()
	if err != nil && len(lists) == 0 {
		t.Fatal(err)
	}
	selector := metav1.ListOptions{LabelSelector: cluster.OwnSelector}
	for _, list := range lists {
		gv, err := schema.ParseGroupVersion(list.GroupVersion)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range list.APIResources {
			if !slices.Contains(r.Verbs, "list") {
				continue
			}
			items, err := dyn.Resource(gv.WithResource(r.Name)).Namespace(ns).List(t.Context(), selector)
			if err != nil {
				continue // a resource this user may not list
			}
			for _, item := range items.Items {
				t.Errorf("left behind: %s %s/%s", r.Name, ns, item.GetName())
			}
		}
	}
}
