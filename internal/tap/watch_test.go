package tap

import (
	"context"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"

	"github.com/informer-walkthrough/informer-walkthrough/internal/check/leakcheck"
)

// TestWatch: each event is relayed as it came and recorded once the
// consumer took it, not before; Stop ends the relay.
func TestWatch(t *testing.T) {
	leakcheck.Verify(t)
	rec := NewRecorder(t.Context())
	fw := watch.NewFakeWithChanSize(2, false)
	w := NewWatch(fw, rec)
	fw.Add(cm("a", "1"))
	if got := rec.Drain(); len(got) != 0 {
		t.Errorf("recorded %q before the consumer took the event", strs(got))
	}
	ev := <-w.ResultChan()
	if ev.Type != watch.Added || ev.Object.(interface{ GetName() string }).GetName() != "a" {
		t.Errorf("relayed %v, want ADDED a", ev)
	}
	got, err := rec.WatchEvents().Await(t.Context(), 1)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"ADDED configmap/a"}; !slices.Equal(got, want) {
		t.Errorf("recorded %q, want %q", got, want)
	}
	fw.Delete(cm("a", "2")) // never taken: Stop must still end the relay
	w.Stop()
	for range w.ResultChan() {
	}
}

// TestWithWatchEvents: a ListerWatcher's watches are Watches too, its
// List and Watch still recorded, and its opt-out of watch-list kept.
func TestWithWatchEvents(t *testing.T) {
	leakcheck.Verify(t)
	client := fake.NewClientset(cm("a", ""))
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return client.CoreV1().ConfigMaps("ns").List(ctx, o)
		},
		WatchFuncWithContext: client.CoreV1().ConfigMaps("ns").Watch,
	}
	rec := NewRecorder(t.Context())
	tapped := NewListerWatcher(cache.ToListWatcherWithWatchListSemantics(lw, client), rec).WithWatchEvents()
	if u, ok := tapped.(interface{ IsWatchListSemanticsUnSupported() bool }); !ok || !u.IsWatchListSemanticsUnSupported() {
		t.Error("WithWatchEvents lost the fake's opt-out of watch-list")
	}
	w, err := tapped.(cache.ListerWatcherWithContext).WatchWithContext(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	<-w.ResultChan() // the fake replays what it holds
	got, err := rec.Await(t.Context(), 2)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{`Watch(resourceVersion="")`, "ADDED configmap/a"}; !slices.Equal(strs(got), want) {
		t.Errorf("recorded %q, want %q", strs(got), want)
	}
}
