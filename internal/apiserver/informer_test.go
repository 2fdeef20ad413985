package apiserver

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	clientfeatures "k8s.io/client-go/features"
	clientfeaturestesting "k8s.io/client-go/features/testing"
	"k8s.io/client-go/informers"
	corev1informers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/informer-walkthrough/informer-walkthrough/check/leakcheck"
)

// TestInformersSync: a typed informer, a hand-built reflector and the
// shared informer factory all fill their caches from the workshop cluster
// and then follow it, with client-go's WatchListClient feature on (the
// default in v0.37.2) and off. The server's request log shows the two ways
// a reflector starts: one watch-list request (watch=true with
// sendInitialEvents=true, ended by the initial-events-end bookmark), or a
// LIST then a WATCH from the list's resourceVersion.
//
// The feature is switched in-process with client-go's
// features/testing.SetFeatureDuringTest (the registered env-var gates
// support it); a reflector reads the gate when it is created
// (NewReflectorWithOptions). A single ListWatch can also opt out while the
// feature is on: cache.ToListWatcherWithWatchListSemantics with a client
// whose IsWatchListSemanticsUnSupported is true ("opted out" below).
func TestInformersSync(t *testing.T) {
	for _, watchList := range []bool{true, false} {
		t.Run(fmt.Sprintf("WatchListClient=%v", watchList), func(t *testing.T) {
			if leakcheck.RunApart(t) {
				return // its informers wait to sync; and the feature gate is the process's
			}
			clientfeaturestesting.SetFeatureDuringTest(t, clientfeatures.WatchListClient, watchList)
			for _, tc := range []struct {
				name  string
				start func(ctx context.Context, cs kubernetes.Interface, added func(name string)) (synced func() bool, wait func())
				// watchList: whether this client starts with a watch-list
				// request when the feature is on.
				optedOut bool
			}{
				{name: "typed informer", start: startTypedInformer},
				{name: "reflector", start: startReflector(false)},
				{name: "reflector opted out", start: startReflector(true), optedOut: true},
				{name: "factory", start: startFactory},
			} {
				t.Run(tc.name, func(t *testing.T) {
					c := newCapture(t)
					// Typed calls (the informer, the factory) speak
					// protobuf; the RESTClient of NewListWatchFromClient, JSON.
					cs, err := kubernetes.NewForConfig(c.s.Config())
					if err != nil {
						t.Fatal(err)
					}
					listRV := c.s.ResourceVersion()
					c.s.ResetRequests()

					ctx, cancel := context.WithCancel(t.Context())
					addedCh := make(chan string, 10)
					synced, wait := tc.start(ctx, cs, func(name string) { addedCh <- name })
					defer wait()
					defer cancel()
					if !cache.WaitForCacheSync(ctx.Done(), synced) {
						t.Fatal("cache did not sync")
					}
					// The three pods came with the initial sync; a new one
					// comes through the watch.
					got := map[string]bool{}
					for len(got) < 3 {
						got[receive(t, addedCh)] = true
					}
					if _, err := cs.CoreV1().Pods("capture").Create(ctx, &corev1.Pod{
						ObjectMeta: metav1.ObjectMeta{Name: "web-3"},
						Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx:1.27"}}},
					}, metav1.CreateOptions{}); err != nil {
						t.Fatal(err)
					}
					if name := receive(t, addedCh); name != "web-3" {
						t.Errorf("added %s, want web-3", name)
					}

					const pods = "GET /api/v1/namespaces/capture/pods"
					want := []string{
						pods + "?watch=true&resourceVersionMatch=NotOlderThan&sendInitialEvents=true&allowWatchBookmarks=true",
					}
					if !watchList || tc.optedOut {
						want = []string{
							pods + "?resourceVersion=0&limit=500",
							pods + "?watch=true&resourceVersion=" + listRV + "&allowWatchBookmarks=true",
						}
					}
					var reqs []string
					for _, r := range c.s.Requests() {
						if r.Verb == "list" || r.Verb == "watch" {
							reqs = append(reqs, r.String())
						}
					}
					if diff := cmp.Diff(want, reqs); diff != "" {
						t.Errorf("request log (-want +got):\n%s", diff)
					}
				})
			}
		})
	}
}

func receive(t *testing.T, ch <-chan string) string {
	t.Helper()
	select {
	case name := <-ch:
		return name
	case <-time.After(5 * time.Second):
		t.Fatal("no pod added within 5 s")
	}
	return ""
}

func startTypedInformer(ctx context.Context, cs kubernetes.Interface, added func(string)) (func() bool, func()) {
	inf := corev1informers.NewTypedPodInformer(cs, "capture", 0, nil)
	_, _ = inf.AddTypedEventHandler(corev1informers.PodHandlerFuncs{
		AddFunc: func(p *corev1.Pod) { added(p.Name) },
	})
	var wg sync.WaitGroup
	wg.Go(func() { inf.RunWithContext(ctx) })
	return inf.HasSynced, wg.Wait
}

func startFactory(ctx context.Context, cs kubernetes.Interface, added func(string)) (func() bool, func()) {
	f := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace("capture"))
	inf := f.Core().V1().Pods().Informer()
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) { added(obj.(*corev1.Pod).Name) },
	})
	f.StartWithContext(ctx)
	return inf.HasSynced, f.Shutdown
}

// startReflector runs the reflector of the tutorials: NewListWatchFromClient
// over the clientset's RESTClient, into a plain store.
func startReflector(optOut bool) func(context.Context, kubernetes.Interface, func(string)) (func() bool, func()) {
	return func(ctx context.Context, cs kubernetes.Interface, added func(string)) (func() bool, func()) {
		var lw cache.ListerWatcher = cache.NewListWatchFromClient(cs.CoreV1().RESTClient(), "pods", "capture", fields.Everything())
		if optOut {
			lw = cache.ToListWatcherWithWatchListSemantics(lw.(*cache.ListWatch), noWatchList{})
		}
		store := &syncStore{Store: cache.NewStore(cache.MetaNamespaceKeyFunc), added: added}
		r := cache.NewReflector(lw, &corev1.Pod{}, store, 0)
		var wg sync.WaitGroup
		wg.Go(func() { r.RunWithContext(ctx) })
		return store.hasSynced, wg.Wait
	}
}

// noWatchList is a client that says it does not support watch-list.
type noWatchList struct{}

func (noWatchList) IsWatchListSemanticsUnSupported() bool { return true }

// syncStore is a store that reports what it is given: a bare reflector has
// no HasSynced, but its first Replace is its initial sync.
type syncStore struct {
	cache.Store
	added  func(name string)
	mu     sync.Mutex
	synced bool
}

func (s *syncStore) Replace(items []any, rv string) error {
	for _, it := range items {
		s.added(it.(*corev1.Pod).Name)
	}
	s.mu.Lock()
	s.synced = true
	s.mu.Unlock()
	return s.Store.Replace(items, rv)
}

func (s *syncStore) Add(obj any) error {
	s.added(obj.(*corev1.Pod).Name)
	return s.Store.Add(obj)
}

func (s *syncStore) hasSynced() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.synced
}
