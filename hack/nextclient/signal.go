package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

// signalContext ends on Ctrl-C or SIGTERM, so that go commands and
// chapters started from here are stopped with it.
func signalContext() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
}
