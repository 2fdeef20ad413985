package main

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"

	"github.com/informer-walkthrough/informer-walkthrough/check/leakcheck"
	"github.com/informer-walkthrough/informer-walkthrough/check/scripted"
	"github.com/informer-walkthrough/informer-walkthrough/internal/cachecopy"
	"github.com/informer-walkthrough/informer-walkthrough/internal/tap"
)

// TestProcessDeltasMatchesInformer pins step 4's claim that the handler
// calls it prints are an informer's: cachecopy.ProcessDeltas, which
// process calls, is a copy of client-go's, which is unexported. Step 3's
// calls are made twice: by a real informer's reflector, fed by a
// scripted ListerWatcher, and by hand on a RealFIFO whose entries are
// popped through the copy. Both must make the same handler calls, in the
// same order. The informer's pods are *corev1.Pod, shown as the
// chapter's Pod (Generation as the version), so the calls print alike.
//
// The reflector relists only after a 410, and then only after its
// backoff (0.8-1.6 s). It resyncs on a timer, not on a call, so its
// resyncs are told apart (OnUpdate with the very same object twice) and
// only the first one after the last change is compared.
func TestProcessDeltasMatchesInformer(t *testing.T) {
	if leakcheck.RunApart(t) {
		return // it waits on a relist's backoff, apart from the other tests
	}
	leakcheck.Verify(t)

	// By hand, as step 4 does.
	store := cache.NewStore(podKey)
	q := cache.NewRealFIFOWithOptions(cachecopy.QueueOptions(Pod{}, podKey, store))
	if err := errors.Join(initialList(q), relist(q), resyncCalls(q)); err != nil {
		t.Fatal(err)
	}
	q.Close() // Pop returns ErrFIFOClosed once all is popped
	var got, gotResync []string
	for {
		var lines []string
		var entry cache.DeltaType
		_, err := q.Pop(func(obj any, isInInitialList bool) error {
			entry = obj.(cache.Deltas).Newest().Type
			h := handlerLog(func(line string) { lines = append(lines, line) })
			return process(store, h)(obj, isInInitialList)
		})
		if errors.Is(err, cache.ErrFIFOClosed) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if entry == cache.SyncAll || entry == cache.Sync {
			gotResync = append(gotResync, lines...)
			continue
		}
		got = append(got, lines...)
	}
	slices.Sort(gotResync) // the store's map order

	// By a real informer, through the same calls.
	ctx, cancel := context.WithCancel(t.Context())
	calls := make(chan string, 100)
	send := func(prefix string) handlerLog {
		return func(line string) {
			select {
			case calls <- prefix + line:
			case <-ctx.Done():
			}
		}
	}
	lw := scripted.New(corePods("10", corePod("pod-1", 1, "1"), corePod("pod-2", 1, "2"), corePod("pod-3", 1, "3")))
	_, informer := cache.NewInformerWithOptions(cache.InformerOptions{
		ListerWatcher: lw,
		ObjectType:    &corev1.Pod{},
		Handler:       asChapterPods{calls: send(""), resyncs: send(resync)},
		ResyncPeriod:  50 * time.Millisecond,
	})
	var wg sync.WaitGroup
	wg.Go(func() { informer.RunWithContext(ctx) })
	defer wg.Wait()
	defer cancel()

	var want []string
	want = append(want, await(t, calls, 3)...) // initialList
	w := lw.Next(t)
	w.Modify(corePod("pod-1", 2, "11")) // relist: the Update, then
	want = append(want, await(t, calls, 1)...)
	lw.SetList(corePods("20", corePod("pod-1", 3, "12"), corePod("pod-2", 1, "2")))
	gone := apierrors.NewResourceExpired("too old resource version")
	w.Error(&gone.ErrStatus) // the Replace, after a 410
	want = append(want, await(t, calls, 3)...)
	w = lw.Next(t)
	w.Action(watch.Bookmark, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{ResourceVersion: "25"}})
	w.Modify(corePod("pod-2", 2, "26"))
	want = append(want, await(t, calls, 1)...)
	wantResync := awaitResync(t, calls, 2)
	slices.Sort(wantResync)

	if !slices.Equal(got, want) {
		t.Errorf("handler calls by the chapter's processDeltas:\n  %s\nby an informer:\n  %s",
			strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
	if !cachecopy.QueueOptions(Pod{}, podKey, store).AtomicEvents {
		// Without AtomicFIFO, Resync skips keys with an entry queued,
		// and what is queued when the informer's timer fires is timing.
		t.Log("AtomicFIFO is off: resyncs not compared")
		return
	}
	if !slices.Equal(gotResync, wantResync) {
		t.Errorf("resync by the chapter's processDeltas: %q\nby an informer: %q", gotResync, wantResync)
	}
}

// resync marks the lines of resync calls on the informer's side.
const resync = "resync: "

// await returns the informer's next n handler calls, skipping resyncs.
func await(t *testing.T, calls <-chan string, n int) []string {
	t.Helper()
	var lines []string
	deadline := time.After(10 * time.Second) // to fail on, not to wait
	for len(lines) < n {
		select {
		case line := <-calls:
			if !strings.HasPrefix(line, resync) {
				lines = append(lines, line)
			}
		case <-deadline:
			t.Fatalf("informer: got %q, still waiting for %d more handler calls", lines, n-len(lines))
		}
	}
	return lines
}

// awaitResync returns the informer's next n resync calls. The informer
// calls handlers on one goroutine, one entry after another, so these
// come from a resync that began after every call await returned.
func awaitResync(t *testing.T, calls <-chan string, n int) []string {
	t.Helper()
	var lines []string
	deadline := time.After(10 * time.Second)
	for len(lines) < n {
		select {
		case line := <-calls:
			if l, ok := strings.CutPrefix(line, resync); ok {
				lines = append(lines, l)
			} else {
				t.Fatalf("informer: unexpected handler call %q", line)
			}
		case <-deadline:
			t.Fatalf("informer: no resync (got %q)", lines)
		}
	}
	return lines
}

// asChapterPods passes an informer's handler calls on with each
// *corev1.Pod as the chapter's Pod. An OnUpdate given the very same
// object twice comes from a resync (the informer's store hands out what
// it holds), and goes to resyncs; a relist's OnUpdate gets a new object.
type asChapterPods struct{ calls, resyncs handlerLog }

func (a asChapterPods) OnAdd(obj any, isInInitialList bool) {
	a.calls.OnAdd(chapterPod(obj), isInInitialList)
}

func (a asChapterPods) OnUpdate(old, obj any) {
	if old == obj {
		a.resyncs.OnUpdate(chapterPod(old), chapterPod(obj))
		return
	}
	a.calls.OnUpdate(chapterPod(old), chapterPod(obj))
}

func (a asChapterPods) OnDelete(obj any) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		a.calls.OnDelete(cache.DeletedFinalStateUnknown{Key: t.Key, Obj: chapterPod(t.Obj)})
		return
	}
	a.calls.OnDelete(chapterPod(obj))
}

func chapterPod(obj any) any {
	if p, ok := obj.(*corev1.Pod); ok {
		return pod(p.Name, int(p.Generation))
	}
	return obj
}

// corePod is a Kubernetes pod standing for the chapter's pod(name,
// version), with a resourceVersion for the reflector.
func corePod(name string, version int, rv string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
		Name: name, Generation: int64(version), ResourceVersion: rv,
	}}
}

// corePods is a pod list at resourceVersion rv.
func corePods(rv string, pods ...*corev1.Pod) *corev1.PodList {
	list := &corev1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: rv}}
	for _, p := range pods {
		list.Items = append(list.Items, *p)
	}
	return list
}

// handlerLog is an event handler that renders each call as the chapter
// prints it (callLine), for the comparison above.
type handlerLog func(line string)

func (l handlerLog) OnAdd(obj any, isInInitialList bool) {
	l(callLine(tap.HandlerCall{Method: "OnAdd", Obj: obj, InInitialList: isInInitialList}))
}

func (l handlerLog) OnUpdate(old, obj any) {
	l(callLine(tap.HandlerCall{Method: "OnUpdate", Old: old, Obj: obj}))
}

func (l handlerLog) OnDelete(obj any) { l(callLine(tap.HandlerCall{Method: "OnDelete", Obj: obj})) }
