//go:build !unix

package reliability

import (
	"net"
	"testing"
)

// closedPort returns a loopback port nobody listens on: one that was
// listened on and closed (see closedport_unix_test.go).
func closedPort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}
