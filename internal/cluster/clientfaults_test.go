package cluster

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/informer-walkthrough/informer-walkthrough/internal/apiserver"
)

func connectForFaults(t *testing.T) *Cluster {
	t.Helper()
	c, err := Connect(t.Context(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func configMap(name string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}
}

// next is the watch's next event, or fails the test after a generous
// bound (the event is expected, so the bound only ends a broken test).
func next(t *testing.T, w watch.Interface) (watch.Event, bool) {
	t.Helper()
	select {
	case ev, ok := <-w.ResultChan():
		return ev, ok
	case <-time.After(10 * time.Second):
		t.Fatal("no watch event in 10 s")
		return watch.Event{}, false
	}
}

// TestHoldAndRelease: events that arrive while watches are held reach
// client-go only on release, in order.
func TestHoldAndRelease(t *testing.T) {
	c := connectForFaults(t)
	cms := c.Client.CoreV1().ConfigMaps(c.Namespace)
	w, err := cms.Watch(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if n := c.Faults().OpenWatches(); n != 1 {
		t.Fatalf("OpenWatches = %d, want 1", n)
	}
	c.Faults().HoldWatches()
	for _, name := range []string{"a", "b"} {
		if _, err := cms.Create(t.Context(), configMap(name), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// Nothing can prove an event will never come; a short look at the
	// channel catches a hold that holds nothing.
	select {
	case ev := <-w.ResultChan():
		t.Fatalf("event while held: %v", ev.Type)
	case <-time.After(100 * time.Millisecond):
	}
	c.Faults().ReleaseWatches()
	for _, want := range []string{"a", "b"} {
		ev, ok := next(t, w)
		if !ok || ev.Type != watch.Added || ev.Object.(*corev1.ConfigMap).Name != want {
			t.Fatalf("after release: %v %v, want ADDED %s", ok, ev.Type, want)
		}
	}
}

// TestEndWatches: an ended watch closes its result channel, as when the
// server ends it, and what was held is never delivered.
func TestEndWatches(t *testing.T) {
	c := connectForFaults(t)
	cms := c.Client.CoreV1().ConfigMaps(c.Namespace)
	w, err := cms.Watch(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	c.Faults().HoldWatches()
	defer c.Faults().ReleaseWatches()
	if _, err := cms.Create(t.Context(), configMap("missed"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if n := c.Faults().EndWatches(); n != 1 {
		t.Fatalf("EndWatches = %d, want 1", n)
	}
	if ev, ok := next(t, w); ok {
		t.Fatalf("after EndWatches: %v, want the channel closed", ev.Type)
	}
	if n := c.Faults().OpenWatches(); n != 0 {
		t.Fatalf("OpenWatches = %d after EndWatches, want 0", n)
	}
}

// TestAnswer: the transport answers one matching request with a Status
// client-go decodes as the server's, and sends the next one on.
func TestAnswer(t *testing.T) {
	c := connectForFaults(t)
	cms := c.Client.CoreV1().ConfigMaps(c.Namespace)
	c.Faults().Answer(func(r apiserver.Request) bool { return r.Verb == "watch" },
		apierrors.NewResourceExpired("too old resource version: 1 (5)"))
	_, err := cms.Watch(t.Context(), metav1.ListOptions{ResourceVersion: "1"})
	if !apierrors.IsResourceExpired(err) || err.Error() != "too old resource version: 1 (5)" {
		t.Fatalf("answered watch: %v, want 410 Expired", err)
	}
	w, err := cms.Watch(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatalf("second watch: %v, want it sent to the server", err)
	}
	w.Stop()
	reqs := c.Requests()
	if len(reqs) < 2 || reqs[len(reqs)-2].Verb != "watch" {
		t.Fatalf("request log %v: want the answered watch recorded", reqs)
	}

	c.Faults().Answer(func(r apiserver.Request) bool { return r.Verb == "list" },
		apierrors.NewTooManyRequests("the server has received too many requests", 0))
	_, err = cms.List(context.Background(), metav1.ListOptions{})
	if !apierrors.IsTooManyRequests(err) {
		t.Fatalf("answered list: %v, want 429", err)
	}
}
