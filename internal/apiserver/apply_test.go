package apiserver

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	appsv1apply "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1apply "k8s.io/client-go/applyconfigurations/core/v1"
	metav1apply "k8s.io/client-go/applyconfigurations/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// Server-side apply (apply.go). No recording covers it; the merge,
// ownership and conflicts are apimachinery's FieldManager.Apply, the code
// kube-apiserver runs, and these tests pin how the workshop cluster
// wires it: create on first apply (201), ownership of exactly the applied
// fields, kube-apiserver's 409 naming the conflicting manager, force, and
// its Status errors for bad input.

const deploymentYAML = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: c
        image: nginx:1.27
`

// apply sends a server-side apply as kubectl apply --server-side does.
func (c *client) apply(path, query, body string) (int, map[string]any) {
	c.t.Helper()
	req := c.newRequest(context.Background(), http.MethodPatch, path+"?"+query, []byte(body))
	req.Header.Set("Content-Type", "application/apply-patch+yaml")
	resp, err := c.c.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, decode(c.t, b)
}

func TestApply(t *testing.T) {
	clk := &clock{now: tableCreated}
	s := startServerWith(t, Options{Now: clk.Now})
	c := newClient(t, s)
	c.mustDo(http.StatusCreated, http.MethodPost, "/api/v1/namespaces", map[string]any{"metadata": map[string]any{"name": "demo"}})
	const path = "/apis/apps/v1/namespaces/demo/deployments/web"

	// The first apply creates, with the defaults filled in.
	code, d := c.apply(path, "fieldManager=kubectl", deploymentYAML)
	if code != http.StatusCreated {
		t.Fatalf("first apply: HTTP %d %v", code, d)
	}
	if got := str(d, "spec", "strategy", "type"); got != "RollingUpdate" {
		t.Errorf("defaults: strategy %q", got)
	}
	if d["metadata"].(map[string]any)["generation"] != float64(1) {
		t.Errorf("generation %v", d["metadata"].(map[string]any)["generation"])
	}
	// The applier owns what it applied, not the defaults.
	mf := d["metadata"].(map[string]any)["managedFields"].([]any)
	entry := mf[0].(map[string]any)
	if len(mf) != 1 || entry["manager"] != "kubectl" || entry["operation"] != "Apply" {
		t.Fatalf("managedFields %v", mf)
	}
	fields := mustJSON(t, entry["fieldsV1"])
	if !strings.Contains(fields, `"f:replicas"`) || strings.Contains(fields, "f:strategy") || strings.Contains(fields, "f:imagePullPolicy") {
		t.Errorf("the applier owns %s", fields)
	}
	if entry["time"] != "2026-11-22T22:22:00Z" {
		t.Errorf("the entry's time is %v, not the server's clock", entry["time"])
	}
	rv := s.ResourceVersion()

	// The same intent again, a minute later, changes nothing: no write,
	// not even of a time.
	clk.Set(tableCreated.Add(time.Minute))
	if code, _ := c.apply(path, "fieldManager=kubectl", deploymentYAML); code != http.StatusOK || s.ResourceVersion() != rv {
		t.Errorf("re-apply: HTTP %d, resourceVersion %s -> %s", code, rv, s.ResourceVersion())
	}

	// Another writer takes replicas over with an update...
	patchJSON(t, c, path, `{"spec":{"replicas":5}}`)
	// ...so applying a different replicas conflicts, 409 naming it.
	code, st := c.apply(path, "fieldManager=kubectl", strings.Replace(deploymentYAML, "replicas: 2", "replicas: 3", 1))
	want := map[string]any{"kind": "Status", "apiVersion": "v1", "metadata": map[string]any{}, "status": "Failure",
		"message": `Apply failed with 1 conflict: conflict with "curl" using apps/v1: .spec.replicas`,
		"reason":  "Conflict",
		"details": map[string]any{"causes": []any{map[string]any{
			"reason": "FieldManagerConflict", "message": `conflict with "curl" using apps/v1`, "field": ".spec.replicas",
		}}},
		"code": float64(409)}
	if code != http.StatusConflict {
		t.Errorf("conflicting apply: HTTP %d", code)
	}
	sameJSON(t, "the conflict", st, want)

	// force=true takes the field over.
	code, d = c.apply(path, "fieldManager=kubectl&force=true", strings.Replace(deploymentYAML, "replicas: 2", "replicas: 3", 1))
	if code != http.StatusOK || d["spec"].(map[string]any)["replicas"] != float64(3) {
		t.Errorf("forced apply: HTTP %d %v", code, d["spec"])
	}

	// client-go's typed Apply works too.
	cs := kubernetes.NewForConfigOrDie(s.Config())
	cfg := appsv1apply.Deployment("api", "demo").WithSpec(appsv1apply.DeploymentSpec().
		WithSelector(metav1apply.LabelSelector().WithMatchLabels(map[string]string{"app": "api"})).
		WithTemplate(corev1apply.PodTemplateSpec().WithLabels(map[string]string{"app": "api"}).
			WithSpec(corev1apply.PodSpec().WithContainers(corev1apply.Container().WithName("c").WithImage("x")))))
	got, err := cs.AppsV1().Deployments("demo").Apply(context.Background(), cfg, metav1.ApplyOptions{FieldManager: "chapter"})
	if err != nil {
		t.Fatal(err)
	}
	if *got.Spec.Replicas != 1 || got.ManagedFields[0].Manager != "chapter" {
		t.Errorf("typed apply: %+v", got)
	}
}

// patchJSON sends a merge patch as curl would (manager curl).
func patchJSON(t *testing.T, c *client, path, patch string) {
	t.Helper()
	req := c.newRequest(context.Background(), http.MethodPatch, path, []byte(patch))
	req.Header.Set("Content-Type", "application/merge-patch+json")
	resp, err := c.c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("merge patch: HTTP %d %s", resp.StatusCode, b)
	}
}

// TestApplyErrors: bad input gets kube-apiserver's Status errors, and
// writes nothing.
func TestApplyErrors(t *testing.T) {
	s := startServer(t)
	c := newClient(t, s)
	c.mustDo(http.StatusCreated, http.MethodPost, "/api/v1/namespaces", map[string]any{"metadata": map[string]any{"name": "demo"}})
	const path = "/apis/apps/v1/namespaces/demo/deployments/web"
	for _, tc := range []struct {
		name, query, body string
		code              int
		reason, message   string
	}{
		{"another kind", "fieldManager=kubectl", "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: web}\n",
			400, "BadRequest", "invalid object type: apps/v1, Kind=StatefulSet"},
		{"another version", "fieldManager=kubectl", "apiVersion: v1\nkind: Service\nmetadata: {name: web}\n",
			400, "BadRequest", "invalid object type: /v1, Kind=Service"},
		{"not YAML", "fieldManager=kubectl", "{",
			400, "BadRequest", "error decoding YAML: error converting YAML to JSON: yaml: line 1: did not find expected node content"},
		{"another name", "fieldManager=kubectl", strings.Replace(deploymentYAML, "name: web", "name: api", 1),
			400, "BadRequest", "the name of the object (api) does not match the name on the URL (web)"},
		{"no field manager", "", deploymentYAML,
			422, "Invalid", "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required value: is required for apply patch"},
		// As kube-apiserver v1.36 answers it (kubernetes/kubernetes#139253).
		{"unknown field", "fieldManager=kubectl", strings.Replace(deploymentYAML, "replicas:", "replicaz:", 1),
			500, "", "failed to create typed patch object (/web; apps/v1, Kind=Deployment): .spec.replicaz: field not declared in schema"},
		{"managedFields set", "fieldManager=kubectl", strings.Replace(deploymentYAML, "name: web", "name: web\n  managedFields: [{manager: x}]", 1),
			400, "BadRequest", "metadata.managedFields must be nil"},
	} {
		code, st := c.apply(path, tc.query, tc.body)
		if code != tc.code || str(st, "kind") != "Status" || str(st, "reason") != tc.reason || str(st, "message") != tc.message {
			t.Errorf("%s: HTTP %d %v, want %d %s %q", tc.name, code, st, tc.code, tc.reason, tc.message)
		}
	}
	// force on a non-apply patch is refused.
	req := c.newRequest(context.Background(), http.MethodPatch, path+"?force=true", []byte(`{}`))
	req.Header.Set("Content-Type", "application/merge-patch+json")
	resp, err := c.c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnprocessableEntity {
		t.Errorf("force on a merge patch: HTTP %d, want 422", resp.StatusCode)
	}
	if s.ResourceVersion() != "1" {
		t.Errorf("bad input wrote: resourceVersion %s", s.ResourceVersion())
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestFieldValidation: fieldValidation=Strict refuses unknown fields with
// kube-apiserver's 400s (the wording differs for a body and a patch);
// without it (Warn) they are dropped with a Warning header.
func TestFieldValidation(t *testing.T) {
	s := startServer(t)
	c := newClient(t, s)
	c.mustDo(http.StatusCreated, http.MethodPost, "/api/v1/namespaces", map[string]any{"metadata": map[string]any{"name": "demo"}})
	const path = "/apis/apps/v1/namespaces/demo/deployments"
	typo := `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"},"spec":{"replicaz":2,"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"c","image":"x"}]}}}}`
	send := func(method, path, contentType, body string) (*http.Response, map[string]any) {
		req := c.newRequest(context.Background(), method, path, []byte(body))
		req.Header.Set("Content-Type", contentType)
		resp, err := c.c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, decode(t, b)
	}
	resp, st := send(http.MethodPost, path+"?fieldValidation=Strict", "application/json", typo)
	if resp.StatusCode != http.StatusBadRequest ||
		str(st, "message") != `Deployment in version "v1" cannot be handled as a Deployment: strict decoding error: unknown field "spec.replicaz"` {
		t.Errorf("strict create: HTTP %d %v", resp.StatusCode, st)
	}
	resp, _ = send(http.MethodPost, path, "application/json", typo)
	if resp.StatusCode != http.StatusCreated || resp.Header.Get("Warning") != `299 - "unknown field \"spec.replicaz\""` {
		t.Errorf("create: HTTP %d, Warning %q", resp.StatusCode, resp.Header.Get("Warning"))
	}
	resp, st = send(http.MethodPatch, path+"/web?fieldValidation=Strict", "application/strategic-merge-patch+json", `{"spec":{"replicaz":3}}`)
	if resp.StatusCode != http.StatusBadRequest || str(st, "message") != `strict decoding error: unknown field "spec.replicaz"` {
		t.Errorf("strict patch: HTTP %d %v", resp.StatusCode, st)
	}
}
