package main

import (
	"context"
	"fmt"
	"io"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/informer-walkthrough/informer-walkthrough/internal/apiserver"
	"github.com/informer-walkthrough/informer-walkthrough/internal/cluster"
)

// The outages of steps 4 to 6, staged on the workshop cluster around the
// one change each step makes (in main.go) while the reflector has no
// watch open. Each outage is two calls: the first breaks the watch and
// says what the server did; the second says what happened meanwhile,
// lets the reflector's next request through, and prints what it got.
//
// A real kube-apiserver cannot be told to drop a watch, hold or refuse
// the re-watch, or compact its history on demand. There the first call
// does nothing, and the second says that the step is skipped and awaits
// the change the reflector got over its open watch, without printing it,
// so that steps 7 and 8 print the same.

// stageDropAndHold starts the outage of steps 4 and 6: the server drops
// the watch and holds the reflector's re-watch (dropAndHold).
func (p *pipeline) stageDropAndHold(ctx context.Context, out io.Writer, c *cluster.Cluster) error {
	if !c.Embedded() {
		return nil
	}
	c.ResetRequests()
	if err := dropAndHold(ctx, c.Server); err != nil {
		return err
	}
	fmt.Fprintf(out, "  server dropped the watch; it holds the re-watch from rv=%s\n",
		p.reflector.LastSyncResourceVersion())
	return nil
}

// stageRelease ends step 4's outage: the server releases the re-watch,
// and the new stream replays the change made meanwhile.
func (p *pipeline) stageRelease(ctx context.Context, out io.Writer, c *cluster.Cluster, change string) error {
	if !c.Embedded() {
		fmt.Fprintf(out, "  skipped on a real cluster (kube-apiserver cannot drop a watch on demand); %s without an outage\n", change)
		return p.discard(ctx, 1, 1)
	}
	fmt.Fprintf(out, "  meanwhile: %s; then release the re-watch\n", change)
	c.Server.ReleaseWatches()
	// The new stream and the one change: one Updated.
	return p.printRequestsAndNext(ctx, out, c, 2, 1)
}

// stageRefusedRewatch starts step 5's outage: the server drops the watch
// and answers the re-watch with 429. It prints the refusal as the tap
// saw it, and returns the backoff the reflector then waits on its clock
// (0 on a real cluster).
func (p *pipeline) stageRefusedRewatch(ctx context.Context, out io.Writer, c *cluster.Cluster) (time.Duration, error) {
	if !c.Embedded() {
		return 0, nil
	}
	c.ResetRequests()
	// !+inject429
	c.Server.InjectFault(apiserver.Fault{
		Verb: "watch", Resource: "pods", Times: 1,
		Err: apierrors.NewTooManyRequests("Too many requests, please try again later.", 0),
	})
	c.Server.DropWatches()
	// !-inject429
	fmt.Fprintf(out, "  server dropped the watch; it answers the re-watch from rv=%s with 429\n",
		p.reflector.LastSyncResourceVersion())
	if err := p.printNext(ctx, out, 1, 0); err != nil { // no stream
		return 0, err
	}
	return p.clock.awaitAfter(ctx)
}

// printRewatch ends step 5's outage, once the clock has moved delay on:
// the reflector re-watches from the same resourceVersion, without a
// relist, and the new stream replays the change made meanwhile.
func (p *pipeline) printRewatch(ctx context.Context, out io.Writer, c *cluster.Cluster,
	change string, delay time.Duration) error {
	if !c.Embedded() {
		fmt.Fprintf(out, "  skipped on a real cluster (kube-apiserver cannot answer 429 on demand); %s without an outage\n", change)
		return p.discard(ctx, 1, 1)
	}
	fmt.Fprintf(out, "  reflector backs off %s on its clock; meanwhile: %s; "+
		"then the clock moves %s on\n", delay, change, delay)
	// The new stream and the one change: one Updated, no Replaced.
	if err := p.printRequestsAndNext(ctx, out, c, 2, 1); err != nil {
		return err
	}
	fmt.Fprintf(out, "  relist requests (LIST or watch-list): %d\n", len(relists(c.Requests())))
	return nil
}

// stageCompactAndRelease ends step 6's outage: the server compacts its
// history past the change made meanwhile, then releases the re-watch,
// which gets ERROR 410 Expired; the reflector relists, and the store
// then matches the server.
func (p *pipeline) stageCompactAndRelease(ctx context.Context, out io.Writer, c *cluster.Cluster, change string) error {
	if !c.Embedded() {
		fmt.Fprintf(out, "  skipped on a real cluster (kube-apiserver cannot drop a watch and compact on demand); %s without an outage\n", change)
		return p.discard(ctx, 2, 2)
	}
	rv := c.Server.CompactHistory()
	fmt.Fprintf(out, "  meanwhile: %s; compact the history to rv=%s; "+
		"then release the re-watch\n", change, rv)
	p.clock.forgetArmed() // the relist arms a new resync timer: step 7 waits for it
	c.Server.ReleaseWatches()
	// The re-watch: new stream, ERROR 410; the relist: new stream, 2
	// ADDED, BOOKMARK. Replace queues a Replaced per pod, the tombstone.
	if err := p.printRequestsAndNext(ctx, out, c, 6, 3); err != nil {
		return err
	}
	printStore(out, p.store)
	same, err := matchesServer(ctx, c, p.store)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "  store matches a fresh LIST from the server: %t\n", same)
	return nil
}

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
