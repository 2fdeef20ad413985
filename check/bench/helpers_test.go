//go:build bench

package bench

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/informer-walkthrough/informer-walkthrough/check/chaptertest"
	"github.com/informer-walkthrough/informer-walkthrough/internal/cluster"
)

// TestMain silences client-go's log. A benchmark that stops an informer
// as soon as it has synced often cancels the WATCH request that follows
// a LIST, and client-go logs that ("Failed to watch ... context
// canceled"): expected here, and noise among the results.
func TestMain(m *testing.M) {
	flags := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(flags)
	_ = flags.Set("logtostderr", "false")
	_ = flags.Set("stderrthreshold", "FATAL")
	klog.SetOutput(io.Discard)
	os.Exit(m.Run())
}

// op is one of the operations a benchmark compares.
type op struct {
	name string
	run  func()
	// after, if set, runs after each batch of runs, untimed: to stop
	// what run started, or check what it did.
	after func()
}

// compare runs ops side by side. Each b.Loop round runs every op a
// number of times chosen so that each takes about as long as the
// slowest, times each op on its own, and alternates their order, so
// that a machine busy with other work slows all of them alike.
//
// It reports NAME-ns/op for every op and, for every op after the
// first, the ratio NAME/FIRST of their times. With allocs it also
// reports NAME-B/op and NAME-allocs/op, counted for the whole process
// (for a request to the workshop cluster, that includes the server).
// The usual ns/op, the time of a whole round, is suppressed. It
// returns each op's ns/op.
func compare(b *testing.B, allocs bool, ops ...op) []float64 {
	b.Helper()
	reps := calibrate(ops)
	total := make([]time.Duration, len(ops))
	bytes := make([]uint64, len(ops))
	mallocs := make([]uint64, len(ops))
	var before, after runtime.MemStats
	rounds := 0
	for b.Loop() {
		rounds++
		for j := range ops {
			i := j
			if rounds%2 == 0 {
				i = len(ops) - 1 - j
			}
			if allocs {
				runtime.ReadMemStats(&before)
			}
			start := time.Now()
			for range reps[i] {
				ops[i].run()
			}
			total[i] += time.Since(start)
			if allocs {
				runtime.ReadMemStats(&after)
				bytes[i] += after.TotalAlloc - before.TotalAlloc
				mallocs[i] += after.Mallocs - before.Mallocs
			}
			if ops[i].after != nil {
				ops[i].after()
			}
		}
	}
	ns := make([]float64, len(ops))
	for i, o := range ops {
		n := float64(rounds * reps[i])
		ns[i] = float64(total[i].Nanoseconds()) / n
		b.ReportMetric(ns[i], o.name+"-ns/op")
		if allocs {
			b.ReportMetric(float64(bytes[i])/n, o.name+"-B/op")
			b.ReportMetric(float64(mallocs[i])/n, o.name+"-allocs/op")
		}
		if i > 0 {
			b.ReportMetric(ns[i]/ns[0], o.name+"/"+ops[0].name)
		}
	}
	b.ReportMetric(0, "ns/op")
	return ns
}

// calibrate runs each op until it has taken 10ms (or once, if it is
// slower), and returns how many runs of each make one round: as many
// as take about as long as one run of the slowest op.
func calibrate(ops []op) []int {
	est := make([]time.Duration, len(ops))
	for i, o := range ops {
		o.run() // warm up: first calls pay for connections, caches
		if o.after != nil {
			o.after()
		}
		for n := 1; ; n *= 4 {
			start := time.Now()
			for range n {
				o.run()
			}
			d := time.Since(start)
			if o.after != nil {
				o.after()
			}
			if d >= 10*time.Millisecond || n >= 1<<20 {
				est[i] = max(d/time.Duration(n), 1)
				break
			}
		}
	}
	slowest := max(est[0], 100*time.Microsecond)
	for _, e := range est {
		slowest = max(slowest, e)
	}
	reps := make([]int, len(ops))
	for i, e := range est {
		reps[i] = max(1, int(math.Round(float64(slowest)/float64(e))))
	}
	return reps
}

// sizes returns the object counts a benchmark runs at: all of them, or
// with -short only the smallest, for a quick check that every
// benchmark still works (go test -tags bench -short -race -run '^$' -bench .).
func sizes(all ...int) []int {
	if testing.Short() {
		return all[:1]
	}
	return all
}

// size is full, or small with -short.
func size(full, small int) int {
	if testing.Short() {
		return small
	}
	return full
}

// newCluster starts a fresh workshop cluster for one benchmark, with
// the leak check the chapters' tests use, and a client that does not
// record its requests: the course's client-side request log would grow
// with every request a benchmark sends. Clients built from c.Config do
// record; use them where a benchmark counts requests.
func newCluster(b *testing.B) (*cluster.Cluster, kubernetes.Interface) {
	b.Helper()
	c := chaptertest.Start(b)
	client, err := kubernetes.NewForConfig(c.Server.Config())
	if err != nil {
		b.Fatal(err)
	}
	return c, client
}

// benchPod is pod number i: a scheduling gate and the course's label,
// as every pod the course creates, and ten pods per app label.
func benchPod(ns string, i int) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: ns,
			Name:      fmt.Sprintf("pod-%06d", i),
			Labels:    cluster.Labels("app", fmt.Sprintf("app-%d", i/10)),
		},
		Spec: corev1.PodSpec{
			SchedulingGates: []corev1.PodSchedulingGate{
				{Name: "walkthrough/hold"}},
			Containers: []corev1.Container{
				{Name: "c", Image: "nginx:1.27"}},
		},
	}
}

// createPods creates pods 0..n-1, made by newPod, four requests at a
// time.
func createPods(b *testing.B, client kubernetes.Interface, ns string,
	n int, newPod func(ns string, i int) *corev1.Pod) {
	b.Helper()
	const workers = 4
	pods := client.CoreV1().Pods(ns)
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := w; i < n; i += workers {
				_, err := pods.Create(context.Background(),
					newPod(ns, i), metav1.CreateOptions{})
				if err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		b.Fatal(err)
	}
}

// liveHeap is the heap still in use after a full garbage collection.
func liveHeap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// run starts inf and returns a function that stops it and waits until
// it has stopped.
func run(inf cache.SharedIndexInformer) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		inf.RunWithContext(ctx)
	}()
	return func() {
		cancel()
		<-done
	}
}

// waitDone waits for a DoneChecker (an informer's or a handler
// registration's HasSyncedChecker): a channel, so the wait ends the
// moment the sync does, unlike WaitForCacheSync, which polls every
// 100ms.
func waitDone(b *testing.B, d cache.DoneChecker) {
	b.Helper()
	select {
	case <-d.Done():
	case <-time.After(5 * time.Minute):
		b.Fatalf("%s: not done after 5 minutes", d.Name())
	}
}

// podInformer is a pod informer over lw with the namespace index, as a
// factory would build it.
func podInformer(lw cache.ListerWatcher) cache.SharedIndexInformer {
	return cache.NewSharedIndexInformer(lw, &corev1.Pod{}, 0,
		cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
}

// podsLW lists and watches pods the way a factory's informer does:
// through the typed client, which asks for protobuf
// (gentype's UseProtobufAsDefaultIfPreferred).
func podsLW(client kubernetes.Interface, ns string) *cache.ListWatch {
	pods := client.CoreV1().Pods(ns)
	return &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context,
			o metav1.ListOptions) (kruntime.Object, error) {
			return pods.List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context,
			o metav1.ListOptions) (watch.Interface, error) {
			return pods.Watch(ctx, o)
		},
	}
}

// podsJSONLW lists and watches pods the way the tutorials' ListWatch
// does: cache.NewListWatchFromClient over a REST client, which speaks
// JSON.
func podsJSONLW(client kubernetes.Interface, ns string) *cache.ListWatch {
	return cache.NewListWatchFromClient(client.CoreV1().RESTClient(),
		"pods", ns, fields.Everything())
}

// listThenWatch opts a ListerWatcher out of watch-list, as in
// 03-reflector: the reflector asks
// watchlist.DoesClientNotSupportWatchListSemantics when it is built,
// and that function looks for this method. The reflector then LISTs
// (limit=500 from resourceVersion 0, following continue tokens if the
// server pages, as the workshop cluster does) and WATCHes from the
// list's resourceVersion.
type listThenWatch struct{ *cache.ListWatch }

func (listThenWatch) IsWatchListSemanticsUnSupported() bool { return true }
