package apiserver

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/informer-walkthrough/informer-walkthrough/check/leakcheck"
)

// The concurrency tests run under -race: writers and watchers at once,
// a watcher that never reads, streams dropped in the middle of a burst,
// two servers side by side. startServer checks that no goroutine outlives
// a test.

// newNamespace creates a namespace through the store.
func newNamespace(t *testing.T, s *Server, name string) {
	t.Helper()
	if _, err := s.store.create(context.Background(), namespacesResource(), "", "test", &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, false); err != nil {
		t.Fatal(err)
	}
}

func configMap(name, value string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": name}}, Data: map[string]string{"v": value}}
}

var configMapsRes = builtinRegistry().lookup(corev1.SchemeGroupVersion.WithResource("configmaps"))

// TestSlowWatcherStore: a watcher whose queue is never drained holds up no
// writer; once more than maxPending events wait for it, the store closes
// it (done) and forgets it, as kube-apiserver closes a watcher that does
// not keep up. Its client would re-watch from its last resourceVersion.
func TestSlowWatcherStore(t *testing.T) {
	if leakcheck.RunApart(t) {
		return // it waits on a stalled watcher, apart from the other tests
	}
	s := startServer(t)
	newNamespace(t, s, "ns")
	w, err := s.store.watch(configMapsRes, watchOptions{listOptions: listOptions{Namespace: "ns"}})
	if err != nil {
		t.Fatal(err)
	}
	const writers = 4
	var wg sync.WaitGroup
	for i := range writers {
		wg.Go(func() {
			for j := range maxPending/writers + 1 {
				if _, err := s.store.create(context.Background(), configMapsRes, "ns", "test", configMap(fmt.Sprintf("cm-%d-%d", i, j), ""), false); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait() // would never return if a writer blocked on the watcher
	select {
	case <-w.done:
	default:
		t.Fatal("the slow watcher is still open")
	}
	if n := s.OpenWatches(); n != 0 {
		t.Errorf("OpenWatches %d, want 0", n)
	}
	if n := len(w.take()); n != maxPending {
		t.Errorf("%d events queued for the slow watcher, want maxPending (%d)", n, maxPending)
	}
}

// TestSlowWatcherHTTP: the same through HTTP. A client opens a watch and
// never reads it; writers on several goroutines carry on while the socket
// buffers fill and then maxPending events queue up, and the server closes
// the watch. Once the client hangs up, the handler ends (startServer's
// leak check).
func TestSlowWatcherHTTP(t *testing.T) {
	if leakcheck.RunApart(t) {
		return // it waits on a stalled watcher, apart from the other tests
	}
	s := startServer(t)
	newNamespace(t, s, "ns")
	c := newClient(t, s)
	resp, err := c.c.Do(c.newRequest(t.Context(), http.MethodGet, "/api/v1/namespaces/ns/configmaps?watch=true", nil))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()

	payload := strings.Repeat("x", 4<<10) // fills the socket buffers sooner
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Go(func() {
			for j := 0; s.OpenWatches() > 0; j++ {
				if j > 5*maxPending {
					t.Errorf("writer %d: the slow watch is still open after %d writes", i, j)
					return
				}
				if _, err := s.store.create(context.Background(), configMapsRes, "ns", "test", configMap(fmt.Sprintf("cm-%d-%d", i, j), payload), false); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
}

// TestEventsInOrder: writers on several goroutines, and every watcher
// (from now, watch-list, a label selector) gets every change it selects,
// once, in resourceVersion order.
func TestEventsInOrder(t *testing.T) {
	s := startServer(t)
	c := newClient(t, s)
	c.mustDo(http.StatusCreated, http.MethodPost, "/api/v1/namespaces", map[string]any{"metadata": map[string]any{"name": "ns"}})
	const path = "/api/v1/namespaces/ns/configmaps"
	rv := s.ResourceVersion()
	streams := map[string]*stream{
		"from now":   c.watch(path + "?watch=true&resourceVersion=" + rv),
		"watch-list": c.watch(path + "?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true"),
		"app=cm-0":   c.watch(path + "?watch=true&resourceVersion=" + rv + "&labelSelector=app%3Dcm-0"),
	}
	const writers, rounds = 4, 25
	var wg sync.WaitGroup
	for i := range writers {
		wg.Go(func() {
			name := fmt.Sprintf("cm-%d", i)
			obj := c.mustDo(http.StatusCreated, http.MethodPost, path, configMap(name, "0"))
			for j := 1; j < rounds; j++ {
				obj["data"] = map[string]any{"v": strconv.Itoa(j)}
				obj = c.mustDo(http.StatusOK, http.MethodPut, path+"/"+name, obj)
			}
			c.mustDo(http.StatusOK, http.MethodDelete, path+"/"+name, nil)
		})
	}
	wg.Wait()
	s.DropWatches()
	for name, st := range streams {
		var last uint64
		n := 0
		for _, fr := range st.rest() {
			if fr.Type == "BOOKMARK" {
				continue
			}
			rv := rvOfJSON(t, fr.Object)
			if rv <= last {
				t.Errorf("%s: resourceVersion %d after %d", name, rv, last)
			}
			last = rv
			n++
		}
		want := writers * (rounds + 1)
		if name == "app=cm-0" {
			want = rounds + 1
		}
		if n != want {
			t.Errorf("%s: %d events, want %d", name, n, want)
		}
	}
}

// TestDropWatchesResume: DropWatches in the middle of a burst of writes
// ends the streams; a client that re-watches from the last resourceVersion
// it saw misses nothing and sees nothing twice.
func TestDropWatchesResume(t *testing.T) {
	s := startServer(t)
	c := newClient(t, s)
	newNamespace(t, s, "ns")
	const writes = 300
	from := s.ResourceVersion()
	first, _ := strconv.ParseUint(from, 10, 64)

	// The writer holds its second half until the first drop, so that at
	// least one drop lands mid-burst however the goroutines are scheduled.
	firstDrop := make(chan struct{})
	var once sync.Once
	defer once.Do(func() { close(firstDrop) }) // should the test stop early
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := range writes {
			if i == writes/2 {
				<-firstDrop
			}
			c.mustDo(http.StatusCreated, http.MethodPost, "/api/v1/namespaces/ns/configmaps", configMap(fmt.Sprintf("cm-%d", i), ""))
		}
	})
	var seen []uint64
	for drops := 0; len(seen) < writes; drops++ {
		st := c.watch("/api/v1/namespaces/ns/configmaps?watch=true&resourceVersion=" + from)
		// Read a few events, then drop every watch.
		for range 40 {
			if len(seen) == writes {
				break
			}
			seen = append(seen, rvOfJSON(t, st.next().Object))
		}
		s.DropWatches()
		if drops == 0 {
			once.Do(func() { close(firstDrop) })
		}
		for _, fr := range st.rest() { // what was queued before the drop
			seen = append(seen, rvOfJSON(t, fr.Object))
		}
		from = strconv.FormatUint(seen[len(seen)-1], 10)
	}
	wg.Wait()
	for i, rv := range seen {
		if rv != first+uint64(i)+1 {
			t.Fatalf("event %d has resourceVersion %d, want %d (missed or repeated)", i, rv, first+uint64(i)+1)
		}
	}
	if len(seen) != writes {
		t.Errorf("%d events, want %d", len(seen), writes)
	}
}

// TestTwoServers: two workshop clusters in one process share nothing:
// resourceVersions, objects, watches, history, faults and request logs are
// each their own, even while both are busy.
func TestTwoServers(t *testing.T) {
	a, b := startServer(t), startServer(t)
	if !strings.HasPrefix(a.URL(), "http://127.0.0.1:") || a.URL() == b.URL() {
		t.Errorf("URLs %s and %s: want two loopback ports", a.URL(), b.URL())
	}
	ca, cb := newClient(t, a), newClient(t, b)
	var wg sync.WaitGroup
	for _, c := range []*client{ca, cb} {
		wg.Go(func() {
			c.mustDo(http.StatusCreated, http.MethodPost, "/api/v1/namespaces", map[string]any{"metadata": map[string]any{"name": "ns"}})
			for i := range 20 {
				c.mustDo(http.StatusCreated, http.MethodPost, "/api/v1/namespaces/ns/configmaps", configMap(fmt.Sprintf("cm-%d", i), ""))
			}
		})
	}
	wg.Wait()
	if a.ResourceVersion() != "21" || b.ResourceVersion() != "21" {
		t.Errorf("resourceVersions %s and %s, want 21 each", a.ResourceVersion(), b.ResourceVersion())
	}

	wa := ca.watch("/api/v1/namespaces/ns/configmaps?watch=true&resourceVersion=21")
	wb := cb.watch("/api/v1/namespaces/ns/configmaps?watch=true&resourceVersion=21")
	a.InjectFault(Fault{Verb: "create", Err: fmt.Errorf("injected")})
	if code, _ := cb.do(http.MethodPost, "/api/v1/namespaces/ns/configmaps", configMap("only-b", "")); code != http.StatusCreated {
		t.Errorf("a fault injected into a made a create on b fail: HTTP %d", code)
	}
	a.ClearFaults()
	a.CompactHistory()
	if code, _ := cb.do(http.MethodGet, "/api/v1/namespaces/ns/configmaps?resourceVersion=1&resourceVersionMatch=Exact", nil); code != http.StatusOK {
		t.Errorf("an exact list from b after a.CompactHistory: HTTP %d", code)
	}
	if n := a.DropWatches(); n != 1 {
		t.Errorf("a.DropWatches ended %d watches, want 1", n)
	}
	if got := wa.rest(); len(got) != 0 {
		t.Errorf("a's watch saw %v", shape(got))
	}
	if n := b.OpenWatches(); n != 1 {
		t.Errorf("b has %d open watches after a.DropWatches, want 1", n)
	}
	if fr := wb.next(); fr.Type != string(watch.Added) || str(fr.Object, "metadata", "name") != "only-b" {
		t.Errorf("b's watch: %s, want ADDED only-b", shape([]frame{fr}))
	}
	if na, nb := len(a.Requests()), len(b.Requests()); na != 22 || nb != 24 {
		t.Errorf("request logs hold %d and %d requests, want 22 and 24", na, nb)
	}
}

// TestCloseEndsWatches: Close ends every open stream and returns once the
// server's goroutines are gone.
func TestCloseEndsWatches(t *testing.T) {
	s := startServer(t)
	c := newClient(t, s)
	st := c.watch("/api/v1/pods?watch=true")
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = s.Close()
	}()
	if got := st.rest(); len(got) != 0 {
		t.Errorf("events %v", shape(got))
	}
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not return")
	}
}
