//go:build bench

package bench

import (
	"context"
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
)

// BenchmarkGet compares reading one pod from a lister (the informer's
// cache: a map lookup under a read lock) with a GET to the workshop
// cluster (an HTTP round trip on loopback: encode, decode, and the
// server's own lookup and deep copy), at 1, 1 000 and 10 000 pods.
//
//	go test -tags bench -run '^$' -bench Get ./check/bench
func BenchmarkGet(b *testing.B) {
	for _, n := range sizes(1, 1_000, 10_000) {
		b.Run(fmt.Sprintf("objects=%d", n), func(b *testing.B) {
			c, client := newCluster(b)
			createPods(b, client, c.Namespace, n, benchPod)

			factory := informers.NewSharedInformerFactoryWithOptions(
				client, 0, informers.WithNamespace(c.Namespace))
			pods := factory.Core().V1().Pods()
			lister := pods.Lister().Pods(c.Namespace)
			ctx, cancel := context.WithCancel(context.Background())
			defer factory.Shutdown() // runs second: waits
			defer cancel()           // runs first: stops the informer
			factory.Start(ctx.Done())
			waitDone(b, pods.Informer().HasSyncedChecker())

			// Both read the same pods in the same order: a stride
			// through all n, so that consecutive reads do not hit
			// the same object in the CPU's cache.
			names := make([]string, n)
			for i := range names {
				names[i] = benchPod("", i).Name
			}
			next := func(i *int) string {
				*i = (*i + 7919) % n
				return names[*i]
			}
			var li, ai int
			api := client.CoreV1().Pods(c.Namespace)
			compare(b, true,
				op{name: "lister", run: func() {
					if _, err := lister.Get(next(&li)); err != nil {
						b.Fatal(err)
					}
				}},
				op{name: "api", run: func() {
					_, err := api.Get(ctx, next(&ai), metav1.GetOptions{})
					if err != nil {
						b.Fatal(err)
					}
				}},
			)
		})
	}
}
