package main

// Step 2: one kind split between informers by shard selectors.

import (
	"context"
	"fmt"
	"io"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/sharding"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"

	"github.com/informer-walkthrough/informer-walkthrough/internal/cluster"
	"github.com/informer-walkthrough/informer-walkthrough/internal/fixture"
	"github.com/informer-walkthrough/informer-walkthrough/internal/tap"
)

// shardedInformers splits the pods between 2, then 4 informers, each
// with a range of the 64-bit FNV-1a hash of the pod's uid. First it
// asks whether the server honours shard selectors: with the gate off
// (its default) it ignores them, and every "shard" would hold every pod.
func shardedInformers(ctx context.Context, out io.Writer, c *cluster.Cluster) error {
	fmt.Fprintln(out, "\nStep 2. Sharding: informers that each hold the pods whose uid hashes into a range")
	pods := c.Client.CoreV1().Pods(c.Namespace)

	// One list of one item asks the question. A server that applied the
	// selector says so in the list's metadata.shardInfo; one that
	// ignored it answers as if it had not been sent.
	// !+probe
	probe, err := pods.List(ctx, metav1.ListOptions{
		LabelSelector: cluster.OwnSelector, Limit: 1,
		ShardSelector: shardRanges(2)[0].String(),
	})
	if err != nil {
		return err
	}
	if probe.ShardInfo == nil { // the server ignored the selector
		// !-probe
		return printIgnored(out)
	}
	printHonoured(out, probe.ShardInfo)

	// Two shards, then four. Each run ends with web-1 deleted
	// (changeOnePod), so web-1 comes back before the next, under a new
	// uid: it may hash into another shard.
	for _, n := range []int{2, 4} {
		if err := runShards(ctx, out, c, shardRanges(n)); err != nil {
			return err
		}
		web1 := fixture.GatedPod("web-1", cluster.Labels("app", "web"))
		if _, err := pods.Create(ctx, web1, metav1.CreateOptions{}); err != nil {
			return err
		}
	}
	return nil
}

// runShards runs one informer per shard and, while they run, shows where
// the pods are (printShards checks that the shards hold disjoint parts
// whose union is every pod, each pod in the shard its uid's hash names)
// and where one pod's update and delete go (changeOnePod).
func runShards(ctx context.Context, out io.Writer, c *cluster.Cluster, shards []sharding.Selector) error {
	fmt.Fprintf(out, "  %d shards:\n", len(shards))

	// Every factory is shut down, waited for, before runShards returns,
	// on every path.
	ctx, stop := context.WithCancel(ctx)
	var factories []informers.SharedInformerFactory
	defer func() {
		stop()
		for _, f := range factories {
			f.Shutdown()
		}
	}()

	// One factory per shard, its selector in the list options that
	// every list and watch of its informers sends (ownPods). Each
	// informer has a handler that reports what it hears (a tap.Handler,
	// named for its shard), all to one recorder.
	rec := tap.NewRecorder(ctx)
	var stores []cache.Store
	var handlersSynced []cache.DoneChecker
	for i, shard := range shards {
		// !+shard
		factory := informers.NewSharedInformerFactoryWithOptions(c.Client, 0,
			informers.WithNamespace(c.Namespace), ownPods(c, shard.String()))
		inf := factory.Core().V1().Pods().Informer()
		// !-shard
		shardHandler := tap.Handler{Rec: rec, Name: fmt.Sprintf("shard %d", i)}
		reg, err := inf.AddEventHandler(shardHandler)
		if err != nil {
			return err
		}
		handlersSynced = append(handlersSynced, reg.HasSyncedChecker())
		factory.Start(ctx.Done())
		factories = append(factories, factory)
		stores = append(stores, inf.GetStore())
	}
	// A handler's registration has synced once its informer has and the
	// handler has had every pod of the initial list: all OnAdds are in,
	// before anything changes.
	if !cache.WaitFor(ctx, "", handlersSynced...) {
		return fmt.Errorf("the shards' handlers did not sync: %w", context.Cause(ctx))
	}

	// All synced: where the pods are, then where one pod's changes go.
	if err := printShards(out, shards, stores); err != nil {
		return err
	}
	if err := changeOnePod(ctx, out, c, shards, rec); err != nil {
		return err
	}
	return nil
}

// changeOnePod updates a pod's label, then deletes it: both changes come
// to the one informer whose shard holds its uid, because the server
// filters every watch event through each watch's selector too.
func changeOnePod(ctx context.Context, out io.Writer, c *cluster.Cluster, shards []sharding.Selector, rec *tap.Recorder) error {
	pods := c.Client.CoreV1().Pods(c.Namespace)
	pod, err := pods.Get(ctx, "web-1", metav1.GetOptions{})
	if err != nil {
		return err
	}

	// Which shard should hear of it: the one whose range holds the
	// hash of its uid, as apimachinery's Matches computes it.
	owner := slices.IndexFunc(shards, func(s sharding.Selector) bool {
		ok, err := s.Matches(pod)
		return err == nil && ok
	})

	pod.Labels["tier"] = "front"
	if _, err := pods.Update(ctx, pod, metav1.UpdateOptions{}); err != nil {
		return err
	}
	if err := pods.Delete(ctx, pod.Name, metav1.DeleteOptions{}); err != nil {
		return err
	}

	// The update, then the delete's two events: kube-apiserver removes
	// a pod that is on no node at once, but in two watch events, MODIFIED
	// with a deletionTimestamp, then DELETED (the workshop cluster too,
	// internal/apiserver/store.go). A handler gets the first two as
	// OnUpdates; the handlers' calls are awaited up to the OnDelete.
	changes, err := awaitDeleted(ctx, rec)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "    web-1's uid hashes into shard %d: update and delete came to %s\n",
		owner, handlersOf(changes))
	return nil
}

// shardRanges splits the 64-bit hash space into n equal ranges, one
// selector each. Bounds are 16 hex digits, the end of the last one 2^64,
// as the server's parser demands (k8s.io/apiserver pkg/sharding).
func shardRanges(n int) []sharding.Selector {
	var shards []sharding.Selector
	step := ^uint64(0)/uint64(n) + 1
	for i := range n {
		end := fmt.Sprintf("0x%016x", uint64(i+1)*step)
		if i == n-1 {
			end = "0x10000000000000000"
		}
		// !+ranges
		shards = append(shards, sharding.NewSelector(sharding.ShardRangeRequirement{
			Key:   "object.metadata.uid",
			Start: fmt.Sprintf("0x%016x", uint64(i)*step),
			End:   end,
		}))
		// !-ranges
	}
	return shards
}

// ownPods makes a factory's lists and watches select the course's own
// pods and, given a shard selector, only that shard of them: the option
// is a field of ListOptions, which client-go sends as any other.
func ownPods(c *cluster.Cluster, shard string) informers.SharedInformerOption {
	return informers.WithTweakListOptions(func(o *metav1.ListOptions) {
		o.LabelSelector = cluster.OwnSelector
		// !+tweak
		o.ShardSelector = shard
		// !-tweak
	})
}
