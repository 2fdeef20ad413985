package cluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	apisharding "k8s.io/apimachinery/pkg/sharding"
	"k8s.io/client-go/kubernetes"

	"github.com/informer-walkthrough/informer-walkthrough/internal/apiserver"
)

// writeKubeconfig writes a kubeconfig whose current context points at url.
func writeKubeconfig(t *testing.T, url string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config")
	cfg := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: workshop
  cluster: {server: %q}
users:
- name: learner
  user: {token: do-not-print-me}
contexts:
- name: workshop
  context: {cluster: workshop, user: learner}
current-context: workshop
`, url)
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func okRun(context.Context, io.Writer, *Cluster) error { return nil }

// TestBadInput: every mistake a learner can make is one line on stderr
// naming what to fix, exit status 1, and quickly.
func TestBadInput(t *testing.T) {
	t.Setenv("KUBECONFIG", "")
	srv, err := apiserver.Start(apiserver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	srv.InjectFault(apiserver.Fault{Verb: "get", Resource: "namespaces",
		Err: apierrors.NewForbidden(schema.GroupResource{Resource: "namespaces"}, "informer-walkthrough",
			errors.New(`User "learner" cannot get resource "namespaces" in API group "" at the cluster scope`))})
	forbidden := writeKubeconfig(t, srv.URL())
	closed := writeKubeconfig(t, "https://127.0.0.1:1")
	malformed := filepath.Join(t.TempDir(), "bad")
	if err := os.WriteFile(malformed, []byte("clusters: [\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name string
		args []string
		want string // in the one stderr line
	}{
		{"unknown flag", []string{"--bogus"}, "flag provided but not defined: -bogus"},
		{"stray argument", []string{"extra"}, `unexpected argument "extra"`},
		{"missing kubeconfig", []string{"--kubeconfig", "/nonexistent/config"}, "--kubeconfig /nonexistent/config: no such file or directory"},
		{"malformed kubeconfig", []string{"--kubeconfig", malformed}, "cannot read kubeconfig"},
		{"unknown context", []string{"--kubeconfig", forbidden, "--context", "nope"}, `context "nope" does not exist`},
		{"unreachable server", []string{"--kubeconfig", closed}, "cannot reach the API server"},
		{"bad namespace", []string{"--namespace", "Not_A_Name"}, `--namespace "Not_A_Name" is not a valid namespace name`},
		{"rbac forbidden", []string{"--kubeconfig", forbidden}, `cannot get resource "namespaces"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			start := time.Now()
			code := mainExit("01-test", Extras{}, tt.args, &stdout, &stderr, okRun)
			if code != 1 {
				t.Errorf("exit status %d, want 1", code)
			}
			if d := time.Since(start); d > 15*time.Second {
				t.Errorf("took %v, want under 15 s", d)
			}
			lines := strings.Split(strings.TrimRight(stderr.String(), "\n"), "\n")
			if len(lines) != 1 || !strings.HasPrefix(lines[0], "01-test: ") || !strings.Contains(lines[0], tt.want) {
				t.Errorf("stderr = %q, want one line containing %q", stderr.String(), tt.want)
			}
			if strings.Contains(stderr.String(), "do-not-print-me") {
				t.Error("stderr shows the kubeconfig's token")
			}
		})
	}
}

func TestHelp(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := mainExit("01-test", Extras{}, []string{"--help"}, &stdout, &stderr, okRun); code != 0 {
		t.Fatalf("exit status %d, want 0", code)
	}
	if !strings.Contains(stdout.String(), "-kubeconfig") {
		t.Errorf("usage does not mention --kubeconfig:\n%s", stdout.String())
	}
}

// TestRealClusterMode drives the real-cluster path against a workshop
// server reached through a kubeconfig: the namespace is created, the
// course's leftovers are deleted before and after the run, and objects
// without the course's label are never touched.
func TestRealClusterMode(t *testing.T) {
	srv, err := apiserver.Start(apiserver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	kubeconfig := writeKubeconfig(t, srv.URL())
	admin := kubernetes.NewForConfigOrDie(srv.Config())
	ctx := t.Context()
	ns := "walkthrough-test"
	if _, err := admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pod := func(name string, labels map[string]string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "x"}}}}
	}
	// A leftover of an interrupted run, and somebody else's pod.
	for _, p := range []*corev1.Pod{pod("leftover", Labels()), pod("not-ours", map[string]string{"app": "other"})} {
		if _, err := admin.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	var seen []string
	run := func(ctx context.Context, out io.Writer, c *Cluster) error {
		if c.Embedded() {
			return errors.New("embedded cluster used despite --kubeconfig")
		}
		l, err := c.Client.CoreV1().Pods(c.Namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		for _, p := range l.Items {
			seen = append(seen, p.Name)
		}
		_, err = c.Client.CoreV1().Pods(c.Namespace).Create(ctx, pod("made-by-chapter", Labels("app", "web")), metav1.CreateOptions{})
		return err
	}
	var stdout, stderr bytes.Buffer
	if code := mainExit("01-test", Extras{}, []string{"--kubeconfig", kubeconfig, "--namespace", ns}, &stdout, &stderr, run); code != 0 {
		t.Fatalf("exit status %d, stderr: %s", code, stderr.String())
	}
	if got := strings.Join(seen, ","); got != "not-ours" {
		t.Errorf("at start the chapter saw pods %q, want only not-ours (leftover cleaned up)", got)
	}
	l, err := admin.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Items) != 1 || l.Items[0].Name != "not-ours" {
		t.Errorf("after the run pods are %v, want only not-ours", l.Items)
	}
	if !strings.Contains(stderr.String(), `context "workshop" at `+srv.URL()) || strings.Contains(stderr.String(), "do-not-print-me") {
		t.Errorf("stderr = %q", stderr.String())
	}

	// A namespace that does not exist yet is created, with the course's label.
	if code := mainExit("01-test", Extras{}, []string{"--kubeconfig", kubeconfig, "--namespace", "fresh"}, &stdout, &stderr, okRun); code != 0 {
		t.Fatalf("exit status %d, stderr: %s", code, stderr.String())
	}
	got, err := admin.CoreV1().Namespaces().Get(ctx, "fresh", metav1.GetOptions{})
	if err != nil || got.Labels[ManagedByLabel] != ManagedByValue {
		t.Errorf("namespace fresh: %v, labels %v", err, got.Labels)
	}
}

// TestRunError: a chapter's error is one line and exit status 1.
func TestRunError(t *testing.T) {
	t.Setenv("KUBECONFIG", "")
	var stdout, stderr bytes.Buffer
	code := mainExit("01-test", Extras{}, nil, &stdout, &stderr, func(context.Context, io.Writer, *Cluster) error {
		return errors.New("boom")
	})
	if code != 1 || stderr.String() != "01-test: boom\n" {
		t.Errorf("exit %d, stderr %q", code, stderr.String())
	}
}

// TestServerOptions: Options.Server configures the embedded workshop
// cluster, each its own: two in one process, one with the shard
// selector gate on and one without, answer each as configured.
func TestServerOptions(t *testing.T) {
	refuse := func(string) (apisharding.Selector, error) { return nil, errors.New("refused") }
	on, err := Connect(t.Context(), Options{Server: apiserver.Options{ShardSelectors: refuse}})
	if err != nil {
		t.Fatal(err)
	}
	defer on.Close()
	off, err := Connect(t.Context(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer off.Close()
	opts := metav1.ListOptions{ShardSelector: "nope("}
	if _, err := on.Client.CoreV1().Pods(on.Namespace).List(t.Context(), opts); err == nil ||
		!strings.Contains(err.Error(), "invalid shard selector: refused") {
		t.Errorf("gate on: err %v, want invalid shard selector: refused", err)
	}
	if _, err := off.Client.CoreV1().Pods(off.Namespace).List(t.Context(), opts); err != nil {
		t.Errorf("gate off: err %v, want the parameter ignored", err)
	}
}
