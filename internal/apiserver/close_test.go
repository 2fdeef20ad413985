package apiserver

import (
	"net"
	"testing"
	"time"
)

// TestCloseUnusedConnection: a connection accepted but never used (one
// net/http's Transport dialed and then did not need) does not hold up
// Close. http.Server.Shutdown alone would wait 5 s for it; with the grace
// made longer than that, Close still returns at once.
func TestCloseUnusedConnection(t *testing.T) {
	s := startServer(t)
	s.grace = 10 * time.Second // so that only closing the connection ends Shutdown early
	conn, err := net.Dial("tcp", s.listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// The server has accepted it once its state is tracked.
	for !s.tracks(conn.LocalAddr().String()) {
		time.Sleep(time.Millisecond) // polls the server's own map, no network wait
	}
	start := time.Now()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 4*time.Second {
		t.Errorf("Close took %v: it waited for the unused connection", d)
	}
	if _, err := conn.Read(make([]byte, 1)); err == nil {
		t.Error("the unused connection is still open after Close")
	}
}

// tracks reports whether the server holds remote as an unused connection.
func (s *Server) tracks(remote string) bool {
	s.connMu.Lock()
	defer s.connMu.Unlock()
	for c := range s.unused {
		if c.RemoteAddr().String() == remote {
			return true
		}
	}
	return false
}
