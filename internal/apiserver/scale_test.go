package apiserver

import (
	"context"
	"net/http"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	cacheddiscovery "k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/scale"
)

// The scale subresource (scale.go). No recording covers it, so these
// tests hold it to kube-apiserver's source (deployment ScaleREST) through
// the client kubectl scale uses: client-go's scale client, which finds
// the Scale kind in discovery.

func scaleClient(t *testing.T, s *Server) scale.ScalesGetter {
	t.Helper()
	cfg := s.Config()
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cached := cacheddiscovery.NewMemCacheClient(dc)
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(cached)
	sc, err := scale.NewForConfig(cfg, mapper, dynamic.LegacyAPIPathResolverFunc, scale.NewDiscoveryScaleKindResolver(cached))
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

func TestScale(t *testing.T) {
	s := startServer(t)
	c := newClient(t, s)
	c.mustDo(http.StatusCreated, http.MethodPost, "/api/v1/namespaces", map[string]any{"metadata": map[string]any{"name": "capture"}})
	ex := transcript(t, "30-deployment-create")[0]
	c.mustDo(http.StatusCreated, ex.Method, ex.Path, ex.Request) // replicas: 2, manager curl

	ctx := context.Background()
	deployments := appsv1.SchemeGroupVersion.WithResource("deployments").GroupResource()
	scales := scaleClient(t, s).Scales("capture")

	got, err := scales.Get(ctx, deployments, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Spec.Replicas != 2 || got.Status.Selector != "app=web" || got.Name != "web" || got.UID == "" {
		t.Errorf("GET scale: %+v", got)
	}

	// kubectl scale --replicas=3 without preconditions sends a merge patch.
	patched, err := scales.Patch(ctx, appsv1.SchemeGroupVersion.WithResource("deployments"), "web",
		types.MergePatchType, []byte(`{"spec":{"replicas":3}}`), metav1.PatchOptions{FieldManager: "kubectl"})
	if err != nil {
		t.Fatal(err)
	}
	// With preconditions it reads, then updates.
	patched.Spec.Replicas = 4
	updated, err := scales.Update(ctx, deployments, patched, metav1.UpdateOptions{FieldManager: "hpa"})
	if err != nil {
		t.Fatal(err)
	}
	if updated.Spec.Replicas != 4 {
		t.Errorf("update: replicas %d, want 4", updated.Spec.Replicas)
	}
	// A stale resourceVersion conflicts, as for the deployment itself.
	if _, err := scales.Update(ctx, deployments, patched, metav1.UpdateOptions{}); err == nil || !isStatus(err, http.StatusConflict) {
		t.Errorf("stale update: %v, want 409", err)
	}

	d, err := kubernetes.NewForConfigOrDie(s.Config()).AppsV1().Deployments("capture").Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if *d.Spec.Replicas != 4 || d.Generation != 3 {
		t.Errorf("deployment: replicas %d generation %d, want 4 and 3", *d.Spec.Replicas, d.Generation)
	}
	// The last writer through /scale owns spec.replicas, with subresource
	// scale; the creator no longer does (ScaleHandler.ToParent).
	owners := map[string]string{}
	for _, e := range d.ManagedFields {
		owners[e.Manager+"/"+e.Subresource] = string(e.FieldsV1.Raw)
	}
	if owners["hpa/scale"] != `{"f:spec":{"f:replicas":{}}}` {
		t.Errorf("managedFields: %v", owners)
	}
	if _, ok := owners["kubectl/scale"]; ok {
		t.Errorf("kubectl still owns replicas: %v", owners)
	}
	if f := owners["curl/"]; f == "" || strings.Contains(f, "f:replicas") {
		t.Errorf("curl's entry: %s", f)
	}
}

// TestScaleErrors: the Status errors kube-apiserver's ScaleREST answers.
func TestScaleErrors(t *testing.T) {
	s := startServer(t)
	c := newClient(t, s)
	c.mustDo(http.StatusCreated, http.MethodPost, "/api/v1/namespaces", map[string]any{"metadata": map[string]any{"name": "capture"}})
	ex := transcript(t, "30-deployment-create")[0]
	c.mustDo(http.StatusCreated, ex.Method, ex.Path, ex.Request)
	const path = "/apis/apps/v1/namespaces/capture/deployments/"

	notFound := map[string]any{"kind": "Status", "apiVersion": "v1", "metadata": map[string]any{}, "status": "Failure",
		"message": `deployments/scale.apps "nope" not found`, "reason": "NotFound",
		"details": map[string]any{"name": "nope", "group": "apps", "kind": "deployments/scale"}, "code": float64(404)}
	scaleBody := map[string]any{"apiVersion": "autoscaling/v1", "kind": "Scale", "metadata": map[string]any{"name": "nope"}, "spec": map[string]any{"replicas": 1}}
	for _, tc := range []struct {
		method string
		body   any
	}{{http.MethodGet, nil}, {http.MethodPut, scaleBody}} {
		code, got := c.do(tc.method, path+"nope/scale", tc.body)
		if code != http.StatusNotFound {
			t.Errorf("%s scale of a missing deployment: HTTP %d", tc.method, code)
		}
		sameJSON(t, tc.method+" missing", got, notFound)
	}

	code, got := c.do(http.MethodPut, path+"web/scale", map[string]any{"apiVersion": "autoscaling/v1", "kind": "Scale",
		"metadata": map[string]any{"name": "web"}, "spec": map[string]any{"replicas": -1}})
	if code != http.StatusUnprocessableEntity || str(got, "message") != `Scale.autoscaling "web" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0` {
		t.Errorf("negative replicas: HTTP %d %v", code, got)
	}
	code, got = c.do(http.MethodPut, path+"web/scale", []byte(`{"apiVersion":"autoscaling/v1","kind":"Scale","metadata":{"name":"web"},"spec":{"replicas":"x"}}`))
	if code != http.StatusBadRequest || str(got, "kind") != "Status" {
		t.Errorf("malformed scale: HTTP %d %v", code, got)
	}
	code, got = c.do(http.MethodDelete, path+"web/scale", nil)
	if code != http.StatusMethodNotAllowed || str(got, "kind") != "Status" {
		t.Errorf("DELETE scale: HTTP %d %v", code, got)
	}
	// Pods have no scale subresource.
	if code, _ := c.do(http.MethodGet, "/api/v1/namespaces/capture/pods/x/scale", nil); code != http.StatusNotFound {
		t.Errorf("pods/scale: HTTP %d, want 404", code)
	}
}

func isStatus(err error, code int32) bool {
	st, ok := err.(interface{ Status() metav1.Status })
	return ok && st.Status().Code == code
}
