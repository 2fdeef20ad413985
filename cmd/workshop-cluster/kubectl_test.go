package main

import (
	"bufio"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/informer-walkthrough/informer-walkthrough/internal/apiserver"
	"github.com/informer-walkthrough/informer-walkthrough/internal/cluster"
)

// The tests here run a real kubectl, where one is on the PATH, against
// the standalone workshop cluster: the demo of INSTRUCTORS.md, as
// written, and kubectl get -w. Without kubectl they are skipped; the
// server's side of each behaviour is tested against kube-apiserver's
// recorded answers in internal/apiserver.

// startForKubectl serves a workshop cluster as main does and returns the
// environment a kubectl needs to reach it (KUBECONFIG, and a cache
// directory of the test's own).
func startForKubectl(t *testing.T) (kubeconfig string, env []string) {
	t.Helper()
	if _, err := exec.LookPath("kubectl"); err != nil {
		t.Skip("no kubectl on the PATH")
	}
	dir := t.TempDir()
	kubeconfig = filepath.Join(dir, "workshop.kubeconfig")
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan *apiserver.Server, 1)
	done := make(chan error, 1)
	go func() { done <- serve(ctx, apiserver.Options{TLS: true}, kubeconfig, io.Discard, ready) }()
	select {
	case <-ready:
	case err := <-done:
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	env = append(os.Environ(), "KUBECONFIG="+kubeconfig, "HOME="+dir) // kubectl's cache under HOME/.kube
	return kubeconfig, env
}

// TestKubectlDemo runs the demo of INSTRUCTORS.md's "Changing objects by
// hand" with bash and checks that it prints the lines shown after it, in
// order. AGE values are compared as ages, not as values.
func TestKubectlDemo(t *testing.T) {
	_, env := startForKubectl(t)
	script, want := instructorsDemo(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", script)
	cmd.Env = env
	out, _ := cmd.CombinedOutput() // the second apply fails, as the demo shows
	got := normalizedLines(string(out))
	i := 0
	for _, w := range normalizedLines(want) {
		for i < len(got) && got[i] != w {
			i++
		}
		if i == len(got) {
			t.Fatalf("the demo did not print %q (in this order); it printed:\n%s", w, out)
		}
		i++
	}
}

// TestKubectlWatch: kubectl get pods -w prints the server's columns, a
// gated pod as SchedulingGated, and Terminating once it is deleted.
func TestKubectlWatch(t *testing.T) {
	kubeconfig, env := startForKubectl(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "kubectl", "get", "pods", "-w")
	cmd.Env = env
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	lines := bufio.NewScanner(stdout)
	next := func(want string) {
		t.Helper()
		for lines.Scan() {
			if normalizedLines(lines.Text())[0] == want {
				return
			}
		}
		t.Fatalf("kubectl get pods -w never printed %q", want)
	}

	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	pods := kubernetes.NewForConfigOrDie(cfg).CoreV1().Pods(cluster.DefaultNamespace)
	// Whether kubectl lists the pod or sees it arrive, its line comes
	// after the header; the delete comes after that line, so kubectl
	// is watching by then.
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-1"}, Spec: corev1.PodSpec{
		SchedulingGates: []corev1.PodSchedulingGate{{Name: "demo"}},
		Containers:      []corev1.Container{{Name: "c", Image: "nginx"}},
	}}
	if _, err := pods.Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	next("NAME READY STATUS RESTARTS AGE")
	next("web-1 0/1 SchedulingGated 0 <age>")
	if err := pods.Delete(ctx, "web-1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	next("web-1 0/1 Terminating 0 <age>")
}

// instructorsDemo returns the sh block after the marker in INSTRUCTORS.md
// and the text block after it.
func instructorsDemo(t *testing.T) (script, output string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "INSTRUCTORS.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(b), "<!-- checked by cmd/workshop-cluster/kubectl_test.go -->")
	if !ok {
		t.Fatal("INSTRUCTORS.md has no checked kubectl demo")
	}
	block := func(lang string) string {
		_, after, ok := strings.Cut(rest, "```"+lang+"\n")
		if !ok {
			t.Fatalf("INSTRUCTORS.md: no %s block after the marker", lang)
		}
		body, after, _ := strings.Cut(after, "```\n")
		rest = after
		return body
	}
	return block("sh"), block("text")
}

var age = regexp.MustCompile(`^([0-9]+[smhdy])+$`)

// normalizedLines splits text into lines with runs of blanks made one
// space and ages made <age>, leaving out empty lines.
func normalizedLines(text string) []string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		f := strings.Fields(l)
		if len(f) == 0 {
			continue
		}
		for i, w := range f {
			if age.MatchString(w) {
				f[i] = "<age>"
			}
		}
		out = append(out, strings.Join(f, " "))
	}
	if out == nil {
		out = []string{""}
	}
	return out
}
