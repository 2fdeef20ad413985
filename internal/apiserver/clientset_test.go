package apiserver

import (
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

// The typed clientset speaks protobuf to built-in types. These tests make
// the same requests as the JSON ones through it, and check that every
// answer was protobuf and decodes to what the JSON answer says.

// protoClient is a typed clientset of the capture's server that records
// the Content-Type of every answer.
type protoClient struct {
	kubernetes.Interface
	mu    sync.Mutex
	types map[string]bool
}

func newProtoClient(t *testing.T, s *Server) *protoClient {
	t.Helper()
	pc := &protoClient{types: map[string]bool{}}
	cfg := s.Config()
	// The same field manager as the transcripts' writer, so managedFields
	// compare equal.
	cfg.UserAgent = "curl/8.11.1"
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripper(func(r *http.Request) (*http.Response, error) {
			resp, err := rt.RoundTrip(r)
			if err == nil {
				pc.mu.Lock()
				pc.types[resp.Header.Get("Content-Type")] = true
				pc.mu.Unlock()
			}
			return resp, err
		})
	})
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	pc.Interface = cs
	t.Cleanup(func() {
		pc.mu.Lock()
		defer pc.mu.Unlock()
		for ct := range pc.types {
			if !strings.HasPrefix(ct, "application/vnd.kubernetes.protobuf") {
				t.Errorf("an answer to the typed clientset was %q, not protobuf", ct)
			}
		}
	})
	return pc
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// asJSON is what a typed object looks like on the JSON wire.
func asJSON(t *testing.T, obj runtime.Object, kind, apiVersion string) map[string]any {
	t.Helper()
	b, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	m := decode(t, b)
	m["kind"], m["apiVersion"] = kind, apiVersion
	return m
}

// TestClientsetRoundTrip: create, get, list, update, update status and
// delete over protobuf give the objects the JSON wire gives (and that the
// transcripts hold).
// transcript 01-create-pods, 03-list, 14-update-status, 15-delete, 30-deployment-create, 28-node-create
func TestClientsetRoundTrip(t *testing.T) {
	c := newCapture(t)
	cs := newProtoClient(t, c.s)
	ctx := t.Context()
	podsOf := cs.CoreV1().Pods("capture")

	// The pods the capture created, read over protobuf and over JSON.
	list, err := podsOf.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	jsonList := c.mustDo(http.StatusOK, http.MethodGet, "/api/v1/namespaces/capture/pods", nil)
	if list.ResourceVersion != c.s.ResourceVersion() {
		t.Errorf("list resourceVersion %s, want %s", list.ResourceVersion, c.s.ResourceVersion())
	}
	for i := range list.Items {
		sameJSON(t, "pod "+list.Items[i].Name, asJSON(t, &list.Items[i], "Pod", "v1"),
			withKind(jsonList["items"].([]any)[i], "Pod", "v1"))
	}

	// Update (a label), then the status subresource.
	web1, err := podsOf.Get(ctx, "web-1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	web1.Labels["tier"] = "front"
	web1.Status.Phase = corev1.PodRunning // ignored: PUT of the pod keeps its status
	if web1, err = podsOf.Update(ctx, web1, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if web1.Status.Phase != corev1.PodPending || web1.ResourceVersion != c.s.ResourceVersion() {
		t.Errorf("after update: phase %s rv %s", web1.Status.Phase, web1.ResourceVersion)
	}
	web1.Status.Phase = corev1.PodRunning
	if web1, err = podsOf.UpdateStatus(ctx, web1, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	sameJSON(t, "status update", asJSON(t, web1, "Pod", "v1"), decode(t, transcript(t, "14-update-status")[0].Body))

	// Delete of a pod answers the pod; of a configmap, a Status.
	if err := podsOf.Delete(ctx, "web-2", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil {
		t.Fatal(err)
	}
	if _, err := podsOf.Get(ctx, "web-2", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("get after delete: %v, want NotFound", err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings"}, Data: map[string]string{"a": "1"}}
	if _, err := cs.CoreV1().ConfigMaps("capture").Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := cs.CoreV1().ConfigMaps("capture").Delete(ctx, "settings", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}

	// Other resources: apps/v1 deployments, cluster-scoped nodes.
	var dep appsv1.Deployment
	mustUnmarshal(t, transcript(t, "30-deployment-create")[0].Request, &dep)
	got, err := cs.AppsV1().Deployments("capture").Create(ctx, &dep, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sameJSON(t, "deployment", asJSON(t, got, "Deployment", "apps/v1"), decode(t, transcript(t, "30-deployment-create")[0].Body))
	var node corev1.Node
	mustUnmarshal(t, transcript(t, "28-node-create")[0].Request, &node)
	gotNode, err := cs.CoreV1().Nodes().Create(ctx, &node, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sameJSON(t, "node", asJSON(t, gotNode, "Node", "v1"), decode(t, transcript(t, "28-node-create")[0].Body))
}

func withKind(v any, kind, apiVersion string) map[string]any {
	m := v.(map[string]any)
	m["kind"], m["apiVersion"] = kind, apiVersion
	return m
}

func mustUnmarshal(t *testing.T, b []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatal(err)
	}
}

// TestClientsetErrors: the Status errors decode over protobuf to what
// client-go's apierrors predicates recognise.
// transcript 02-create-duplicate-409, 10-get-notfound, 11-update-stale-409,
// 19-watchlist-missing-rvmatch, 23-list-future-rv, 31-create-invalid-422, 32-list-bad-labelselector
func TestClientsetErrors(t *testing.T) {
	c := newCapture(t)
	cs := newProtoClient(t, c.s)
	ctx := t.Context()
	podsOf := cs.CoreV1().Pods("capture")
	stale, err := podsOf.Get(ctx, "web-1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := podsOf.Update(ctx, stale, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err) // unchanged: no write, no conflict
	}
	stale.Labels["tier"] = "x"
	if _, err := podsOf.Update(ctx, stale.DeepCopy(), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	var bad corev1.Pod
	mustUnmarshal(t, transcript(t, "31-create-invalid-422")[0].Request, &bad)
	var dup corev1.Pod
	mustUnmarshal(t, transcript(t, "02-create-duplicate-409")[0].Request, &dup)

	for _, tc := range []struct {
		transcript string
		err        func() error
		is         func(error) bool
	}{
		{"02-create-duplicate-409", func() error { _, err := podsOf.Create(ctx, &dup, metav1.CreateOptions{}); return err }, apierrors.IsAlreadyExists},
		{"10-get-notfound", func() error { _, err := podsOf.Get(ctx, "nope", metav1.GetOptions{}); return err }, apierrors.IsNotFound},
		{"11-update-stale-409", func() error { _, err := podsOf.Update(ctx, stale, metav1.UpdateOptions{}); return err }, apierrors.IsConflict},
		{"19-watchlist-missing-rvmatch", func() error {
			_, err := podsOf.Watch(ctx, metav1.ListOptions{SendInitialEvents: ptr.To(true), AllowWatchBookmarks: true})
			return err
		}, apierrors.IsInvalid},
		{"23-list-future-rv", func() error {
			_, err := podsOf.List(ctx, metav1.ListOptions{ResourceVersion: "99999999", ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan})
			return err
		}, func(err error) bool { // what the reflector checks
			return apierrors.IsTimeout(err) && apierrors.HasStatusCause(err, metav1.CauseTypeResourceVersionTooLarge)
		}},
		{"31-create-invalid-422", func() error { _, err := podsOf.Create(ctx, &bad, metav1.CreateOptions{}); return err }, apierrors.IsInvalid},
		{"32-list-bad-labelselector", func() error { _, err := podsOf.List(ctx, metav1.ListOptions{LabelSelector: "app===web"}); return err }, apierrors.IsBadRequest},
	} {
		err := tc.err()
		if !tc.is(err) {
			t.Errorf("%s: %v", tc.transcript, err)
			continue
		}
		want := decode(t, transcript(t, tc.transcript)[0].Body)
		if tc.transcript == "23-list-future-rv" {
			want["message"] = "Timeout: Too large resource version: 99999999, current: " + c.s.ResourceVersion()
		}
		st := err.(apierrors.APIStatus).Status()
		sameJSON(t, tc.transcript, asJSON(t, &st, "Status", "v1"), want)
	}
}

// TestClientsetWatch: watch from a resourceVersion, watch-list with its
// bookmark, and the 410 ERROR event, all over protobuf.
// transcript 12-watch-from-rv, 18-watchlist
func TestClientsetWatch(t *testing.T) {
	c := newCapture(t)
	cs := newProtoClient(t, c.s)
	ctx := t.Context()
	podsOf := cs.CoreV1().Pods("capture")
	created := c.s.ResourceVersion()
	c.change(355)

	// From the resourceVersion after the creates: the recorded changes.
	w, err := podsOf.Watch(ctx, metav1.ListOptions{ResourceVersion: created})
	if err != nil {
		t.Fatal(err)
	}
	want := transcript(t, "12-watch-from-rv")[0].Events
	for i, ev := range collect(t, w, len(want)) {
		sameJSON(t, string(ev.Type), asJSON(t, ev.Object, "Pod", "v1"), want[i].Object)
		if string(ev.Type) != want[i].Type {
			t.Errorf("event %d: %s, want %s", i, ev.Type, want[i].Type)
		}
	}

	// Watch-list: ADDED for each pod, then the bookmark.
	w, err = podsOf.Watch(ctx, metav1.ListOptions{
		SendInitialEvents: ptr.To(true), ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan, AllowWatchBookmarks: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	evs := collect(t, w, 3)
	bm, ok := evs[2].Object.(*corev1.Pod)
	if evs[2].Type != watch.Bookmark || !ok || bm.Annotations[metav1.InitialEventsAnnotationKey] != "true" ||
		bm.ResourceVersion != c.s.ResourceVersion() || bm.Name != "" {
		t.Errorf("want the initial-events-end bookmark at %s, got %s %#v", c.s.ResourceVersion(), evs[2].Type, evs[2].Object)
	}

	// After CompactHistory: an ERROR event with a 410 Expired Status.
	compacted := c.s.CompactHistory()
	w, err = podsOf.Watch(ctx, metav1.ListOptions{ResourceVersion: created})
	if err != nil {
		t.Fatal(err)
	}
	ev := collect(t, w, 1)[0]
	err = apierrors.FromObject(ev.Object)
	if ev.Type != watch.Error || !apierrors.IsResourceExpired(err) ||
		err.Error() != "too old resource version: "+created+" ("+compacted+")" {
		t.Errorf("got %s %v, want ERROR 410 Expired", ev.Type, err)
	}
}

// collect reads n events from w and stops it.
func collect(t *testing.T, w watch.Interface, n int) []watch.Event {
	t.Helper()
	defer w.Stop()
	var out []watch.Event
	timeout := time.After(5 * time.Second)
	for len(out) < n {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Fatalf("watch ended after %d events, want %d", len(out), n)
			}
			out = append(out, ev)
		case <-timeout:
			t.Fatalf("%d events within 5 s, want %d", len(out), n)
		}
	}
	return out
}
