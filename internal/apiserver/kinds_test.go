package apiserver

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// The kinds beyond the first five, each against what a real
// kube-apiserver v1.36.3 answered (transcripts 70-72, 91-95).

// newKindsServer starts a server with the recordings' clock and the
// namespaces the recordings used.
func newKindsServer(t *testing.T, opts Options) *client {
	t.Helper()
	opts.Now = func() time.Time { return time.Date(2026, time.November, 24, 23, 19, 37, 0, time.UTC) }
	c := newClient(t, startServerWith(t, opts))
	c.rvs = map[string]string{}
	for _, ns := range []string{"capture-shard", "capture-crd"} {
		c.mustDo(http.StatusCreated, http.MethodPost, "/api/v1/namespaces", map[string]any{"metadata": map[string]any{"name": ns}})
	}
	return c
}

// replay sends a transcript's requests in order and compares each
// answer with the recorded one; same, if given, rewrites what may differ
// between the two servers in the recorded answer (a uid in a label, an
// allocated IP) from the workshop cluster's.
func replay(t *testing.T, c *client, name string, same func(got map[string]any, want string) string) []map[string]any {
	t.Helper()
	var answers []map[string]any
	for i, ex := range transcript(t, name) {
		// A resourceVersion the request names is the recording's: send
		// the one it stands for here.
		body := ex.Request
		for real, ours := range c.rvs {
			body = bytes.ReplaceAll(body, []byte(`"resourceVersion":"`+real+`"`), []byte(`"resourceVersion":"`+ours+`"`))
		}
		code, got := c.do(ex.Method, ex.Path, body)
		if code != ex.Code {
			t.Fatalf("%s #%d %s %s: HTTP %d, want %d: %v", name, i, ex.Method, ex.Path, code, ex.Code, got)
		}
		want := string(ex.Body)
		if same != nil {
			want = same(got, want)
		}
		wantObj := decode(t, []byte(want))
		sameJSON(t, name+" "+ex.Method+" "+ex.Path, got, wantObj)
		if rv := str(wantObj, "metadata", "resourceVersion"); rv != "" {
			c.rvs[rv] = str(got, "metadata", "resourceVersion")
		}
		answers = append(answers, got)
	}
	return answers
}

// TestLeases: create, get, update, and a stale update refused with 409,
// the optimistic concurrency leader election relies on (transcripts 70,
// 71); the group-version's discovery (72).
func TestLeases(t *testing.T) {
	c := newKindsServer(t, Options{})
	replay(t, c, "70-lease-create-get", nil)
	replay(t, c, "71-lease-update-then-conflict", nil)
	replay(t, c, "72-discovery-coordination-v1", nil)
}

// TestBootstrap: with Options.Bootstrap, the kubernetes Service and a
// default ServiceAccount in every namespace, made with it (transcript 91).
func TestBootstrap(t *testing.T) {
	c := newKindsServer(t, Options{Bootstrap: true})
	replay(t, c, "91-defaults-kubernetes-service-and-serviceaccounts", nil)
	list := c.mustDo(http.StatusOK, http.MethodGet, "/api/v1/namespaces", nil)
	var names []string
	for _, it := range list["items"].([]any) {
		names = append(names, str(it.(map[string]any), "metadata", "name"))
	}
	want := []string{"capture-crd", "capture-shard", "default", "kube-node-lease", "kube-public", "kube-system"}
	if !cmp.Equal(names, want) {
		t.Errorf("namespaces %v, want %v", names, want)
	}
	sas := c.mustDo(http.StatusOK, http.MethodGet, "/api/v1/serviceaccounts", nil)
	if n := len(sas["items"].([]any)); n != len(want) {
		t.Errorf("%d ServiceAccounts, want one per namespace: %v", n, sas)
	}
	// Without Bootstrap, as the chapters run: nothing but what they make.
	bare := newClient(t, startServer(t))
	if code, _ := bare.do(http.MethodGet, "/api/v1/namespaces/default/services/kubernetes", nil); code != http.StatusNotFound {
		t.Errorf("without Bootstrap: the kubernetes Service answers %d, want 404", code)
	}
}

// TestServiceDefaults: a Service gets kube-apiserver's defaults (owned by
// its writer) and a cluster IP from the service range (owned by no one)
// (transcript 92); a field selector on spec.clusterIP is supported (95).
func TestServiceDefaults(t *testing.T) {
	c := newKindsServer(t, Options{Bootstrap: true})
	got := replay(t, c, "92-service-create-defaulted", func(got map[string]any, want string) string {
		ip := str(got, "spec", "clusterIP")
		if !strings.HasPrefix(ip, "10.0.0.") || ip == "10.0.0.1" {
			t.Errorf("clusterIP %q, want a free address of 10.0.0.0/24", ip)
		}
		return strings.ReplaceAll(want, "10.0.0.122", ip)
	})[0]
	replay(t, c, "95-service-unsupported-field-selector", nil)
	ip := str(got, "spec", "clusterIP")
	list := c.mustDo(http.StatusOK, http.MethodGet, "/api/v1/services?fieldSelector=spec.clusterIP%3D"+ip, nil)
	if items := list["items"].([]any); len(items) != 1 || str(items[0].(map[string]any), "metadata", "name") != "web" {
		t.Errorf("services with clusterIP %s: %v", ip, items)
	}
	// A second Service gets another address; one asking for a taken one
	// is refused as kube-apiserver refuses it.
	second := c.mustDo(http.StatusCreated, http.MethodPost, "/api/v1/namespaces/capture-crd/services",
		map[string]any{"metadata": map[string]any{"name": "api"}, "spec": map[string]any{"ports": []any{map[string]any{"port": 80}}}})
	if str(second, "spec", "clusterIP") == ip {
		t.Errorf("two Services share %s", ip)
	}
	code, refused := c.do(http.MethodPost, "/api/v1/namespaces/capture-crd/services",
		map[string]any{"metadata": map[string]any{"name": "taken"}, "spec": map[string]any{"clusterIP": ip, "ports": []any{map[string]any{"port": 80}}}})
	if code != http.StatusUnprocessableEntity || !strings.Contains(str(refused, "message"), "provided IP is already allocated") {
		t.Errorf("a taken clusterIP: HTTP %d %v", code, refused)
	}
	code, bad := c.do(http.MethodGet, "/api/v1/services?fieldSelector=spec.selector%3Dx", nil)
	if code != http.StatusBadRequest || str(bad, "message") != "field label not supported: spec.selector" {
		t.Errorf("services by spec.selector: HTTP %d %v", code, bad)
	}
}

// TestJobDefaults: a Job's defaults, and the selector and labels the Job
// strategy generates from its uid (transcript 93).
func TestJobDefaults(t *testing.T) {
	c := newKindsServer(t, Options{})
	replay(t, c, "93-job-create-defaulted", func(got map[string]any, want string) string {
		real := str(decode(t, []byte(want)), "metadata", "uid")
		return strings.ReplaceAll(want, real, str(got, "metadata", "uid"))
	})
	code, bad := c.do(http.MethodGet, "/apis/batch/v1/jobs?fieldSelector=spec.suspend%3Dtrue", nil)
	if code != http.StatusBadRequest || str(bad, "message") != `field label "spec.suspend" not supported for Job` {
		t.Errorf("jobs by spec.suspend: HTTP %d %v", code, bad)
	}
	ok := c.mustDo(http.StatusOK, http.MethodGet, "/apis/batch/v1/jobs?fieldSelector=status.successful%3D0", nil)
	if n := len(ok["items"].([]any)); n != 1 {
		t.Errorf("jobs with status.successful=0: %d, want 1", n)
	}
}

// TestSecretStringData: stringData is stored as data, typed Opaque
// (transcript 94); secrets are selected by type.
func TestSecretStringData(t *testing.T) {
	c := newKindsServer(t, Options{})
	replay(t, c, "94-secret-stringdata", nil)
	for sel, want := range map[string]int{"type%3DOpaque": 1, "type%3Dkubernetes.io%2Ftls": 0} {
		list := c.mustDo(http.StatusOK, http.MethodGet, "/api/v1/namespaces/capture-crd/secrets?fieldSelector="+sel, nil)
		if n := len(list["items"].([]any)); n != want {
			t.Errorf("secrets by %s: %d, want %d", sel, n, want)
		}
	}
}

// TestUnknownPaths: kube-apiserver's 404s. A path under a served
// group-version that names no resource served there is a Status with no
// name and no details, which client-go reports as "the server could not
// find the requested resource"; a path no group-version claims is
// net/http's plain-text 404.
func TestUnknownPaths(t *testing.T) {
	c := newKindsServer(t, Options{})
	for _, path := range []string{
		"/api/v1/namespaces/capture-crd/widgets",
		"/api/v1/widgets",
		"/apis/apps/v1/namespaces/capture-crd/widgets/w",
		"/api/v1/namespaces/capture-crd/pods/p/scale", // pods have no scale
		"/api/v1/namespaces/capture-crd/nodes/n",      // nodes are not namespaced
	} {
		code, got := c.do(http.MethodGet, path, nil)
		want := map[string]any{"kind": "Status", "apiVersion": "v1", "metadata": map[string]any{}, "status": "Failure",
			"message": "the server could not find the requested resource", "reason": "NotFound", "details": map[string]any{}, "code": float64(404)}
		if code != http.StatusNotFound || !cmp.Equal(got, want) {
			t.Errorf("GET %s: HTTP %d %v", path, code, got)
		}
	}
	for _, path := range []string{"/apis/example.com/v1/widgets", "/apis/apps/v2/deployments", "/nothing"} {
		resp, err := http.Get(c.s.URL() + path)
		if err != nil {
			t.Fatal(err)
		}
		b := readAll(t, resp)
		if resp.StatusCode != http.StatusNotFound || string(b) != "404 page not found\n" {
			t.Errorf("GET %s: HTTP %d %q", path, resp.StatusCode, b)
		}
	}
}

// TestHealth: /healthz, /livez and /readyz answer a plain "ok", as
// kube-apiserver's healthz handler does.
func TestHealth(t *testing.T) {
	s := startServer(t)
	for _, path := range []string{"/healthz", "/livez", "/readyz"} {
		resp, err := http.Get(s.URL() + path)
		if err != nil {
			t.Fatal(err)
		}
		b := readAll(t, resp)
		if resp.StatusCode != http.StatusOK || string(b) != "ok" || resp.Header.Get("Content-Type") != "text/plain; charset=utf-8" {
			t.Errorf("GET %s: HTTP %d %q %q", path, resp.StatusCode, resp.Header.Get("Content-Type"), b)
		}
	}
}

// TestDeleteCollection: a DELETE of a collection deletes what its
// selector matches and answers the list of them; namespaces have none.
func TestDeleteCollection(t *testing.T) {
	c := newKindsServer(t, Options{})
	for _, name := range []string{"a", "b", "c"} {
		c.mustDo(http.StatusCreated, http.MethodPost, "/api/v1/namespaces/capture-crd/configmaps",
			map[string]any{"metadata": map[string]any{"name": name, "labels": map[string]any{"drop": map[string]string{"a": "true", "b": "true", "c": "false"}[name]}}})
	}
	got := c.mustDo(http.StatusOK, http.MethodDelete, "/api/v1/namespaces/capture-crd/configmaps?labelSelector=drop%3Dtrue", nil)
	if str(got, "kind") != "ConfigMapList" || len(got["items"].([]any)) != 2 {
		t.Errorf("deletecollection answered %v", got)
	}
	left := c.mustDo(http.StatusOK, http.MethodGet, "/api/v1/namespaces/capture-crd/configmaps", nil)
	if items := left["items"].([]any); len(items) != 1 || str(items[0].(map[string]any), "metadata", "name") != "c" {
		t.Errorf("left: %v", items)
	}
	if code, _ := c.do(http.MethodDelete, "/api/v1/namespaces", nil); code != http.StatusMethodNotAllowed {
		t.Errorf("DELETE /api/v1/namespaces: HTTP %d, want 405", code)
	}
}

func readAll(t *testing.T, resp *http.Response) []byte {
	t.Helper()
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
