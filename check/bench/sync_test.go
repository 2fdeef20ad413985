//go:build bench

package bench

import (
	"fmt"
	"testing"

	"k8s.io/client-go/tools/cache"

	"github.com/informer-walkthrough/informer-walkthrough/internal/apiserver"
)

// BenchmarkInitialSync times an informer from Run to HasSynced (the
// initial pods all popped into its indexer) at 1 000 and 10 000 pods,
// two ways: watch-list, the default in v0.37 (one WATCH with
// sendInitialEvents=true, ended by a bookmark), and LIST+WATCH, the
// path every informer took before and still takes against a server or
// client that does not support watch-list. Each both in protobuf,
// through the typed client as a factory's informers do, and in JSON,
// through cache.NewListWatchFromClient as the tutorials do. It also
// reports the requests that carried the initial pods (client-side
// request log): watch-list's one WATCH, or LIST+WATCH's LIST pages.
//
//	go test -tags bench -run '^$' -bench InitialSync ./check/bench
func BenchmarkInitialSync(b *testing.B) {
	for _, n := range sizes(1_000, 10_000) {
		b.Run(fmt.Sprintf("pods=%d", n), func(b *testing.B) {
			c, client := newCluster(b)
			createPods(b, client, c.Namespace, n, benchPod)

			// The timed part is Run to HasSynced; stopping the
			// informer and checking its cache are not.
			requests := map[string]int{}
			sync := func(name string, lw cache.ListerWatcher) op {
				var started []cache.SharedIndexInformer
				var stops []func()
				return op{name: name, run: func() {
					c.ResetRequests()
					inf := podInformer(lw)
					stops = append(stops, run(inf))
					waitDone(b, inf.HasSyncedChecker())
					requests[name] = syncRequests(c.Requests())
					started = append(started, inf)
				}, after: func() {
					for i, inf := range started {
						stops[i]()
						got := len(inf.GetStore().ListKeys())
						if got != n {
							b.Fatalf("%s synced %d pods, want %d",
								name, got, n)
						}
					}
					started, stops = nil, nil
				}}
			}
			// c.Client records its requests.
			proto := podsLW(c.Client, c.Namespace)
			json := podsJSONLW(c.Client, c.Namespace)
			ops := []op{
				sync("watchlist", proto),
				sync("listwatch", listThenWatch{proto}),
				sync("watchlist-json", json),
				sync("listwatch-json", listThenWatch{json}),
			}
			compare(b, false, ops...)
			for _, o := range ops {
				b.ReportMetric(float64(requests[o.name]),
					o.name+"-sync-requests")
			}
		})
	}
}

// syncRequests counts the requests that carry an informer's initial
// objects: LISTs, and watches with sendInitialEvents=true. (The WATCH
// that follows a LIST may or may not have been sent when HasSynced
// turns true: it is not counted.)
func syncRequests(reqs []apiserver.Request) int {
	n := 0
	for _, r := range reqs {
		if r.Verb == "list" || r.Query.Get("sendInitialEvents") == "true" {
			n++
		}
	}
	return n
}
