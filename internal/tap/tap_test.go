package tap

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/util/workqueue"

	"github.com/informer-walkthrough/informer-walkthrough/check/leakcheck"
	"github.com/informer-walkthrough/informer-walkthrough/internal/trace"
)

func cm(name, rv string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, ResourceVersion: rv}}
}

// strings renders events as their String methods do.
func strs(events []Event) []string {
	var s []string
	for _, e := range events {
		s = append(s, fmt.Sprint(e))
	}
	return s
}

// TestHandler: each call is passed on, then recorded once, a tombstone
// as it came; the trace gets the same calls.
func TestHandler(t *testing.T) {
	rec := NewRecorder(t.Context())
	tr := trace.New("test")
	uninstall, err := trace.Install(tr)
	if err != nil {
		t.Fatal(err)
	}
	defer uninstall()
	var passed []string
	h := Handler{Rec: rec, Next: cache.ResourceEventHandlerDetailedFuncs{
		AddFunc:    func(obj any, initial bool) { passed = append(passed, "add") },
		UpdateFunc: func(o, n any) { passed = append(passed, "update") },
		DeleteFunc: func(obj any) { passed = append(passed, "delete") },
	}}
	a := cm("a", "1")
	h.OnAdd(a, true)
	h.OnUpdate(a, a)
	h.OnDelete(cache.DeletedFinalStateUnknown{Key: "ns/a", Obj: a})
	got, err := rec.Await(t.Context(), 3)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"OnAdd     configmap/a rv=1  isInInitialList=true",
		"OnUpdate  configmap/a rv=1 -> rv=1  (old == new)",
		"OnDelete  DeletedFinalStateUnknown key=ns/a, last known configmap/a rv=1",
	}
	if !slices.Equal(strs(got), want) {
		t.Errorf("recorded %q, want %q", strs(got), want)
	}
	if !slices.Equal(passed, []string{"add", "update", "delete"}) {
		t.Errorf("passed on %q", passed)
	}
	if !got[2].(HandlerCall).Tombstone() || !got[1].(HandlerCall).Same() {
		t.Error("Tombstone or Same is wrong")
	}
	events := tr.Trace().Events
	if len(events) != 3 || events[0].Lane != trace.Handlers || events[1].Timed != true {
		t.Errorf("trace: %+v", events)
	}
}

// TestQueue: the calls a worker makes, recorded in the order they took
// effect; Len and NumRequeues are the queue's own.
func TestQueue(t *testing.T) {
	rec := NewRecorder(t.Context())
	q := Queue[string]{workqueue.NewTypedRateLimitingQueue(
		workqueue.NewTypedItemExponentialFailureRateLimiter[string](time.Millisecond, time.Millisecond)), rec}
	q.Add("ns/a")
	q.Add("ns/a") // already queued: one key
	if q.Len() != 1 {
		t.Errorf("Len %d, want 1", q.Len())
	}
	key, _ := q.Get()
	q.AddRateLimited(key)
	q.Done(key)
	key, _ = q.Get() // back after its 1ms backoff
	q.Forget(key)
	q.Done(key)
	q.ShutDown()
	if _, shutdown := q.Get(); !shutdown {
		t.Error("Get after ShutDown handed out a key")
	}
	got := strs(rec.Drain())
	want := []string{"Add(ns/a)", "Add(ns/a)", "Get(ns/a)", "AddRateLimited(ns/a) (NumRequeues 1)", "Done(ns/a)",
		"Get(ns/a)", "Forget(ns/a)", "Done(ns/a)", "ShutDown()", "Get() reported shutdown"}
	if !slices.Equal(got, want) {
		t.Errorf("recorded\n%q, want\n%q", got, want)
	}
}

// TestHoldReleasedWhenContextEnds: a held call goes on once the
// recorder's context ends, even if the step never releases it.
func TestHoldReleasedWhenContextEnds(t *testing.T) {
	leakcheck.Verify(t)
	ctx, cancel := context.WithCancel(t.Context())
	rec := NewRecorder(ctx)
	rec.Hold(1, func(e Event) bool { c, ok := e.(HandlerCall); return ok && c.Method == "OnAdd" })
	returned := make(chan struct{})
	go func() {
		Handler{Rec: rec}.OnAdd(cm("a", "1"), false)
		close(returned)
	}()
	got, err := rec.Await(t.Context(), 2)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := got[1].(Held); !ok {
		t.Fatalf("second event %T, want Held", got[1])
	}
	select {
	case <-returned:
		t.Fatal("the held call returned before its release")
	default:
	}
	cancel()
	<-returned
}

// TestHoldReleaseOneByOne: a gate holds the next n matching calls, and
// Release lets one go at a time; calls that do not match pass.
func TestHoldReleaseOneByOne(t *testing.T) {
	rec := NewRecorder(t.Context())
	q := Queue[string]{workqueue.NewTypedRateLimitingQueue(
		workqueue.DefaultTypedControllerRateLimiter[string]()), rec}
	defer q.ShutDown()
	gate := rec.Hold(2, func(e Event) bool { c, ok := e.(QueueCall); return ok && c.Method == "Add" && c.Item == "ns/b" })
	defer gate.Open()
	q.Add("ns/a") // not held
	done := make(chan struct{})
	go func() {
		defer close(done)
		q.Add("ns/b")
		q.Add("ns/b")
		q.Add("ns/b") // the third is not held: the gate held two
	}()
	for range 2 {
		for {
			e, err := rec.Next(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := e.(Held); ok {
				break
			}
		}
		gate.Release()
	}
	<-done
}

// TestListerWatcher: List and Watch are recorded with what they
// returned, and a fake's opt-out of watch-list survives the wrapping.
func TestListerWatcher(t *testing.T) {
	client := fake.NewClientset(cm("a", ""))
	lw := cache.ToListWatcherWithWatchListSemantics(
		cache.NewListWatchFromClient(client.CoreV1().RESTClient(), "configmaps", "ns", nil), client)
	if u, ok := lw.(interface{ IsWatchListSemanticsUnSupported() bool }); !ok || !u.IsWatchListSemanticsUnSupported() {
		t.Skip("the fake does not opt out of watch-list in this client-go")
	}
	rec := NewRecorder(t.Context())
	tapped := NewListerWatcher(lw, rec)
	if !tapped.IsWatchListSemanticsUnSupported() {
		t.Error("the wrapped ListerWatcher lost the fake's opt-out")
	}
	lwc := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return client.CoreV1().ConfigMaps("ns").List(ctx, o)
		},
		WatchFuncWithContext: client.CoreV1().ConfigMaps("ns").Watch,
	}
	tapped = NewListerWatcher(lwc, rec)
	if _, err := tapped.ListWithContext(t.Context(), metav1.ListOptions{ResourceVersion: "0"}); err != nil {
		t.Fatal(err)
	}
	w, err := tapped.WatchWithContext(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w.Stop()
	got := strs(rec.Drain())
	want := []string{`List(resourceVersion="0") → 1 items, rv=2`, `Watch(resourceVersion="")`}
	if !slices.Equal(got, want) {
		t.Errorf("recorded %q, want %q", got, want)
	}
}

// TestTransport: a request is recorded with the object it carried and
// the server's answer, its Status reason included; a held request has
// not reached the server until the step releases it.
func TestTransport(t *testing.T) {
	leakcheck.Verify(t)
	reached := make(chan string, 10)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached <- r.Method
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusConflict)
		fmt.Fprint(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Conflict","code":409}`)
	}))
	defer srv.Close()
	rec := NewRecorder(t.Context())
	gate := rec.Hold(1, func(e Event) bool { r, ok := e.(Request); return ok && r.Verb == "update" })
	defer gate.Open()
	client := kubernetes.NewForConfigOrDie(Transport(&rest.Config{Host: srv.URL}, rec, trace.Workers))
	errc := make(chan error, 1)
	go func() {
		_, err := client.CoreV1().ConfigMaps("ns").Update(context.Background(),
			&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a-summary"}, Data: map[string]string{"k": "v"}},
			metav1.UpdateOptions{})
		errc <- err
	}()
	e, err := rec.Next(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	held, ok := e.(Held)
	if !ok {
		t.Fatalf("first event %T, want Held", e)
	}
	if req := held.Event.(Request); req.Name != "a-summary" || req.Obj.(*corev1.ConfigMap).Data["k"] != "v" {
		t.Errorf("held %+v", req)
	}
	select {
	case m := <-reached:
		t.Fatalf("a held %s reached the server", m)
	default:
	}
	gate.Release()
	e, err = rec.Next(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if req := e.(Request); req.Code != 409 || req.Reason != "Conflict" || !req.Held {
		t.Errorf("recorded %v (held %t)", req, req.Held)
	}
	if err := <-errc; err == nil {
		t.Error("the client did not get the 409")
	}
}

// TestTypedHandler: a typed handler's calls are recorded as an untyped
// one's; a delete whose final state is unknown, as its tombstone.
func TestTypedHandler(t *testing.T) {
	rec := NewRecorder(t.Context())
	var deleted []string
	h := TypedHandler[*corev1.ConfigMap]{Rec: rec, Name: "typed", Next: cache.TypedResourceEventHandlerFuncs[*corev1.ConfigMap]{
		DeleteFunc: func(d cache.DeletedObject[*corev1.ConfigMap]) { deleted = append(deleted, d.GetKey()) },
	}}
	a := cm("a", "1")
	h.OnAdd(a, false)
	h.OnDelete(cache.DeletedObject[*corev1.ConfigMap]{OptionalObj: a,
		FinalStateUnknown: &cache.DeletedFinalStateUnknown{Key: "ns/a", Obj: a}})
	want := []string{
		"typed  OnAdd     configmap/a rv=1  isInInitialList=false",
		"typed  OnDelete  DeletedFinalStateUnknown key=ns/a, last known configmap/a rv=1",
	}
	if got := strs(rec.Drain()); !slices.Equal(got, want) {
		t.Errorf("recorded %q, want %q", got, want)
	}
	if !slices.Equal(deleted, []string{"ns/a"}) {
		t.Errorf("passed on %q", deleted)
	}
}

// TestCallLines: handler calls rendered by the chapter's own line, the
// calls it renders as "" and other events skipped.
func TestCallLines(t *testing.T) {
	rec := NewRecorder(t.Context())
	h := Handler{Rec: rec}
	a := cm("a", "1")
	h.OnAdd(a, true)
	rec.emit(Held{Event: HandlerCall{Method: "OnAdd", Obj: a}})
	h.OnUpdate(a, cm("a", "2"))
	h.OnDelete(a)
	updates := rec.CallLines(func(c HandlerCall) string {
		if c.Method == "OnAdd" {
			return ""
		}
		return c.Method + " " + resourceVersion(c.Obj)
	})
	got, err := updates.Await(t.Context(), 2)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"OnUpdate 2", "OnDelete 1"}; !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestTransform: next is called, the object recorded once it returned;
// a hold keeps the transform from returning until released.
func TestTransform(t *testing.T) {
	leakcheck.Verify(t)
	rec := NewRecorder(t.Context())
	var passed []string
	f := Transform(rec, func(obj any) (any, error) {
		c := obj.(*corev1.ConfigMap)
		passed = append(passed, c.Name)
		c.Data = map[string]string{"edited": "in place"}
		return obj, nil
	})
	gate := rec.Hold(1, func(e Event) bool {
		tr, ok := e.(Transformed)
		return ok && tr.Obj.(*corev1.ConfigMap).Name == "b"
	})
	defer gate.Open()
	if _, err := f(cm("a", "1")); err != nil {
		t.Fatal(err)
	}
	returned := make(chan struct{})
	go func() { _, _ = f(cm("b", "2")); close(returned) }()
	got, err := rec.Await(t.Context(), 3)
	if err != nil {
		t.Fatal(err)
	}
	if _, held := got[2].(Held); !held {
		t.Fatalf("third event %T, want Held", got[2])
	}
	select {
	case <-returned:
		t.Fatal("the held transform returned")
	default:
	}
	gate.Release()
	<-returned
	if !slices.Equal(passed, []string{"a", "b"}) {
		t.Errorf("passed on %q", passed)
	}
	first := got[0].(Transformed)
	if first.Obj.(*corev1.ConfigMap).Data != nil || first.Out.(*corev1.ConfigMap).Data == nil {
		t.Errorf("recorded given %v, returned %v; want the object as given, then as edited",
			first.Obj, first.Out)
	}
}

// TestWatch: each event a stream carries is recorded before the
// consumer gets it; an end is recorded only if the consumer still read
// the stream and it carried no ERROR; a stopped stream is not relayed.
func TestWatch(t *testing.T) {
	leakcheck.Verify(t)
	rec := NewRecorder(t.Context())
	relayed := func(w *Watch) []string {
		var got []string
		for ev := range w.ResultChan() {
			got = append(got, string(ev.Type))
		}
		return got
	}

	// The stream ends under its consumer: recorded.
	fw := watch.NewFake()
	var ended sync.WaitGroup
	ended.Add(3)
	w := NewWatch(t.Context(), fw, rec, ended.Done)
	go func() {
		fw.Add(cm("a", "1"))
		fw.Action(watch.Bookmark, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{ResourceVersion: "2",
			Annotations: map[string]string{metav1.InitialEventsAnnotationKey: "true"}}})
		fw.Stop()
	}()
	if got := relayed(w); !slices.Equal(got, []string{"ADDED", "BOOKMARK"}) {
		t.Errorf("relayed %q", got)
	}

	// An ERROR, then the end: the ERROR was the end.
	fw = watch.NewFake()
	w = NewWatch(t.Context(), fw, rec, ended.Done)
	go func() {
		fw.Error(&metav1.Status{Code: 410, Reason: metav1.StatusReasonExpired, Message: "too old"})
		fw.Stop()
	}()
	relayed(w)

	// The consumer stops the stream: no end, nothing more relayed.
	fw = watch.NewFake()
	w = NewWatch(t.Context(), fw, rec, ended.Done)
	w.Stop()
	if got := relayed(w); len(got) != 0 {
		t.Errorf("a stopped watch relayed %q", got)
	}
	ended.Wait()

	got := strs(rec.Drain())
	want := []string{
		"ADDED     configmap/a rv=1",
		"BOOKMARK  configmap/ rv=2  k8s.io/initial-events-end=true",
		"(stream ended)",
		"ERROR     410 Expired: too old",
	}
	if !slices.Equal(got, want) {
		t.Errorf("recorded\n%q, want\n%q", got, want)
	}
}

// TestListerWatcherStreams: with Streams set, a Watch's stream is
// relayed and recorded after the Watch call itself; Wait returns once
// it has ended.
func TestListerWatcherStreams(t *testing.T) {
	leakcheck.Verify(t)
	rec := NewRecorder(t.Context())
	fw := watch.NewFake()
	lw := NewListerWatcher(&cache.ListWatch{
		WatchFuncWithContext: func(context.Context, metav1.ListOptions) (watch.Interface, error) { return fw, nil },
	}, rec)
	lw.Streams = true
	w, err := lw.WatchWithContext(t.Context(), metav1.ListOptions{ResourceVersion: "5"})
	if err != nil {
		t.Fatal(err)
	}
	go fw.Modify(cm("a", "6"))
	<-w.ResultChan()
	w.Stop()
	lw.Wait()
	got := strs(rec.Drain())
	if len(got) != 2 || got[0] != `Watch(resourceVersion="5")` || !strings.HasPrefix(got[1], "MODIFIED") {
		t.Errorf("recorded %q", got)
	}
}

// TestWatchAfterContextEnds: what a stream carries once the Watch
// call's context ended is relayed, not recorded, nor is its end: a
// stopping reflector's stream makes up an ERROR as it closes.
func TestWatchAfterContextEnds(t *testing.T) {
	leakcheck.Verify(t)
	rec := NewRecorder(t.Context())
	ctx, cancel := context.WithCancel(t.Context())
	fw := watch.NewFake()
	w := NewWatch(ctx, fw, rec, nil)
	cancel()
	go func() {
		fw.Error(&metav1.Status{Code: 500, Message: "context canceled"})
		fw.Stop()
	}()
	var relayed int
	for range w.ResultChan() {
		relayed++
	}
	if relayed != 1 {
		t.Errorf("relayed %d events, want 1", relayed)
	}
	if got := rec.Drain(); len(got) != 0 {
		t.Errorf("recorded %q", strs(got))
	}
}

// TestFIFO: each call on a queue is recorded once it returned, a Pop
// with its entry, after the handler calls processing made, a Pop that
// hands out nothing with why; a queue that
// takes bookmarks still does, wrapped.
func TestFIFO(t *testing.T) {
	rec := NewRecorder(t.Context())
	var got []string
	rec.Follow(func(e Event) { got = append(got, fmt.Sprint(e)) })
	q := NewFIFO(cache.NewDeltaFIFOWithOptions(cache.DeltaFIFOOptions{KeyFunction: cache.MetaNamespaceKeyFunc}), rec, nil)
	if _, ok := q.(cache.ReflectorBookmarkStore); ok {
		t.Error("a wrapped DeltaFIFO takes bookmarks")
	}
	h := Handler{Rec: rec}
	_ = q.Add(cm("a", "1"))
	_ = q.Update(cm("a", "2"))
	if _, err := q.Pop(func(obj any, initial bool) error {
		h.OnAdd(obj.(cache.Deltas).Newest().Object, initial)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	q.Close()
	if _, err := q.Pop(func(any, bool) error { return nil }); !errors.Is(err, cache.ErrFIFOClosed) {
		t.Errorf("Pop on a closed queue: %v", err)
	}
	want := []string{
		"Add configmap/a rv=1",
		"Update configmap/a rv=2",
		"OnAdd     configmap/a rv=2  isInInitialList=false",
		"Pop ns/a [Added configmap/a rv=1] [Updated configmap/a rv=2]",
		"Close",
		"Pop → ErrFIFOClosed: closed and empty",
	}
	if !slices.Equal(got, want) {
		t.Errorf("recorded\n%q, want\n%q", got, want)
	}
	if rest := rec.Drain(); len(rest) != 0 {
		t.Errorf("followed events were kept too: %q", strs(rest))
	}

	real := NewFIFO(cache.NewRealFIFOWithOptions(cache.RealFIFOOptions{KeyFunction: cache.MetaNamespaceKeyFunc,
		KnownObjects: cache.NewStore(cache.MetaNamespaceKeyFunc)}), rec, nil)
	b, ok := real.(cache.ReflectorBookmarkStore)
	if !ok {
		t.Fatal("a wrapped RealFIFO does not take bookmarks")
	}
	got = nil
	if err := b.Bookmark("7"); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, []string{"Bookmark rv 7"}) {
		t.Errorf("recorded %q", got)
	}
}

// TestNamed: two named recorders' events come to the one step, in the
// order recorded, each as From its recorder; the trace names it too.
func TestNamed(t *testing.T) {
	rec := NewRecorder(t.Context())
	tr := trace.New("test")
	uninstall, err := trace.Install(tr)
	if err != nil {
		t.Fatal(err)
	}
	defer uninstall()
	a, b := rec.Named("a"), rec.Named("b")
	qa := Queue[string]{TypedRateLimitingInterface: workqueue.NewTypedRateLimitingQueue(
		workqueue.DefaultTypedControllerRateLimiter[string]()), Rec: a}
	defer qa.ShutDown()
	qa.Add("x")
	cb := LeaderCallbacks(leaderelection.LeaderCallbacks{}, b)
	cb.OnNewLeader("a")
	got, err := rec.Await(t.Context(), 2)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"a Add(x)", "b OnNewLeader(a)"}
	if s := []string{fmt.Sprint(got[0].(From).Name, " ", got[0].(From).Event),
		fmt.Sprint(got[1].(From).Name, " ", got[1].(From).Event)}; !slices.Equal(s, want) {
		t.Errorf("recorded %q, want %q", s, want)
	}
	events := tr.Trace().Events
	if len(events) != 2 || events[0].Text != "a: x" || events[1].Text != "b: a" {
		t.Errorf("trace: %+v", events)
	}
}

// TestLeaderCallbacks: each callback is passed on; OnStartedLeading is
// recorded before it runs, the others once they returned.
func TestLeaderCallbacks(t *testing.T) {
	rec := NewRecorder(t.Context())
	var passed []string
	cb := LeaderCallbacks(leaderelection.LeaderCallbacks{
		OnStartedLeading: func(context.Context) {
			if len(rec.Drain()) != 1 {
				t.Error("OnStartedLeading ran before it was recorded")
			}
			passed = append(passed, "started")
		},
		OnStoppedLeading: func() { passed = append(passed, "stopped") },
		OnNewLeader:      func(id string) { passed = append(passed, "new "+id) },
	}, rec)
	cb.OnNewLeader("me")
	if got, _ := rec.Next(t.Context()); fmt.Sprint(got) != "OnNewLeader(me)" {
		t.Errorf("recorded %v", got)
	}
	cb.OnStartedLeading(t.Context())
	cb.OnStoppedLeading()
	if got := strs(rec.Drain()); !slices.Equal(got, []string{"OnStoppedLeading()"}) {
		t.Errorf("recorded %q", got)
	}
	if !slices.Equal(passed, []string{"new me", "started", "stopped"}) {
		t.Errorf("passed on %q", passed)
	}
}

// TestRender: the lines a chapter renders from events, the others
// skipped.
func TestRender(t *testing.T) {
	rec := NewRecorder(t.Context())
	q := Queue[string]{TypedRateLimitingInterface: workqueue.NewTypedRateLimitingQueue(
		workqueue.DefaultTypedControllerRateLimiter[string]()), Rec: rec}
	defer q.ShutDown()
	q.Add("x")
	q.Get()
	q.Done("x")
	adds := rec.Render(func(e Event) (string, bool) {
		c, ok := e.(QueueCall)
		return "queue." + c.String(), ok && c.Method != "Get"
	})
	got, err := adds.Await(t.Context(), 2)
	if err != nil || !slices.Equal(got, []string{"queue.Add(x)", "queue.Done(x)"}) {
		t.Errorf("rendered %q, %v", got, err)
	}
}
