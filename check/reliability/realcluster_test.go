package reliability

import (
	"bytes"
	"cmp"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/informer-walkthrough/informer-walkthrough/check/golden"
	"github.com/informer-walkthrough/informer-walkthrough/internal/runner"
)

// TestChaptersOnRealCluster runs every chapter twice against the real
// cluster the kubeconfig in REAL_KUBECONFIG names, as a learner would.
// Each run must exit 0, print its golden output but for numbers, with no
// step skipped (the rule every chapter's own real-cluster test applies,
// golden.RealShape), and
// leave nothing labelled by the course behind. Without REAL_KUBECONFIG
// it is skipped: CI has no cluster. hack/realk8s builds and starts
// kube-apiserver of the pinned release to run it on.
//
// What is left behind is looked for as REAL_ADMIN_KUBECONFIG's user
// when it is set, else as the chapters': a learner holding only the
// README's Role may create and delete leases, not list them.
func TestChaptersOnRealCluster(t *testing.T) {
	kubeconfig := os.Getenv("REAL_KUBECONFIG")
	if kubeconfig == "" {
		t.Skip("REAL_KUBECONFIG names no kubeconfig: see hack/realk8s/README.md")
	}
	adminKubeconfig := cmp.Or(os.Getenv("REAL_ADMIN_KUBECONFIG"), kubeconfig)
	config, err := clientcmd.BuildConfigFromFlags("", adminKubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	admin, err := kubernetes.NewForConfig(config)
	if err != nil {
		t.Fatal(err)
	}
	for _, ch := range builtChapters(t) {
		t.Run(ch.name, func(t *testing.T) {
			want, err := os.ReadFile(filepath.Join(root, ch.name, "testdata", ch.name+".golden"))
			if err != nil {
				t.Fatal(err)
			}
			for run := 1; run <= 2; run++ { // the second run finds what the first left
				r := ch.run(t, env(t), "--kubeconfig", kubeconfig)
				if r.code != 0 {
					t.Errorf("run %d: exit status %d:\n%s", run, r.code, r.stderr)
				}
				got := renamedMain.ReplaceAll([]byte(r.stdout), []byte("main."))
				problems := golden.RealShape(namingTheCluster(ch.name, got), namingTheCluster(ch.name, want))
				// A cluster without a feature gate a chapter can use
				// (12's ShardedListAndWatch) gives the output pinned in
				// <chapter>-gate-off.golden: one line says so.
				if alt, err := os.ReadFile(filepath.Join(root, ch.name, "testdata", ch.name+"-gate-off.golden")); err == nil && len(problems) > 0 {
					if len(golden.RealShape(namingTheCluster(ch.name, got), namingTheCluster(ch.name, alt))) == 0 {
						problems = nil
					}
				}
				for _, problem := range problems {
					t.Errorf("run %d: %s", run, problem)
				}
				if left := leftovers(t, admin, runner.DefaultNamespace); len(left) > 0 {
					t.Errorf("run %d left behind: %v", run, left)
				}
			}
		})
	}
}

// renamedMain is the package path a chapter's package main has in the
// binary build makes (chapters/ch10lifecycle): 10 prints a handler's
// name, which go run prints as main.slowHandler.
var renamedMain = regexp.MustCompile(`[\w./-]+/reliability/chapters/ch\w+\.`)

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
		if len(bytes.TrimSpace(m)) == 0 {
			return []byte(" ")
		}
		return []byte("CLUSTER")
	})
}
