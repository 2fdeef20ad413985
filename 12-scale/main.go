// Chapter 12-scale: informers when one process is not enough.
//
// The first sync of many pods (a watch-list, or a LIST then a WATCH);
// one kind split between informers by shard selectors (KEP-5866, alpha
// in 1.36 behind the ShardedListAndWatch gate); two replicas of a small
// controller electing a leader through a Lease, the standby warm.
//
// Read alongside (client-go and apimachinery v0.37.2): tools/cache/
// reflector.go, informers/factory.go, apimachinery pkg/sharding,
// tools/leaderelection/leaderelection.go, resourcelock/leaselock.go.
//
// The lesson is in three files, one a step: firstsync.go, sharding.go
// and leaderelection.go. observe.go holds what only shows them at work
// (the flags, what the shared taps record rendered as lines, and the
// check of step 3's guarantee).
package main

import (
	"context"
	"fmt"
	"io"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/informer-walkthrough/informer-walkthrough/internal/cluster"
	"github.com/informer-walkthrough/informer-walkthrough/internal/fixture"
	"github.com/informer-walkthrough/informer-walkthrough/internal/progress"
)

func main() { cluster.MainWith("12-scale", extras, run) }

// run creates the pods (--pods, default 40), then runs the steps on
// them, one after another.
func run(ctx context.Context, out io.Writer, c *cluster.Cluster) error {
	if err := createPods(ctx, c, int(podCount)); err != nil {
		return err
	}
	if err := firstSync(ctx, out, c); err != nil {
		return err
	}
	if err := shardedInformers(ctx, out, c); err != nil {
		return err
	}
	if err := leaderElection(ctx, out, c); err != nil {
		return err
	}
	return nil
}

// createPods creates n pods, web-1 … web-n, labelled as the course's
// own. Each carries a scheduling gate, so that no scheduler or kubelet
// acts on it: on a real cluster too, they stay as created.
//
// At --pods 20000 this takes seconds before step 1 prints anything: at
// a terminal, a line on stderr says how far it has come.
func createPods(ctx context.Context, c *cluster.Cluster, n int) error {
	pods := c.Client.CoreV1().Pods(c.Namespace)
	created := progress.Start(ctx, "creating pods", n)
	defer created.Done()
	for i := 1; i <= n; i++ {
		pod := fixture.GatedPod(fmt.Sprintf("web-%d", i), cluster.Labels("app", "web"))
		if _, err := pods.Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			return err
		}
		created.Set(i)
	}
	return nil
}
