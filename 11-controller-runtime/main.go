// Chapter 11-controller-runtime: the same informers, inside controller-
// runtime's cache and client. Its cache is client-go SharedIndexInformers
// (chapters 01-07), one per kind, started lazily; its client reads from
// the cache and writes to the server; its controllers are chapter 07's
// workqueue and worker. Each step shows a part by requests and handlers.
//
// Read alongside (controller-runtime v0.25.2): pkg/cache/cache.go,
// informer_cache.go, internal/informers.go, internal/cache_reader.go,
// pkg/client/client.go, consistency.go, pkg/internal/controller/
// controller.go.
//
// The lesson is in three files by what they teach: cache.go (steps 1-3),
// client.go (steps 4 and 5) and reconciler.go (step 6); objects.go holds
// the objects the steps act on. observe.go holds what only shows them at
// work (the lines rendered from what the course's taps record of a
// handler and of the controller's workqueue, the hold on the
// reconciler, the printing).
package main

import (
	"context"
	"io"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	crcache "sigs.k8s.io/controller-runtime/pkg/cache"

	"github.com/informer-walkthrough/informer-walkthrough/internal/cluster"
)

func main() { cluster.Main("11-controller-runtime", run) }

// run is the chapter, one step after another. Each step starts its own
// cache (or manager) and stops it, waiting, before it returns; step 4's
// two parts share one, which run stops after both.
func run(ctx context.Context, out io.Writer, c *cluster.Cluster) error {
	quietLogs() // controller-runtime's log is not the lesson (observe.go)
	if err := lazyCache(ctx, out, c); err != nil {
		return err
	}
	if err := forbiddenKind(ctx, out, c); err != nil {
		return err
	}
	if err := underneath(ctx, out, c); err != nil {
		return err
	}
	if err := optionsAreChapters(ctx, out, c); err != nil {
		return err
	}
	readers, err := cachedClient(ctx, out, c)
	if err != nil {
		return err
	}
	err = indexedList(ctx, out, c, readers)
	readers.stop()
	if err != nil {
		return err
	}
	if err := readYourWrites(ctx, out, c); err != nil {
		return err
	}
	if err := reconcilerIsChapter07(ctx, out, c); err != nil {
		return err
	}
	return nil
}

// ownObjects is the cache's options for the chapter's own objects, in
// its namespace (its RBAC on a real cluster): a metadata.namespace field
// selector makes the informers list and watch there.
func ownObjects(c *cluster.Cluster) crcache.Options {
	return crcache.Options{
		DefaultFieldSelector: fields.OneTermEqualSelector("metadata.namespace", c.Namespace),
		DefaultLabelSelector: labels.SelectorFromSet(cluster.Labels()),
	}
}
