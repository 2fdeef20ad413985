package apiserver

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/util/retry"
)

// TestInjectFault: a fault answers matching requests with its error, as a
// Status, Times times (0: until ClearFaults), and writes nothing. An
// injected Conflict reads exactly like a real one.
// transcript 11-update-stale-409
func TestInjectFault(t *testing.T) {
	c := newCapture(t)
	conflict := apierrors.NewConflict(schema.GroupResource{Resource: "pods"}, "web-1",
		errors.New("the object has been modified; please apply your changes to the latest version and try again"))
	c.s.InjectFault(Fault{Verb: "update", Resource: "pods", Name: "web-1", Times: 2, Err: conflict})

	web1 := c.mustDo(http.StatusOK, http.MethodGet, pods+"web-1", nil)
	labelsOf(web1)["tier"] = "front"
	rv := c.s.ResourceVersion()
	for i := range 2 {
		code, got := c.do(http.MethodPut, pods+"web-1", web1)
		if code != http.StatusConflict {
			t.Fatalf("PUT %d: HTTP %d, want the injected 409", i, code)
		}
		sameJSON(t, "injected conflict", got, decode(t, transcript(t, "11-update-stale-409")[0].Body))
	}
	if c.s.ResourceVersion() != rv {
		t.Errorf("a failed request wrote: resourceVersion %s, want %s", c.s.ResourceVersion(), rv)
	}
	// Other requests pass meanwhile; the third update does too.
	c.mustDo(http.StatusOK, http.MethodPut, pods+"web-2", c.mustDo(http.StatusOK, http.MethodGet, pods+"web-2", nil))
	c.mustDo(http.StatusOK, http.MethodPut, pods+"web-1", web1)

	// Times 0: every matching request, until ClearFaults. Empty Verb and
	// Resource match all; an error that is not an API error is a 500.
	c.s.InjectFault(Fault{Err: errors.New("injected")})
	for _, path := range []string{pods + "db-1", "/api/v1/nodes", "/apis/apps/v1/namespaces/capture/deployments"} {
		code, got := c.do(http.MethodGet, path, nil)
		if code != http.StatusInternalServerError || got["reason"] != "InternalError" || got["message"] != "Internal error occurred: injected" {
			t.Errorf("GET %s: HTTP %d %v, want the injected 500", path, code, got)
		}
	}
	c.s.ClearFaults()
	c.mustDo(http.StatusOK, http.MethodGet, pods+"db-1", nil)

	// A fault on watch fails the request before any stream.
	c.s.InjectFault(Fault{Verb: "watch", Resource: "pods", Times: 1,
		Err: apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "", errors.New("injected"))})
	if code, got := c.do(http.MethodGet, "/api/v1/namespaces/capture/pods?watch=true", nil); code != http.StatusForbidden || got["reason"] != "Forbidden" {
		t.Errorf("watch: HTTP %d %v, want the injected 403", code, got)
	}
	c.watch("/api/v1/namespaces/capture/pods?watch=true") // Times was 1
}

// TestInjectFaultRetry: client-go's retry.RetryOnConflict gets through an
// injected Conflict, as it would through a real one.
func TestInjectFaultRetry(t *testing.T) {
	c := newCapture(t)
	cs := newProtoClient(t, c.s)
	c.s.InjectFault(Fault{Verb: "update", Resource: "pods", Times: 2,
		Err: apierrors.NewConflict(schema.GroupResource{Resource: "pods"}, "web-1", errors.New("injected"))})
	attempts := 0
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		attempts++
		p, err := cs.CoreV1().Pods("capture").Get(t.Context(), "web-1", metav1.GetOptions{})
		if err != nil {
			return err
		}
		p.Labels["tier"] = "front"
		_, err = cs.CoreV1().Pods("capture").Update(t.Context(), p, metav1.UpdateOptions{})
		return err
	})
	if err != nil || attempts != 3 {
		t.Errorf("RetryOnConflict: %v after %d attempts, want success on the third", err, attempts)
	}
}

// TestRequestLog: every API request, in order, with its verb, resource,
// path and the parameters that matter (not timeoutSeconds, which
// client-go randomises); discovery is not logged.
func TestRequestLog(t *testing.T) {
	s := startServer(t)
	c := newClient(t, s)
	cs := newProtoClient(t, s)
	c.mustDo(http.StatusOK, http.MethodGet, "/version", nil)
	c.mustDo(http.StatusOK, http.MethodGet, "/api/v1", nil)
	c.mustDo(http.StatusCreated, http.MethodPost, "/api/v1/namespaces", map[string]any{"metadata": map[string]any{"name": "capture"}})
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-1"}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "x"}}}}
	if _, err := cs.CoreV1().Pods("capture").Create(t.Context(), pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	c.do(http.MethodGet, "/api/v1/namespaces/capture/pods?labelSelector=app%3Dweb&limit=10&timeoutSeconds=5", nil)
	c.watch("/api/v1/pods?watch=true&resourceVersion=2&allowWatchBookmarks=true&fieldSelector=spec.nodeName%3D&timeoutSeconds=30")
	c.do(http.MethodPatch, pods+"web-1/status", nil)
	c.do(http.MethodDelete, "/apis/apps/v1/namespaces/capture/deployments/web", nil)
	c.do(http.MethodGet, "/api/v1/foos", nil)

	const js, typed = "application/json", "application/vnd.kubernetes.protobuf,application/json"
	want := []Request{
		{Verb: "create", Resource: "namespaces", Method: "POST", Path: "/api/v1/namespaces", Query: url.Values{}, Accept: js},
		{Verb: "create", Resource: "pods", Method: "POST", Path: "/api/v1/namespaces/capture/pods", Query: url.Values{}, Accept: typed},
		{Verb: "list", Resource: "pods", Method: "GET", Path: "/api/v1/namespaces/capture/pods",
			Query: url.Values{"labelSelector": {"app=web"}, "limit": {"10"}}, Accept: js},
		{Verb: "watch", Resource: "pods", Method: "GET", Path: "/api/v1/pods",
			Query: url.Values{"watch": {"true"}, "resourceVersion": {"2"}, "allowWatchBookmarks": {"true"}, "fieldSelector": {"spec.nodeName="}}, Accept: js},
		{Verb: "patch", Resource: "pods", Method: "PATCH", Path: "/api/v1/namespaces/capture/pods/web-1/status", Query: url.Values{}, Accept: js},
		{Verb: "delete", Resource: "deployments.apps", Method: "DELETE", Path: "/apis/apps/v1/namespaces/capture/deployments/web", Query: url.Values{}, Accept: js},
		{Verb: "", Resource: "", Method: "GET", Path: "/api/v1/foos", Query: url.Values{}, Accept: js},
	}
	if diff := cmp.Diff(want, s.Requests()); diff != "" {
		t.Errorf("request log (-want +got):\n%s", diff)
	}
	if got, want := s.Requests()[3].String(), "GET /api/v1/pods?watch=true&resourceVersion=2&allowWatchBookmarks=true&fieldSelector=spec.nodeName%3D"; got != want {
		t.Errorf("String() = %s, want %s", got, want)
	}
	s.ResetRequests()
	if n := len(s.Requests()); n != 0 {
		t.Errorf("%d requests after ResetRequests", n)
	}
}

// TestHoldWatches: held watch requests wait unanswered while the cluster
// changes, then all proceed on ReleaseWatches and replay what they missed.
func TestHoldWatches(t *testing.T) {
	c := newCapture(t)
	from := c.s.ResourceVersion()
	c.s.HoldWatches()
	ctx, cancel := context.WithCancel(t.Context())
	type result struct {
		resp *http.Response
		err  error
	}
	answered := make(chan result)
	go func() {
		resp, err := c.c.Do(c.newRequest(ctx, http.MethodGet, "/api/v1/namespaces/capture/pods?watch=true&resourceVersion="+from, nil))
		answered <- result{resp, err}
	}()
	for deadline := time.Now().Add(5 * time.Second); c.s.HeldWatches() != 1; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the watch request was not held")
		}
	}
	c.change(353)
	c.s.ReleaseWatches()
	r := <-answered
	if r.err != nil {
		t.Fatal(r.err)
	}
	st := c.stream(r.resp, cancel)
	c.s.DropWatches()
	if got, want := shape(st.rest()), []string{"MODIFIED web-1", "MODIFIED web-1", "MODIFIED web-2", "MODIFIED db-1"}; !cmp.Equal(got, want) {
		t.Errorf("held watch saw %v, want %v", got, want)
	}
}
