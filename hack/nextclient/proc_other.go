//go:build !unix

package main

import "os/exec"

// killGroup: elsewhere cancellation ends the go command alone.
func killGroup(c *exec.Cmd) {}
