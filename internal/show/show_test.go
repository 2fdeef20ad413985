package show

import (
	"context"
	"errors"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/informer-walkthrough/informer-walkthrough/internal/apiserver"
)

// TestLines: lines arrive in order, sorted on request, and drain; a wait
// that ends with its context says what it was waiting for, and a Send
// after the end never blocks.
func TestLines(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	l := NewLines(ctx)
	l.Send("b")
	l.Sendf("a%d", 1)
	got, err := l.Await(ctx, 2)
	if err != nil || !slices.Equal(got, []string{"b", "a1"}) {
		t.Fatalf("Await = %q, %v", got, err)
	}
	l.Send("z")
	l.Send("y")
	if got, _ := l.AwaitSorted(ctx, 2); !slices.Equal(got, []string{"y", "z"}) {
		t.Errorf("AwaitSorted = %q", got)
	}
	l.Send("left")
	if got := l.Drain(); !slices.Equal(got, []string{"left"}) {
		t.Errorf("Drain = %q", got)
	}

	short, stop := context.WithTimeoutCause(ctx, 10*time.Millisecond, errors.New("stuck"))
	defer stop()
	l.Send("one")
	got, err = l.Await(short, 2)
	if err == nil || err.Error() != `waiting for line 2 of 2 (got ["one"]): stuck` {
		t.Errorf("Await past the deadline = %q, %v", got, err)
	}

	cancel()
	sent := make(chan struct{})
	go func() {
		for range 2000 { // more than the buffer holds
			l.Send("after the end")
		}
		close(sent)
	}()
	select {
	case <-sent:
	case <-time.After(5 * time.Second):
		t.Fatal("Send blocked after the context ended")
	}
}

// TestNextSortedUnder: Next keeps the order the lines came in, Sorted
// sorts them, both print what came before ctx ended and return why (or
// that a block has no source);
// Under indents its lines two spaces deeper than its heading.
func TestNextSortedUnder(t *testing.T) {
	ctx := t.Context()
	l := NewLines(ctx)
	var out strings.Builder
	l.Send("b")
	l.Send("a")
	if err := Next(ctx, &out, Block{Indent: "  ", From: l, N: 2}); err != nil {
		t.Fatal(err)
	}
	l.Send("d")
	l.Send("c")
	if err := Sorted(ctx, &out, Block{Heading: "  sorted:", Indent: "    ", From: l, N: 2}); err != nil {
		t.Fatal(err)
	}
	Under(&out, "  requests:", []string{"GET /x"})
	short, stop := context.WithTimeoutCause(ctx, 10*time.Millisecond, errors.New("stuck"))
	defer stop()
	l.Send("e")
	if err := Next(short, &out, Block{Indent: "  ", From: l, N: 2}); err == nil {
		t.Error("Next past the deadline: no error")
	}
	if err := Next(ctx, &out, Block{Heading: "  nothing to await:", N: 1}); err == nil {
		t.Error("Next from no source: no error")
	}
	want := "  b\n  a\n  sorted:\n    c\n    d\n  requests:\n    GET /x\n  e\n  nothing to await:\n"
	if out.String() != want {
		t.Errorf("printed %q, want %q", out.String(), want)
	}
}

// TestFrame: the uid masked, the frame cut after the object's
// resourceVersion, each object it leaves closed with … where members
// were dropped; a bookmark (no uid) whole.
func TestFrame(t *testing.T) {
	for _, tc := range []struct{ frame, want string }{{
		`{"type":"ADDED","object":{"kind":"Pod","metadata":{"name":"web-1","uid":"1-2","resourceVersion":"4","labels":{"a":"}"}},"spec":{}}}`,
		`{"type":"ADDED","object":{"kind":"Pod","metadata":{"name":"web-1","uid":…,"resourceVersion":"4",…},…}}`,
	}, {
		`{"type":"ADDED","object":{"kind":"PartialObjectMetadata","metadata":{"name":"web-1","uid":"1-2","resourceVersion":"4","labels":{}}}}`,
		`{"type":"ADDED","object":{"kind":"PartialObjectMetadata","metadata":{"name":"web-1","uid":…,"resourceVersion":"4",…}}}`,
	}, {
		`{"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"4"}}}`,
		`{"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"4"}}}`,
	}} {
		if got := Frame(tc.frame); got != tc.want {
			t.Errorf("Frame(%s)\n = %s\nwant %s", tc.frame, got, tc.want)
		}
	}
}

// TestDescribe: an object by its Go type's name, a tombstone by what it
// holds, nil and a non-object said as such.
func TestDescribe(t *testing.T) {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "web", ResourceVersion: "2"}}
	for _, tc := range []struct {
		obj  any
		want string
	}{
		{cm, "configmap/web rv=2"},
		{cache.DeletedFinalStateUnknown{Key: "ns/web", Obj: cm}, "DeletedFinalStateUnknown key=ns/web, last known configmap/web rv=2"},
		{cache.DeletedFinalStateUnknown{Key: "ns/web"}, "DeletedFinalStateUnknown key=ns/web, last known nothing"},
		{nil, "nothing"},
		{42, "a int"},
	} {
		if got := Describe(tc.obj); got != tc.want {
			t.Errorf("Describe(%v) = %q, want %q", tc.obj, got, tc.want)
		}
	}
}

// TestFeed: items of any type, in the order sent; Next fails once ctx
// ends.
func TestFeed(t *testing.T) {
	f := NewFeed[int](t.Context())
	f.Send(1)
	f.Send(2)
	if got, err := f.Await(t.Context(), 2); err != nil || got[0] != 1 || got[1] != 2 {
		t.Errorf("Await = %v, %v", got, err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := f.Next(ctx); err == nil {
		t.Error("Next after ctx ended: no error")
	}
}

// stringer is an object of the course's own, as 02's Pod.
type stringer struct{ name string }

func (s stringer) String() string { return s.name + " v1" }

// TestDescribeStringer: an object without metadata of the course's own
// is described by its String method; one of k8s.io's, by its type.
func TestDescribeStringer(t *testing.T) {
	if got := Describe(stringer{"pod-1"}); got != "pod-1 v1" {
		t.Errorf("Describe(stringer) = %q", got)
	}
	if got := Describe(&metav1.Status{Code: 410}); got != "a *v1.Status" {
		t.Errorf("Describe(Status) = %q", got)
	}
}

// TestBrief: verb and resource, the label selector, a watch-list marked;
// only what keep accepts; sorted. Requests keeps the order and the path.
func TestBrief(t *testing.T) {
	reqs := []apiserver.Request{
		{Verb: "watch", Resource: "pods", Method: "GET", Path: "/api/v1/namespaces/ns/pods",
			Query: url.Values{"watch": {"true"}, "sendInitialEvents": {"true"}}},
		{Verb: "list", Resource: "deployments.apps", Method: "GET", Path: "/apis/apps/v1/namespaces/ns/deployments",
			Query: url.Values{"labelSelector": {"app=web"}}},
		{Verb: "create", Resource: "pods", Method: "POST", Path: "/api/v1/namespaces/ns/pods"},
		{Verb: "list", Resource: "configmaps", Method: "GET", Path: "/api/v1/namespaces/ns/configmaps"},
	}
	got := Brief(reqs, ListsAndWatchesOf("pods", "deployments.apps"))
	want := []string{"LIST deployments.apps labelSelector=app=web", "WATCH pods  (watch-list)"}
	if !slices.Equal(got, want) {
		t.Errorf("Brief = %q, want %q", got, want)
	}
	if got := Brief(reqs, nil); len(got) != 4 || got[0] != "CREATE pods" {
		t.Errorf("Brief(all) = %q", got)
	}
	if got := Requests(reqs, ListsAndWatches); len(got) != 3 ||
		got[0] != "GET /api/v1/namespaces/ns/pods?watch=true&sendInitialEvents=true" {
		t.Errorf("Requests = %q", got)
	}
}
