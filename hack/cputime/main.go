//go:build linux

// Command cputime runs a command and reports, on stderr, its wall time and
// the CPU time of every process it started, however deep: it makes itself
// a child subreaper (prctl PR_SET_CHILD_SUBREAPER), so that processes
// whose parents do not wait for them (Chromium's helpers, which go test
// does not reap) are reparented to it and reaped here, and their CPU
// counted. /usr/bin/time misses those. BENCHMARKS.md measures the test
// suite with it:
//
//	go run ./hack/cputime go test -count=1 ./...
//
// The command's exit status is cputime's.
package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"time"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: cputime command [args...]")
		os.Exit(2)
	}
	if err := prctlSubreaper(); err != nil {
		fmt.Fprintf(os.Stderr, "cputime: cannot become a child subreaper: %v\n", err)
		os.Exit(1)
	}
	cmd := exec.Command(os.Args[1], os.Args[2:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	signal.Ignore(syscall.SIGINT, syscall.SIGQUIT) // the command gets them from the terminal
	start := time.Now()
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "cputime: %v\n", err)
		os.Exit(1)
	}
	// Reap every descendant that comes to us, the command last or not.
	code := -1
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, 0, nil)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil { // ECHILD: nothing left
			break
		}
		if pid == cmd.Process.Pid {
			code = ws.ExitStatus()
			if ws.Signaled() {
				code = 128 + int(ws.Signal())
			}
		}
	}
	wall := time.Since(start)
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru); err != nil {
		fmt.Fprintf(os.Stderr, "cputime: %v\n", err)
		os.Exit(1)
	}
	user := time.Duration(ru.Utime.Nano())
	sys := time.Duration(ru.Stime.Nano())
	fmt.Fprintf(os.Stderr, "cputime: %.1f s wall, %.1f s CPU (%.1f user + %.1f sys)\n",
		wall.Seconds(), (user + sys).Seconds(), user.Seconds(), sys.Seconds())
	os.Exit(code)
}

// prctlSubreaper makes this process the reaper of its orphaned
// descendants.
func prctlSubreaper() error {
	const prSetChildSubreaper = 36
	_, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0)
	if errno != 0 {
		return errno
	}
	return nil
}
