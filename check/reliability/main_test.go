package reliability

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/informer-walkthrough/informer-walkthrough/check/browser"
	"github.com/informer-walkthrough/informer-walkthrough/internal/apiserver"
	"github.com/informer-walkthrough/informer-walkthrough/internal/apiserver/crd"
	"github.com/informer-walkthrough/informer-walkthrough/internal/cluster"
)

// root is the repository, seen from this package's folder.
const root = "../.."

// chapter is one NN-topic folder, built into a binary.
type chapter struct {
	name    string // "01-watch"
	bin     string // the built binary
	offline bool   // runner.MainInMemory: runs in memory, ignores the cluster flags
	// entry is the shared main the chapter's main hands over to at once
	// ("cluster.Main", "cluster.MainWith" or "runner.MainInMemory",
	// with the chapter's own name), in a chapter whose files declare no
	// init; else "". Until such a chapter's run function is called, a
	// run of it is that shared code's: flags (its own declared beside
	// the shared ones), the kubeconfig, connecting, --trace, --view,
	// --source. So is whatever it does with a mistake caught there
	// (see sameEarly).
	entry string
}

// TestMain builds every chapter (see build) while the tests that need
// none run, and removes the binaries at the end. The tests run with one
// Chromium for all of TestTraceFlag's pages (browser.Main).
//
// The parallel tests run up to parallelRuns at once unless -parallel
// says otherwise: each mostly waits on a chapter's process, which waits
// on client-go's timers, so testing's default (GOMAXPROCS, two on a
// 2-core machine) would leave the cores idle.
func TestMain(m *testing.M) {
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		if err := flag.Set("test.parallel", strconv.Itoa(parallelRuns)); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	dir, err := os.MkdirTemp("", "reliability")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binDir = dir
	go func() {
		defer close(built)
		chapters, buildErr = build(dir, nil)
	}()
	code := browser.Main(m)
	<-built
	os.RemoveAll(dir)
	os.Exit(code)
}

// parallelRuns is how many parallel tests run at once by default.
const parallelRuns = 8

var (
	built    = make(chan struct{}) // closed when build has ended
	buildErr error
	chapters []chapter // filled by build
	binDir   string    // where the binaries are built, removed at the end
)

// builtChapters returns every chapter, once built.
func builtChapters(t *testing.T) []chapter {
	t.Helper()
	<-built
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return chapters
}

// withCluster returns the chapters that talk to a cluster.
func withCluster(t *testing.T) []chapter {
	return slices.DeleteFunc(slices.Clone(builtChapters(t)), func(c chapter) bool { return c.offline })
}

// result is how a chapter run ended.
type result struct {
	code           int
	stdout, stderr string
}

// limit is how long a chapter may take to fail: the 15 s.
const limit = 15 * time.Second

// env is the environment a chapter runs in: this process's, without
// KUBECONFIG, with a HOME of its own (no ~/.kube/config), plus extra.
func env(t *testing.T, extra ...string) []string {
	e := slices.DeleteFunc(os.Environ(), func(kv string) bool {
		return strings.HasPrefix(kv, "KUBECONFIG=") || strings.HasPrefix(kv, "HOME=")
	})
	return append(append(e, "HOME="+t.TempDir()), extra...)
}

// command prepares a run of the chapter. Past the limit it is sent
// SIGQUIT, so that a hang fails the test with the goroutines' stacks.
func (ch chapter) command(ctx context.Context, env []string, args ...string) (*exec.Cmd, *bytes.Buffer, *bytes.Buffer) {
	cmd := exec.CommandContext(ctx, ch.bin, args...)
	cmd.Env = env
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGQUIT) }
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	return cmd, &stdout, &stderr
}

// run runs the chapter to its end, or for at most limit.
func (ch chapter) run(t *testing.T, env []string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), limit)
	defer cancel()
	cmd, stdout, stderr := ch.command(ctx, env, args...)
	err := cmd.Run()
	r := result{code: cmd.ProcessState.ExitCode(), stdout: stdout.String(), stderr: stderr.String()}
	if ctx.Err() != nil {
		t.Fatalf("%s %s: still running after %v; stacks:\n%s", ch.name, strings.Join(args, " "), limit, r.stderr)
	}
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		t.Fatal(err)
	}
	return r
}

// lines splits output into lines.
func lines(s string) []string {
	s = strings.TrimRight(s, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// errorLines is stderr without the line a real-cluster run starts with
// ("NN-topic: using context ..."), which says where the chapter works.
func errorLines(ch chapter, stderr string) []string {
	return slices.DeleteFunc(lines(stderr), func(l string) bool {
		return strings.HasPrefix(l, ch.name+": using context ")
	})
}

// token is the bearer token of every kubeconfig written here. No output
// may ever show it.
const token = "s3cret-token-do-not-print"

// writeKubeconfig writes a kubeconfig whose current context "workshop"
// points at server and authenticates with token.
func writeKubeconfig(t *testing.T, server string) string {
	return writeKubeconfigWith(t, server, "", "")
}

// writeKubeconfigWith is writeKubeconfig with more fields for the
// cluster (", certificate-authority-data: …") and the user.
func writeKubeconfigWith(t *testing.T, server, clusterFields, userFields string) string {
	t.Helper()
	cfg := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: workshop
  cluster: {server: %q%s}
users:
- name: learner
  user: {token: %s%s}
contexts:
- name: workshop
  context: {cluster: workshop, user: learner}
current-context: workshop
`, server, clusterFields, token, userFields)
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// workshop starts a workshop cluster for a chapter to reach through a
// kubeconfig, that is, on its real-cluster path. It returns the server,
// the kubeconfig, and a client that bypasses the kubeconfig (the admin).
func workshop(t *testing.T) (*apiserver.Server, string, kubernetes.Interface) {
	t.Helper()
	// Serving CRDs, as every kube-apiserver does (13-generated installs one).
	srv, err := apiserver.Start(apiserver.Options{Extend: crd.Serve})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv, writeKubeconfig(t, srv.URL()), kubernetes.NewForConfigOrDie(srv.Config())
}

// createNamespace makes ns, as a cluster admin would for the learner.
func createNamespace(t *testing.T, admin kubernetes.Interface, ns string) {
	t.Helper()
	_, err := admin.CoreV1().Namespaces().Create(t.Context(),
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
}

// leftovers lists what carries the course's label in ns: after a
// chapter has ended, however it ended, there must be nothing.
func leftovers(t *testing.T, admin kubernetes.Interface, ns string) []string {
	t.Helper()
	ctx, own := t.Context(), metav1.ListOptions{LabelSelector: cluster.OwnSelector}
	var left []string
	pods, err := admin.CoreV1().Pods(ns).List(ctx, own)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		left = append(left, "pod/"+p.Name)
	}
	cms, err := admin.CoreV1().ConfigMaps(ns).List(ctx, own)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cms.Items {
		left = append(left, "configmap/"+c.Name)
	}
	deps, err := admin.AppsV1().Deployments(ns).List(ctx, own)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range deps.Items {
		left = append(left, "deployment/"+d.Name)
	}
	leases, err := admin.CoordinationV1().Leases(ns).List(ctx, own) // 12's leader election
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range leases.Items {
		left = append(left, "lease/"+l.Name)
	}
	return left
}
