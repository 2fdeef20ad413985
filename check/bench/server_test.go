//go:build bench

package bench

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/pager"
	"k8s.io/utils/ptr"

	"github.com/informer-walkthrough/informer-walkthrough/internal/cluster"
)

// BenchmarkServerList measures the workshop cluster serving all n pods
// three ways, raw (no informer, protobuf): one LIST; a LIST in pages of
// 500, as client-go's pager asks for it; and a watch-list stream read up
// to its initial-events-end bookmark. The paged LIST sends no
// resourceVersion: at resourceVersion 0 (what a reflector without
// watch-list sends) the server answers whole, as kube-apiserver's watch
// cache does, and there would be no pages to measure. The per-object
// cost of the paged list growing with n is the sign of quadratic work.
//
//	go test -tags bench -run '^$' -bench ServerList ./check/bench
func BenchmarkServerList(b *testing.B) {
	for _, n := range sizes(1_000, 10_000, 30_000) {
		b.Run(fmt.Sprintf("pods=%d", n), func(b *testing.B) {
			c, client := newCluster(b)
			createPods(b, client, c.Namespace, n, benchPod)
			pods := client.CoreV1().Pods(c.Namespace)
			ctx := context.Background()
			count := func(list kruntime.Object) {
				if got := meta.LenList(list); got != n {
					b.Fatalf("listed %d pods, want %d", got, n)
				}
			}
			paged := pager.New(func(ctx context.Context,
				o metav1.ListOptions) (kruntime.Object, error) {
				return pods.List(ctx, o)
			})
			ns := compare(b, false,
				op{name: "list", run: func() {
					list, err := pods.List(ctx, metav1.ListOptions{})
					if err != nil {
						b.Fatal(err)
					}
					count(list)
				}},
				op{name: "paged", run: func() {
					list, _, err := paged.List(ctx,
						metav1.ListOptions{})
					if err != nil {
						b.Fatal(err)
					}
					count(list)
				}},
				op{name: "watchlist", run: func() {
					if got := watchList(b, client, c.Namespace); got != n {
						b.Fatalf("watch-list sent %d pods, want %d",
							got, n)
					}
				}},
			)
			for i, name := range []string{"list", "paged", "watchlist"} {
				b.ReportMetric(ns[i]/float64(n), name+"-ns/object")
			}
		})
	}
}

// watchList opens a watch-list stream of the pods in ns and reads it up
// to the bookmark that ends the initial events. It returns how many
// objects came before it.
func watchList(b *testing.B, client kubernetes.Interface,
	ns string) int {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w, err := client.CoreV1().Pods(ns).Watch(ctx, metav1.ListOptions{
		SendInitialEvents:    ptr.To(true),
		ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan,
		AllowWatchBookmarks:  true,
	})
	if err != nil {
		b.Fatal(err)
	}
	defer w.Stop()
	n := 0
	for ev := range w.ResultChan() {
		switch ev.Type {
		case watch.Added:
			n++
		case watch.Bookmark:
			return n
		default:
			b.Fatalf("unexpected %s event", ev.Type)
		}
	}
	b.Fatal("watch-list ended before its bookmark")
	return 0
}

// BenchmarkWatchFanout measures events delivered per second by the
// workshop cluster: bursts of 1 000 ConfigMap creates (four writers at
// a time) with 0, 1 and 20 watchers open, each watcher a client-go
// watch decoding every event (protobuf). A burst ends when every
// watcher has received every event. Server and clients share the
// machine's CPUs, as in every chapter.
//
//	go test -tags bench -run '^$' -bench WatchFanout ./check/bench
func BenchmarkWatchFanout(b *testing.B) {
	events := size(1_000, 100)
	c, client := newCluster(b)
	f := &fanout{client: client, ns: c.Namespace}
	var ops []op
	for _, w := range []int{0, 1, 20} {
		ops = append(ops, op{
			name: fmt.Sprintf("watchers=%d", w),
			run:  func() { f.burst(b, w, events) },
		})
	}
	ns := compare(b, false, ops...)
	for i, w := range []int{0, 1, 20} {
		secs := ns[i] / 1e9
		b.ReportMetric(float64(events)/secs, fmt.Sprintf("w%d-writes/s", w))
		if w > 0 {
			b.ReportMetric(float64(w*events)/secs,
				fmt.Sprintf("w%d-events/s", w))
		}
	}
}

// fanout writes bursts of ConfigMaps and watches them arrive.
type fanout struct {
	client kubernetes.Interface
	ns     string
	next   int // the number of the next ConfigMap
}

// burst opens watchers watches from the current resourceVersion,
// creates events ConfigMaps, and returns when every watcher has seen
// every one of them.
func (f *fanout) burst(b *testing.B, watchers, events int) {
	cms := f.client.CoreV1().ConfigMaps(f.ns)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Watch from "now": the list's resourceVersion, so no history is
	// replayed and nothing is missed.
	list, err := cms.List(ctx, metav1.ListOptions{Limit: 1})
	if err != nil {
		b.Fatal(err)
	}
	var seen sync.WaitGroup
	for range watchers {
		w, err := cms.Watch(ctx, metav1.ListOptions{
			ResourceVersion: list.ResourceVersion})
		if err != nil {
			b.Fatal(err)
		}
		defer w.Stop()
		seen.Go(func() { receive(b, w, events) })
	}
	const writers = 4
	first := f.next
	f.next += events
	var wrote sync.WaitGroup
	for wr := range writers {
		wrote.Go(func() {
			for i := first + wr; i < first+events; i += writers {
				cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
					Name:   fmt.Sprintf("cm-%07d", i),
					Labels: cluster.Labels(),
				}, Data: map[string]string{"n": fmt.Sprint(i)}}
				_, err := cms.Create(ctx, cm, metav1.CreateOptions{})
				if err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wrote.Wait()
	seen.Wait()
	if b.Failed() {
		b.FailNow()
	}
}

// receive reads ADDED events until it has had want of them.
func receive(b *testing.B, w watch.Interface, want int) {
	timeout := time.After(5 * time.Minute)
	for got := 0; got < want; {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				b.Errorf("watch closed after %d of %d events", got, want)
				return
			}
			if ev.Type != watch.Added {
				b.Errorf("unexpected %s event", ev.Type)
				return
			}
			got++
		case <-timeout:
			b.Errorf("%d of %d events after 5 minutes", got, want)
			return
		}
	}
}
