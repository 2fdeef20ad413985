package reliability

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	"github.com/informer-walkthrough/informer-walkthrough/check/leakcheck"
	"github.com/informer-walkthrough/informer-walkthrough/internal/apiserver"
)

var loadBig = flag.Bool("load.big", false,
	"the issue's sizes: 10 000 objects, 20 watchers, bursts of 10 000 writes")

// sizes of a run.
type sizes struct {
	objects  int // ConfigMaps created before the burst
	watchers int // concurrent watches, one of them stalled
	burst    int // writes in a burst
	writers  int // concurrent writers
	window   int // MaxHistory for the memory test
	payload  int // bytes of data in each ConfigMap
}

func size() sizes {
	if *loadBig {
		return sizes{objects: 10000, watchers: 20, burst: 10000, writers: 16, window: 5000, payload: 1024}
	}
	return sizes{objects: 200, watchers: 5, burst: 400, writers: 8, window: 100, payload: 1024}
}

var loadNamespaces = []string{"load-a", "load-b", "load-c", "load-d"}

// TestWatchersMissNothing opens every watch, then creates the objects
// and makes a burst of writes (updates, deletes, creates) from
// concurrent writers. One watcher reads nothing until all the others
// have seen the last write: it must hold up none of them. The server
// closes a watch that falls more than 10 000 events behind; the stalled
// watcher then resumes from the last resourceVersion it saw, as a
// reflector does. Every watcher must see every change exactly once, in
// order: resourceVersions without a gap (the workshop cluster's are
// sequential, and nothing else changes).
func TestWatchersMissNothing(t *testing.T) {
	leakcheck.Verify(t)
	sz := size()
	srv, client := startLoaded(t, apiserver.Options{})
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	from, _ := strconv.ParseUint(srv.ResourceVersion(), 10, 64)

	stalled := make(chan struct{})
	watchers := make([]*watcher, sz.watchers)
	var wg sync.WaitGroup
	defer wg.Wait() // runs after cancel: every watcher ends
	defer cancel()
	for i := range watchers {
		w := &watcher{client: client, rv: from, reached: make(chan struct{})}
		if i == 0 {
			w.stall = stalled
		}
		if err := w.open(ctx); err != nil {
			t.Fatal(err)
		}
		watchers[i] = w
		wg.Go(func() { w.run(ctx) })
	}

	start := time.Now()
	live, err := createObjects(ctx, client, sz)
	if err != nil {
		t.Fatal(err)
	}
	created := time.Since(start)
	start = time.Now()
	if err := burst(ctx, client, sz, live); err != nil {
		t.Fatal(err)
	}
	wrote := time.Since(start)
	end, err := client.CoreV1().ConfigMaps(loadNamespaces[0]).Create(ctx, configMap("end", 0), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range watchers[1:] {
		select {
		case <-w.reached:
		case <-ctx.Done():
			t.Fatalf("a watcher is stuck at rv %d of %s", w.seen(), end.ResourceVersion)
		}
	}
	others := time.Since(start)
	if n := watchers[0].seen(); n != from {
		t.Errorf("the stalled watcher read up to rv %d", n)
	}
	close(stalled)
	<-watchers[0].reached
	stalledTook := time.Since(start)

	want := mustParse(end.ResourceVersion) - from
	for i, w := range watchers {
		if w.err != nil {
			t.Errorf("watcher %d: %v", i, w.err)
		} else if uint64(w.count) != want {
			t.Errorf("watcher %d saw %d events, want %d", i, w.count, want)
		}
	}
	t.Logf("%d watchers; %d objects created by %d writers in %v; burst of %d writes in %v (%.0f/s); "+
		"%d watchers saw all %d events %v after the burst began; the stalled one resumed %d times "+
		"and saw them all %v after",
		sz.watchers, sz.objects, sz.writers, created.Round(time.Millisecond), sz.burst,
		wrote.Round(time.Millisecond), float64(sz.burst)/wrote.Seconds(), sz.watchers-1, want,
		others.Round(time.Millisecond), watchers[0].resumes, stalledTook.Round(time.Millisecond))
}

// watcher is a watch on every ConfigMap that resumes where it left off
// when the server ends it, and checks that resourceVersions follow one
// another without a gap.
type watcher struct {
	client  kubernetes.Interface
	stall   <-chan struct{} // if set, read nothing until it is closed
	reached chan struct{}   // closed when the watcher has seen "end"
	w       watch.Interface

	mu      sync.Mutex
	rv      uint64 // the last resourceVersion seen
	count   int
	resumes int
	err     error
}

func (w *watcher) seen() uint64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.rv
}

func (w *watcher) open(ctx context.Context) error {
	var err error
	w.w, err = w.client.CoreV1().ConfigMaps("").Watch(ctx,
		metav1.ListOptions{ResourceVersion: strconv.FormatUint(w.rv, 10)})
	return err
}

func (w *watcher) run(ctx context.Context) {
	defer close(w.reached)
	defer func() { w.w.Stop() }()
	if w.stall != nil {
		select {
		case <-w.stall:
		case <-ctx.Done():
			return
		}
	}
	for {
		for ev := range w.w.ResultChan() {
			if done := w.event(ev); done {
				return
			}
		}
		// The server ended the stream: resume from the last
		// resourceVersion seen.
		if ctx.Err() != nil {
			return
		}
		w.mu.Lock()
		w.resumes++
		w.mu.Unlock()
		if err := w.open(ctx); err != nil {
			w.mu.Lock()
			w.err = err
			w.mu.Unlock()
			return
		}
	}
}

// event checks one event; true when it is the last write's.
func (w *watcher) event(ev watch.Event) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if ev.Type == watch.Error {
		w.err = apierrors.FromObject(ev.Object)
		return true
	}
	cm, ok := ev.Object.(*corev1.ConfigMap)
	if !ok {
		w.err = fmt.Errorf("a %T in the watch", ev.Object)
		return true
	}
	rv := mustParse(cm.ResourceVersion)
	if rv != w.rv+1 && w.err == nil {
		w.err = fmt.Errorf("%s %s at rv %d after rv %d", ev.Type, cm.Name, rv, w.rv)
	}
	w.rv = rv
	w.count++
	return cm.Name == "end"
}

// TestMemoryBoundedByHistory: the workshop cluster keeps its objects and
// a window of history (MaxHistory events, kube-apiserver's watch cache
// window), nothing more: bursts of updates grow the heap by what the
// window holds, however many there are.
func TestMemoryBoundedByHistory(t *testing.T) {
	leakcheck.Verify(t)
	sz := size()
	sz.payload = 4096
	if !*loadBig {
		sz.burst = 3 * sz.window // more than the window holds
	}
	windows := []int{sz.window}
	if *loadBig {
		windows = append(windows, 100000) // the default, for comparison
	}
	for _, window := range windows {
		t.Run(fmt.Sprintf("MaxHistory=%d", window), func(t *testing.T) {
			srv, client := startLoaded(t, apiserver.Options{MaxHistory: window})
			ctx := t.Context()
			base := heap()
			live, err := createObjects(ctx, client, sz)
			if err != nil {
				t.Fatal(err)
			}
			heaps := []uint64{heap()}
			for round := range 3 {
				rv := mustParse(srv.ResourceVersion())
				if err := updates(ctx, client, sz, live, round); err != nil {
					t.Fatal(err)
				}
				if n := mustParse(srv.ResourceVersion()) - rv; n != uint64(sz.burst) {
					t.Fatalf("a burst of %d updates made %d changes", sz.burst, n)
				}
				// The request log is bounded on its own (the last
				// 100 000 requests, about 15 MB); cleared here, so that
				// the heap shows the history.
				srv.ResetRequests()
				heaps = append(heaps, heap())
			}
			mb := func(b uint64) string { return fmt.Sprintf("%.1f MB", float64(b)/(1<<20)) }
			t.Logf("%d objects of %d B: heap +%s; after each burst of %d updates: +%s, +%s, +%s (rv %s)",
				sz.objects, sz.payload, mb(heaps[0]-base), sz.burst,
				mb(heaps[1]-base), mb(heaps[2]-base), mb(heaps[3]-base), srv.ResourceVersion())
			// What the history may hold: at most window events, each
			// keeping alive one older copy of an object. An object's
			// cost is measured from the creates. Unbounded, three
			// bursts would hold 3*burst copies.
			perObject := float64(heaps[0]-base) / float64(sz.objects)
			bound := uint64(1.5*float64(window)*perObject) + 1<<19
			for i, h := range heaps[1:] {
				if h-heaps[0] > bound {
					t.Errorf("after burst %d the heap is %s above the objects', more than the window's %s",
						i+1, mb(h-heaps[0]), mb(bound))
				}
			}
		})
	}
}

// heap is the live heap after a full collection.
func heap() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// startLoaded starts a workshop cluster with loadNamespaces, closed
// when t ends.
func startLoaded(t *testing.T, opts apiserver.Options) (*apiserver.Server, kubernetes.Interface) {
	t.Helper()
	srv, err := apiserver.Start(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	client := kubernetes.NewForConfigOrDie(srv.Config())
	for _, ns := range loadNamespaces {
		_, err := client.CoreV1().Namespaces().Create(t.Context(),
			&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
	}
	return srv, client
}

// configMap carries payload bytes, so that what the server keeps of it
// is measurable.
func configMap(name string, payload int) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Data:       map[string]string{"payload": strings.Repeat("x", payload), "v": "0"},
	}
}

// createObjects creates sz.objects ConfigMaps with sz.writers writers.
// Writer w owns the objects i with i%writers == w: live[w].
func createObjects(ctx context.Context, client kubernetes.Interface, sz sizes) ([][]types.NamespacedName, error) {
	live := make([][]types.NamespacedName, sz.writers)
	err := each(sz.writers, func(w int) error {
		for i := w; i < sz.objects; i += sz.writers {
			o := types.NamespacedName{Namespace: loadNamespaces[i%len(loadNamespaces)], Name: "cm-" + strconv.Itoa(i)}
			if _, err := client.CoreV1().ConfigMaps(o.Namespace).Create(ctx, configMap(o.Name, sz.payload), metav1.CreateOptions{}); err != nil {
				return err
			}
			live[w] = append(live[w], o)
		}
		return nil
	})
	return live, err
}

// burst makes sz.burst writes, each writer on its own objects: eight in
// ten update, one deletes, one creates a new object.
func burst(ctx context.Context, client kubernetes.Interface, sz sizes, live [][]types.NamespacedName) error {
	return each(sz.writers, func(w int) error {
		mine := live[w]
		for i := w; i < sz.burst; i += sz.writers {
			cms := client.CoreV1().ConfigMaps(loadNamespaces[i%len(loadNamespaces)])
			switch {
			case i%10 == 8 && len(mine) > 0:
				o := mine[0]
				mine = mine[1:]
				if err := client.CoreV1().ConfigMaps(o.Namespace).Delete(ctx, o.Name, metav1.DeleteOptions{}); err != nil {
					return err
				}
			case i%10 == 9 || len(mine) == 0:
				name := "new-" + strconv.Itoa(i)
				if _, err := cms.Create(ctx, configMap(name, sz.payload), metav1.CreateOptions{}); err != nil {
					return err
				}
				mine = append(mine, types.NamespacedName{Namespace: loadNamespaces[i%len(loadNamespaces)], Name: name})
			default:
				if err := update(ctx, client, mine[i%len(mine)], i); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// updates makes sz.burst updates of the existing objects, each a change
// (round makes the values differ from the last round's).
func updates(ctx context.Context, client kubernetes.Interface, sz sizes, live [][]types.NamespacedName, round int) error {
	return each(sz.writers, func(w int) error {
		for i := w; i < sz.burst; i += sz.writers {
			if err := update(ctx, client, live[w][(i/sz.writers)%len(live[w])], round*sz.burst+i); err != nil {
				return err
			}
		}
		return nil
	})
}

func update(ctx context.Context, client kubernetes.Interface, o types.NamespacedName, v int) error {
	patch := fmt.Appendf(nil, `{"data":{"v":"%d"}}`, v+1) // "0" is the first value
	_, err := client.CoreV1().ConfigMaps(o.Namespace).Patch(ctx, o.Name, types.MergePatchType, patch, metav1.PatchOptions{})
	return err
}

// each runs f(0) … f(n-1) concurrently and returns their errors.
func each(n int, f func(int) error) error {
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { errs[i] = f(i) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

func mustParse(rv string) uint64 {
	n, err := strconv.ParseUint(rv, 10, 64)
	if err != nil {
		panic(err)
	}
	return n
}
