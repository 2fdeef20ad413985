//go:build unix

package reliability

import (
	"syscall"
	"testing"
)

// closedPort returns a loopback port that refuses connections and that
// no server can take until t ends: a TCP socket is bound to it and does
// not listen. (A port that was listened on and closed could be taken at
// once by a server another test starts: once, a chapter sent "closed
// port"'s request to a workshop cluster's plain HTTP.)
func closedPort(t *testing.T) int {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	return sa.(*syscall.SockaddrInet4).Port
}
