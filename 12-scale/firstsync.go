package main

// Step 1: how an informer's first sync is made, at size.

import (
	"context"
	"fmt"
	"io"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/informer-walkthrough/informer-walkthrough/internal/cluster"
	"github.com/informer-walkthrough/informer-walkthrough/internal/tap"
)

// firstSync syncs an informer twice: by default, with a watch-list (one
// WATCH streams the pods, then a bookmark); opted out, with a LIST
// (it asks limit=500; at resourceVersion=0 the answer is whole) and a
// WATCH from the list's resourceVersion.
func firstSync(ctx context.Context, out io.Writer, c *cluster.Cluster) error {
	fmt.Fprintln(out, "Step 1. The first sync at size: a watch-list, then a LIST and a WATCH")
	for _, watchList := range []bool{true, false} {
		c.ResetRequests()
		ctx, stop := context.WithCancel(ctx)
		rec := tap.NewRecorder(ctx)
		// A ListWatch of the course's pods, made alike both times. The
		// reflector decides how to sync when it is built: a watch-list,
		// unless the WatchListClient gate is off or the ListerWatcher
		// opts out, as listThenWatch does. The informer has synced once
		// its store holds what the first sync brought.
		// !+firstSync
		lw := cache.NewFilteredListWatchFromClient(c.Client.CoreV1().RESTClient(),
			"pods", c.Namespace, func(o *metav1.ListOptions) {
				o.LabelSelector = cluster.OwnSelector
			})
		var source cache.ListerWatcher = lw
		if !watchList {
			source = listThenWatch{lw} // opts out of watch-list
		}
		inf := cache.NewSharedIndexInformer(tap.NewListerWatcher(source, rec),
			&corev1.Pod{}, 0, cache.Indexers{})
		var wg sync.WaitGroup
		wg.Go(func() { inf.RunWithContext(ctx) })
		synced := cache.WaitForCacheSync(ctx.Done(), inf.HasSynced)
		// !-firstSync

		// Opted out, the reflector opens its WATCH after the LIST, while
		// the informer pops what the LIST brought: the informer may have
		// synced before its WATCH is open. The tap's record of the Watch
		// says it is, so that the requests printed are the sync's whole
		// on every run.
		opened := synced && sawSyncRequests(ctx, rec, watchList)

		// What it holds, read before it stops; then the informer ends,
		// waited for, before the next one starts.
		held := len(inf.GetStore().ListKeys())
		stop()
		wg.Wait()
		if !synced || !opened {
			return context.Cause(ctx)
		}
		printSync(out, watchList, held, c.Requests())
	}
	return nil
}

// listThenWatch opts a ListWatch out of watch-list, as chapter 03 does:
// the reflector asks IsWatchListSemanticsUnSupported when it is built,
// and then syncs with a LIST and a WATCH from the list's resourceVersion.
type listThenWatch struct{ *cache.ListWatch }

func (listThenWatch) IsWatchListSemanticsUnSupported() bool { return true }
