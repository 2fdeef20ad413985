package progress

import (
	"bytes"
	"fmt"
	"os"
	"syscall"
	"testing"
	"unsafe"
)

// TestTerminal: with stdout and stderr a terminal (a pseudo-terminal
// here), ToTerminal shows the line on stderr.
func TestTerminal(t *testing.T) {
	tty := openPTY(t)
	l := Start(ToTerminal(t.Context(), tty, tty), "creating pods", 2)
	if l == nil {
		t.Fatal("no line at a terminal")
	}
	l.Set(2)
	l.Done()
	var buf bytes.Buffer
	l = Start(ToTerminal(t.Context(), &buf, tty), "creating pods", 2)
	if l != nil {
		t.Error("a line with stdout not a terminal: stdout is piped, the run is not watched")
	}
}

// openPTY opens the terminal end of a new pseudo-terminal, or skips.
func openPTY(t *testing.T) *os.File {
	t.Helper()
	ptmx, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal here: %v", err)
	}
	t.Cleanup(func() { ptmx.Close() })
	// unlockpt and ptsname, as glibc does them (the standard library's
	// syscall has the two ioctls; the course adds no dependency for them).
	var unlock, n int32
	if err := ioctl(ptmx, syscall.TIOCSPTLCK, unsafe.Pointer(&unlock)); err != nil {
		t.Skipf("unlockpt: %v", err)
	}
	if err := ioctl(ptmx, syscall.TIOCGPTN, unsafe.Pointer(&n)); err != nil {
		t.Skipf("ptsname: %v", err)
	}
	tty, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("open the terminal end: %v", err)
	}
	t.Cleanup(func() { tty.Close() })
	return tty
}

func ioctl(f *os.File, req uintptr, arg unsafe.Pointer) error {
	if _, _, errno := syscall.Syscall(syscall.SYS_IOCTL, f.Fd(), req, uintptr(arg)); errno != 0 {
		return errno
	}
	return nil
}
