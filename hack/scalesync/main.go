// Command scalesync measures chapter 12's step 1 at size: an informer's
// first sync of N pods by watch-list against a LIST (limit=500 asked, at
// resourceVersion=0 answered whole, as kube-apiserver answers it) then a
// WATCH, the time to HasSynced and the client's peak heap.
//
//	go run ./hack/scalesync --pods 10000
//
// The client is measured alone: the workshop cluster runs in a child
// process (this program, started again with --serve), so the heap
// figures hold no server object. --kubeconfig measures against that
// cluster instead (it must let you create pods in --namespace).
//
// Heap: runtime/metrics' /memory/classes/heap/objects:bytes (the bytes
// of heap objects, live or not yet swept: what the Go runtime holds for
// them), sampled every millisecond from a full GC before the informer
// starts until it has synced; "peak" is the highest sample minus the
// value before, "kept" the live heap after a full GC once synced minus
// the same. A sample can miss a peak shorter than a millisecond.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/informer-walkthrough/informer-walkthrough/internal/apiserver"
	"github.com/informer-walkthrough/informer-walkthrough/internal/apiserver/shardparse"
	"github.com/informer-walkthrough/informer-walkthrough/internal/progress"
)

const selector = "app.kubernetes.io/managed-by=informer-walkthrough-scalesync"

func main() {
	pods := flag.Int("pods", 1000, "how many pods to sync")
	kubeconfig := flag.String("kubeconfig", "", "a cluster to measure against (default: a workshop cluster in a child process)")
	namespace := flag.String("namespace", "scalesync", "the namespace of the pods")
	serve := flag.String("serve", "", "(internal) run a workshop cluster and write its kubeconfig to this file")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx = progress.ToTerminal(ctx, os.Stdout, os.Stderr) // how far the pods' creation is
	var err error
	if *serve != "" {
		err = serveWorkshop(ctx, *serve)
	} else {
		err = measure(ctx, *kubeconfig, *namespace, *pods)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "scalesync: %v\n", err)
		os.Exit(1)
	}
}

// serveWorkshop is the child: a workshop cluster until ctx ends.
func serveWorkshop(ctx context.Context, path string) error {
	srv, err := apiserver.Start(apiserver.Options{ShardSelectors: shardparse.Parse})
	if err != nil {
		return err
	}
	defer srv.Close()
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["w"] = &clientcmdapi.Cluster{Server: srv.URL()}
	cfg.AuthInfos["w"] = &clientcmdapi.AuthInfo{}
	cfg.Contexts["w"] = &clientcmdapi.Context{Cluster: "w", AuthInfo: "w"}
	cfg.CurrentContext = "w"
	tmp := path + ".tmp"
	if err := clientcmd.WriteToFile(*cfg, tmp); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	<-ctx.Done()
	return nil
}

// child starts the workshop cluster in a child process and returns its
// kubeconfig's path.
func child(ctx context.Context) (string, func(), error) {
	dir, err := os.MkdirTemp("", "scalesync")
	if err != nil {
		return "", nil, err
	}
	path := filepath.Join(dir, "kubeconfig")
	self, err := os.Executable()
	if err != nil {
		return "", nil, err
	}
	cmd := exec.Command(self, "--serve", path)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return "", nil, err
	}
	done := func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
		os.RemoveAll(dir)
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(path); err == nil {
			return path, done, nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			done()
			return "", nil, errors.New("the workshop cluster did not start")
		}
	}
}

func measure(ctx context.Context, kubeconfig, namespace string, n int) error {
	if kubeconfig == "" {
		path, done, err := child(ctx)
		if err != nil {
			return err
		}
		defer done()
		kubeconfig = path
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	cfg.QPS, cfg.Burst = 1000, 2000
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}
	if _, err := client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	start := time.Now()
	if err := createPods(ctx, client, namespace, n); err != nil {
		return err
	}
	defer client.CoreV1().Pods(namespace).DeleteCollection(context.Background(), metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: selector})
	fmt.Printf("created %d pods in %v (%s, GOMAXPROCS %d)\n", n, time.Since(start).Round(time.Millisecond), cfg.Host, runtime.GOMAXPROCS(0))
	fmt.Printf("%-18s %10s %10s %10s %9s\n", "", "sync", "peak heap", "kept heap", "requests")
	for _, watchList := range []bool{true, false} {
		r, err := syncOnce(ctx, cfg, namespace, watchList)
		if err != nil {
			return err
		}
		name := "LIST, then WATCH"
		if watchList {
			name = "watch-list"
		}
		fmt.Printf("%-18s %10v %9.0fM %9.0fM %9d\n", name, r.sync.Round(time.Millisecond), mb(r.peak), mb(r.kept), r.requests)
	}
	fmt.Printf("answers in %v\n", contentType.Load())
	return nil
}

func mb(b uint64) float64 { return float64(b) / (1 << 20) }

func createPods(ctx context.Context, client kubernetes.Interface, ns string, n int) error {
	created := progress.Start(ctx, "creating pods", n)
	defer created.Done()
	var next, done atomic.Int64
	errs := make(chan error, 16)
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for i := next.Add(1); i <= int64(n); i = next.Add(1) {
				pod := &corev1.Pod{
					ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("web-%d", i), Labels: map[string]string{
						"app.kubernetes.io/managed-by": "informer-walkthrough-scalesync", "app": "web"}},
					Spec: corev1.PodSpec{
						SchedulingGates: []corev1.PodSchedulingGate{{Name: "informer-walkthrough/never"}},
						Containers:      []corev1.Container{{Name: "web", Image: "nginx"}},
					},
				}
				if _, err := client.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
					errs <- err
					return
				}
				created.Set(int(done.Add(1)))
			}
		})
	}
	wg.Wait()
	close(errs)
	return <-errs
}

type result struct {
	sync       time.Duration
	peak, kept uint64
	requests   int64
}

// listThenWatch opts a ListWatch out of watch-list, as chapter 12 does.
type listThenWatch struct{ *cache.ListWatch }

func (listThenWatch) IsWatchListSemanticsUnSupported() bool { return true }

// countingTransport counts the requests.
type countingTransport struct {
	next http.RoundTripper
	n    *atomic.Int64
}

// contentType is the media type of the answers, for the header line.
var contentType atomic.Value

func (t countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	t.n.Add(1)
	resp, err := t.next.RoundTrip(r)
	if err == nil {
		contentType.CompareAndSwap(nil, resp.Header.Get("Content-Type"))
	}
	return resp, err
}

// syncOnce syncs an informer of the pods as chapter 12's step 1 does, and
// measures it.
func syncOnce(ctx context.Context, base *rest.Config, ns string, watchList bool) (result, error) {
	var r result
	var reqs atomic.Int64
	cfg := rest.CopyConfig(base)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return countingTransport{rt, &reqs} })
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return r, err
	}
	runtime.GC()
	before := heapObjects()
	var peak atomic.Uint64
	sampleCtx, stopSampling := context.WithCancel(ctx)
	var sampler sync.WaitGroup
	sampler.Go(func() {
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			if h := heapObjects(); h > peak.Load() {
				peak.Store(h)
			}
			select {
			case <-sampleCtx.Done():
				return
			case <-t.C:
			}
		}
	})

	ctx, stop := context.WithCancel(ctx)
	lw := cache.NewFilteredListWatchFromClient(client.CoreV1().RESTClient(), "pods", ns, func(o *metav1.ListOptions) {
		o.LabelSelector = selector
	})
	var source cache.ListerWatcher = lw
	if !watchList {
		source = listThenWatch{lw}
	}
	inf := cache.NewSharedIndexInformer(source, &corev1.Pod{}, 0, cache.Indexers{})
	start := time.Now()
	var wg sync.WaitGroup
	wg.Go(func() { inf.RunWithContext(ctx) })
	select {
	case <-inf.HasSyncedChecker().Done():
	case <-ctx.Done():
	}
	r.sync = time.Since(start)
	stopSampling()
	sampler.Wait()
	if h := heapObjects(); h > peak.Load() {
		peak.Store(h)
	}
	r.requests = reqs.Load()
	runtime.GC()
	r.kept = heapObjects() - min(before, heapObjects())
	r.peak = peak.Load() - min(before, peak.Load())
	synced := inf.HasSynced()
	stop()
	wg.Wait()
	if !synced {
		return r, errors.New("interrupted before the informer synced")
	}
	return r, nil
}

var sample = []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
var sampleMu sync.Mutex

func heapObjects() uint64 {
	sampleMu.Lock()
	defer sampleMu.Unlock()
	metrics.Read(sample)
	return sample[0].Value.Uint64()
}
