package apiserver

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net/http"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	certutil "k8s.io/client-go/util/cert"
)

// TestTLS: with Options.TLS the server speaks HTTPS, with a certificate
// its own CA signed for the loopback names; a client that trusts that CA
// (Config) lists and watches, over HTTP/2 as client-go talks to
// kube-apiserver; one that trusts nothing but the system's roots is
// refused by its own TLS check.
func TestTLS(t *testing.T) {
	s := startServerWith(t, Options{TLS: true, Bootstrap: true})
	if !strings.HasPrefix(s.URL(), "https://127.0.0.1:") {
		t.Fatalf("URL %s, want https://127.0.0.1:PORT", s.URL())
	}
	ca, err := certutil.ParseCertsPEM(s.CA())
	if err != nil || len(ca) != 1 || !ca[0].IsCA {
		t.Fatalf("CA: %v, %v", ca, err)
	}
	// The user's certificate chains to the CA, for client auth.
	certPEM, keyPEM := s.ClientCertificate()
	user, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(ca[0])
	if _, err := user.Leaf.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Errorf("client certificate: %v", err)
	}

	ctx := t.Context()
	cs := kubernetes.NewForConfigOrDie(s.Config())
	cms := cs.CoreV1().ConfigMaps("default")
	w, err := cms.Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "over-tls"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if ev := <-w.ResultChan(); ev.Type != watch.Added || ev.Object.(*corev1.ConfigMap).Name != "over-tls" {
		t.Fatalf("watch: %v %v", ev.Type, ev.Object)
	}

	// The protocol a client-go transport negotiates with it.
	rt, err := rest.TransportFor(s.Config())
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.URL()+"/version", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := rt.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.ProtoMajor != 2 || resp.TLS == nil {
		t.Errorf("%s, TLS %v: want HTTP/2 over TLS", resp.Proto, resp.TLS != nil)
	}

	// Without the CA: no trust, no answer.
	bare := kubernetes.NewForConfigOrDie(&rest.Config{Host: s.URL()})
	_, err = bare.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
	var unknown x509.UnknownAuthorityError
	if !errors.As(err, &unknown) {
		t.Errorf("a client without the CA: %v, want x509.UnknownAuthorityError", err)
	}
}

// TestTLSOffByDefault: the chapters' server speaks plain HTTP.
func TestTLSOffByDefault(t *testing.T) {
	s := startServer(t)
	if cert, _ := s.ClientCertificate(); !strings.HasPrefix(s.URL(), "http://127.0.0.1:") || s.CA() != nil || s.Config().CAData != nil || cert != nil {
		t.Errorf("URL %s, CA %q: want plain HTTP and no CA", s.URL(), s.CA())
	}
}
