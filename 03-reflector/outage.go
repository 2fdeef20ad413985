package main

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/informer-walkthrough/informer-walkthrough/internal/apiserver"
)

// dropAndHold stages the start of an outage on the workshop cluster:
// new watch requests will wait unanswered, the open watch ends, and
// dropAndHold returns once the reflector's re-watch is waiting. The
// server has no channel for that, so this is the one place the chapter
// polls, and what it polls is the server's own in-memory counter.
func dropAndHold(ctx context.Context, s *apiserver.Server) error {
	s.HoldWatches()
	s.DropWatches()
	err := wait.PollUntilContextTimeout(ctx, time.Millisecond, 10*time.Second,
		true, func(context.Context) (bool, error) {
			return s.HeldWatches() > 0, nil
		})
	if err != nil {
		return fmt.Errorf("waiting for the re-watch to reach the server: %w", err)
	}
	return nil
}
