// Chapter 12-scale: informers when one process is not enough.
//
// How the first sync of many pods is made (a watch-list stream, or a
// LIST then a WATCH), and how one kind is split between informers with a
// shard selector (KEP-5866: ListOptions.ShardSelector, alpha in
// Kubernetes 1.36 behind the ShardedListAndWatch gate), each shard the
// pods whose uid hashes into its range.
//
// Read alongside (client-go v0.37.2 and apimachinery v0.37.2):
// tools/cache/reflector.go, informers/factory.go,
// apimachinery pkg/sharding and pkg/apis/meta/v1/types.go (ShardSelector,
// ShardInfo). observe.go holds what only shows them at work (the --pods
// flag, the request log, counting, printing).
package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/sharding"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"

	"github.com/informer-walkthrough/informer-walkthrough/internal/cluster"
	"github.com/informer-walkthrough/informer-walkthrough/internal/fixture"
	"github.com/informer-walkthrough/informer-walkthrough/internal/show"
)

func main() { cluster.MainWith("12-scale", extras, run) }

// run creates the pods (--pods, default 40), then runs the steps on them.
func run(ctx context.Context, out io.Writer, c *cluster.Cluster) error {
	if err := createPods(ctx, c, int(podCount)); err != nil {
		return err
	}
	if err := firstSync(ctx, out, c); err != nil {
		return err
	}
	return shardedInformers(ctx, out, c)
}

// createPods creates n scheduling-gated pods, web-1 … web-n, labelled as
// the course's own.
func createPods(ctx context.Context, c *cluster.Cluster, n int) error {
	pods := c.Client.CoreV1().Pods(c.Namespace)
	for i := 1; i <= n; i++ {
		pod := fixture.GatedPod(fmt.Sprintf("web-%d", i), cluster.Labels("app", "web"))
		if _, err := pods.Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			return err
		}
	}
	return nil
}

// ownPods restricts a factory's informers to the chapter's pods, in its
// namespace; shard, if not empty, is the shard selector of every list
// and watch they make.
func ownPods(c *cluster.Cluster, shard string) informers.SharedInformerOption {
	return informers.WithTweakListOptions(func(o *metav1.ListOptions) {
		o.LabelSelector = cluster.OwnSelector
		// !+tweak
		o.ShardSelector = shard
		// !-tweak
	})
}

// firstSync syncs an informer of the pods twice: as client-go does by
// default, with a watch-list (one WATCH that streams the pods, then a
// bookmark), and opted out of it, with a LIST (paged by limit=500) and
// a WATCH from the list's resourceVersion.
func firstSync(ctx context.Context, out io.Writer, c *cluster.Cluster) error {
	fmt.Fprintln(out, "Step 1. The first sync at size: a watch-list, then a LIST and a WATCH")
	for _, watchList := range []bool{true, false} {
		c.ResetRequests()
		ctx, stop := context.WithCancel(ctx)
		// !+firstSync
		lw := cache.NewFilteredListWatchFromClient(c.Client.CoreV1().RESTClient(),
			"pods", c.Namespace, func(o *metav1.ListOptions) {
				o.LabelSelector = cluster.OwnSelector
			})
		var source cache.ListerWatcher = lw
		if !watchList {
			source = listThenWatch{lw} // opts out (observe.go)
		}
		inf := cache.NewSharedIndexInformer(source, &corev1.Pod{}, 0,
			cache.Indexers{})
		var wg sync.WaitGroup
		wg.Go(func() { inf.RunWithContext(ctx) })
		synced := cache.WaitForCacheSync(ctx.Done(), inf.HasSynced)
		// !-firstSync
		held := len(inf.GetStore().ListKeys())
		stop()
		wg.Wait()
		if !synced {
			return context.Cause(ctx)
		}
		printSync(out, watchList, held, c.Requests())
	}
	return nil
}

// shardedInformers splits the pods between 2, then 4 informers, each
// with a shard selector: a range of the 64-bit FNV-1a hash of the pod's
// uid. First it asks the server whether it honours shard selectors at
// all: one that does not (the ShardedListAndWatch gate off, its default)
// ignores the parameter, and every "shard" would hold every pod.
func shardedInformers(ctx context.Context, out io.Writer, c *cluster.Cluster) error {
	fmt.Fprintln(out, "\nStep 2. Sharding: informers that each hold the pods whose uid hashes into a range")
	pods := c.Client.CoreV1().Pods(c.Namespace)
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
	for _, n := range []int{2, 4} {
		if err := runShards(ctx, out, c, shardRanges(n)); err != nil {
			return err
		}
	}
	return nil
}

// runShards runs one informer per shard, checks that they hold disjoint
// parts whose union is every pod, and that each pod sits in the shard
// its uid's hash names. Then it updates and deletes one pod, and shows
// that the change reaches the informer of its shard.
func runShards(ctx context.Context, out io.Writer, c *cluster.Cluster, shards []sharding.Selector) error {
	fmt.Fprintf(out, "  %d shards:\n", len(shards))
	ctx, stop := context.WithCancel(ctx)
	var factories []informers.SharedInformerFactory
	defer func() {
		stop()
		for _, f := range factories {
			f.Shutdown()
		}
	}()
	changes := show.NewLines(ctx)
	var stores []cache.Store
	for i, shard := range shards {
		// !+shard
		factory := informers.NewSharedInformerFactoryWithOptions(c.Client, 0,
			informers.WithNamespace(c.Namespace), ownPods(c, shard.String()))
		inf := factory.Core().V1().Pods().Informer()
		// !-shard
		if _, err := inf.AddEventHandler(reportChanges(i, changes)); err != nil {
			return err
		}
		factory.Start(ctx.Done())
		factories = append(factories, factory)
		stores = append(stores, inf.GetStore())
	}
	for _, f := range factories {
		for typ, ok := range f.WaitForCacheSync(ctx.Done()) {
			if !ok {
				return fmt.Errorf("the %v informer did not sync: %w", typ, context.Cause(ctx))
			}
		}
	}
	if err := printShards(out, shards, stores); err != nil {
		return err
	}
	return changeOnePod(ctx, out, c, shards, changes)
}

// changeOnePod updates a pod's label, then deletes the pod: both changes
// come to the one informer whose shard holds the pod's uid.
func changeOnePod(ctx context.Context, out io.Writer, c *cluster.Cluster, shards []sharding.Selector, changes *show.Lines) error {
	pods := c.Client.CoreV1().Pods(c.Namespace)
	pod, err := pods.Get(ctx, "web-1", metav1.GetOptions{})
	if err != nil {
		return err
	}
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
	// The update, then the delete's MODIFIED on a real cluster only
	// (a pod that a kubelet could run ends gracefully), then DELETED.
	lines, err := awaitDeleted(ctx, changes)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "    web-1's uid hashes into shard %d: update and delete came to shard %s\n",
		owner, shardsOf(lines))
	pod = fixture.GatedPod(pod.Name, pod.Labels) // back, for the next shards
	_, err = pods.Create(ctx, pod, metav1.CreateOptions{})
	return err
}

// shardRanges splits the 64-bit hash space into n equal ranges, one
// selector each: shardRange(object.metadata.uid, '0x…', '0x…'). Bounds
// are 16 hex digits, the end of the last one 2^64, as the server's
// parser demands (k8s.io/apiserver pkg/sharding).
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
