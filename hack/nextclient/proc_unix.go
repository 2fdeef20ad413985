//go:build unix

package main

import (
	"os/exec"
	"syscall"
)

// killGroup makes c's cancellation end the processes it started too.
func killGroup(c *exec.Cmd) {
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	c.Cancel = func() error { return syscall.Kill(-c.Process.Pid, syscall.SIGKILL) }
}
