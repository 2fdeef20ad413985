package main

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/informer-walkthrough/informer-walkthrough/internal/apiserver"
)

// TestServe: what kubectl needs works through the written kubeconfig:
// discovery of every resource, then create, list and delete, over HTTPS
// trusting only the CA the kubeconfig carries.
func TestServe(t *testing.T) {
	path := filepath.Join(t.TempDir(), "workshop.kubeconfig")
	ctx, cancel := context.WithCancel(t.Context())
	ready := make(chan *apiserver.Server, 1)
	done := make(chan error, 1)
	go func() { done <- serve(ctx, apiserver.Options{TLS: true}, path, io.Discard, ready) }()
	select {
	case <-ready:
	case err := <-done:
		t.Fatal(err)
	}

	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(cfg.Host, "https://127.0.0.1:") || len(cfg.CAData) == 0 || cfg.Insecure {
		t.Fatalf("kubeconfig: server %s, %d bytes of CA, insecure %v: want https and its CA", cfg.Host, len(cfg.CAData), cfg.Insecure)
	}
	// No CA, no trust: the system's roots do not know the cluster's.
	_, err = kubernetes.NewForConfigOrDie(&rest.Config{Host: cfg.Host}).CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
	var unknown x509.UnknownAuthorityError
	if !errors.As(err, &unknown) {
		t.Errorf("a client without the kubeconfig's CA: %v, want x509.UnknownAuthorityError", err)
	}
	dc := discovery.NewDiscoveryClientForConfigOrDie(cfg)
	_, lists, err := dc.ServerGroupsAndResources()
	if err != nil {
		t.Fatal(err)
	}
	var found []string
	for _, l := range lists {
		for _, r := range l.APIResources {
			found = append(found, l.GroupVersion+"/"+r.Name)
		}
	}
	for _, want := range []string{"v1/pods", "v1/pods/status", "v1/configmaps", "v1/namespaces", "v1/nodes", "apps/v1/deployments"} {
		if !slices.Contains(found, want) {
			t.Errorf("discovery lacks %s (has %v)", want, found)
		}
	}

	cs := kubernetes.NewForConfigOrDie(cfg)
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "x"}}}}
	if _, err := cs.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	l, err := cs.CoreV1().Pods("default").List(ctx, metav1.ListOptions{})
	if err != nil || len(l.Items) != 1 {
		t.Fatalf("list: %v %v", err, l)
	}
	// A plain HTTP request for metadata only, as curl would send it
	// (chapter 09), trusting the kubeconfig's CA as curl --cacert:
	// a PartialObjectMetadataList, no spec.
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, cfg.Host+"/api/v1/namespaces/default/pods", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1")
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var meta struct {
		Kind  string
		Items []map[string]any
	}
	err = json.NewDecoder(resp.Body).Decode(&meta)
	resp.Body.Close()
	if err != nil || meta.Kind != "PartialObjectMetadataList" || len(meta.Items) != 1 || meta.Items[0]["spec"] != nil {
		t.Errorf("metadata-only list: %v, %+v", err, meta)
	}
	if err := cs.CoreV1().Pods("default").Delete(ctx, "p", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}

	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("kubeconfig left behind: %v", err)
	}
}
