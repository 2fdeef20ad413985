package cluster

import (
	"crypto/tls"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// silentServer listens on loopback, accepts every connection and never
// says a word: a VPN or a firewall that swallows the traffic, or a
// server that is hung. It returns its https URL.
func silentServer(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		l.Close()
		<-done
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return "https://" + l.Addr().String()
}

// TestSilentServer: a server that accepts the connection and never
// answers gets one line, "the API server did not answer in time", however
// the wait ends. On a real silent server two timeouts race from run to
// run: Connect's deadline, and client-go's TLS handshake timeout (both
// 10 s). Each case here makes one of them certainly first, and short.
func TestSilentServer(t *testing.T) {
	url := silentServer(t)
	want := "cannot reach the API server (silent): the API server did not answer in time"
	tests := []struct {
		name   string
		within time.Duration // Connect's deadline
		config *rest.Config
	}{
		// client-go's own transport: its 10 s handshake timeout comes
		// long after this deadline.
		{"deadline first", 200 * time.Millisecond,
			&rest.Config{Host: url, TLSClientConfig: rest.TLSClientConfig{Insecure: true}}},
		// A transport like client-go's but with a short handshake
		// timeout, far before the deadline.
		{"TLS handshake timeout first", time.Minute,
			&rest.Config{Host: url, Transport: &http.Transport{
				TLSHandshakeTimeout: 100 * time.Millisecond,
				TLSClientConfig:     &tls.Config{InsecureSkipVerify: true},
			}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			client, err := kubernetes.NewForConfig(tt.config)
			if err != nil {
				t.Fatal(err)
			}
			c := &Cluster{Config: tt.config, Client: client, Namespace: DefaultNamespace, Description: "silent"}
			start := time.Now()
			err = c.prepare(t.Context(), tt.within)
			if err == nil {
				t.Fatal("a silent server passed the checks")
			}
			if err.Error() != want {
				t.Errorf("error %q, want %q", err, want)
			}
			if d := time.Since(start); d > 30*time.Second {
				t.Errorf("took %v, want well under 30 s", d)
			}
		})
	}
}
