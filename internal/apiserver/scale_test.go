package apiserver

import (
	"context"
	"net/http"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	autoscalingv1ac "k8s.io/client-go/applyconfigurations/autoscaling/v1"
	"k8s.io/client-go/discovery"
	cacheddiscovery "k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/scale"
	"k8s.io/utils/ptr"
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
		"message": `deployments.apps "nope" not found`, "reason": "NotFound",
		"details": map[string]any{"name": "nope", "group": "apps", "kind": "deployments"}, "code": float64(404)}
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

// TestScaleApply: a server-side apply of a Deployment's Scale
// (PATCH .../scale, application/apply-patch+yaml) is the Scale's
// FieldManager.Apply, mapped back by ScaleHandler, as kube-apiserver's
// applyPatcher does on the scale subresource. Measured on kube-apiserver
// v1.37.2 (hack/realk8s): the applier owns spec.replicas with
// subresource "scale" and no time, the creator loses it (force), a later
// scale write by another manager takes it, and the applier's next apply
// without force is a 409 naming it; an intent of another kind is a 400.
// Found by controller-runtime's pkg/client suite ("should be able to
// apply the scale subresource"; the workshop cluster answered 415).
func TestScaleApply(t *testing.T) {
	s := startServer(t)
	client := kubernetes.NewForConfigOrDie(s.Config())
	ctx := t.Context()
	ns := createNamespace(t, client, "scale-apply")
	deps := client.AppsV1().Deployments(ns)
	if _, err := deps.Create(ctx, replicatedDeployment("d2"), metav1.CreateOptions{FieldManager: "creator"}); err != nil {
		t.Fatal(err)
	}
	sc, err := deps.ApplyScale(ctx, "d2", autoscalingv1ac.Scale().WithSpec(autoscalingv1ac.ScaleSpec().WithReplicas(3)),
		metav1.ApplyOptions{FieldManager: "foo", Force: true})
	if err != nil {
		t.Fatal(err)
	}
	if sc.Spec.Replicas != 3 || sc.Name != "d2" {
		t.Errorf("applied Scale: %s replicas %d, want d2 replicas 3", sc.Name, sc.Spec.Replicas)
	}
	d, err := deps.Get(ctx, "d2", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if *d.Spec.Replicas != 3 || d.ResourceVersion != sc.ResourceVersion {
		t.Errorf("Deployment after the apply: replicas %d at %s, want 3 at the Scale's %s", *d.Spec.Replicas, d.ResourceVersion, sc.ResourceVersion)
	}
	owners := map[string]string{}
	for _, e := range d.ManagedFields {
		owners[e.Manager+"/"+string(e.Operation)+"/"+e.Subresource] = string(e.FieldsV1.Raw)
		if e.Manager == "foo" && e.Time != nil {
			t.Errorf("foo's entry has time %v; kube-apiserver records none for a scale write", e.Time)
		}
	}
	if owners["foo/Apply/scale"] != `{"f:spec":{"f:replicas":{}}}` || strings.Contains(owners["creator/Update/"], "f:replicas") {
		t.Errorf("managedFields after a forced apply of the Scale: %v\nwant foo/Apply/scale owning spec.replicas, creator not", owners)
	}
	if _, err := deps.Patch(ctx, "d2", types.MergePatchType, []byte(`{"spec":{"replicas":2}}`), metav1.PatchOptions{FieldManager: "upd"}, "scale"); err != nil {
		t.Fatal(err)
	}
	_, err = deps.ApplyScale(ctx, "d2", autoscalingv1ac.Scale().WithSpec(autoscalingv1ac.ScaleSpec().WithReplicas(4)), metav1.ApplyOptions{FieldManager: "foo"})
	if want := `Apply failed with 1 conflict: conflict with "upd" with subresource "scale" using autoscaling/v1: .spec.replicas`; !apierrors.IsConflict(err) || err.Error() != want {
		t.Errorf("apply after another manager's scale write: %v\nwant 409 %s", err, want)
	}
	c := newClient(t, s)
	req := c.newRequest(ctx, http.MethodPatch, "/apis/apps/v1/namespaces/"+ns+"/deployments/d2/scale?fieldManager=foo",
		[]byte(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d2"},"spec":{"replicas":4}}`))
	req.Header.Set("Content-Type", "application/apply-patch+yaml")
	resp, err := c.c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	got := decode(t, readAll(t, resp))
	if resp.StatusCode != http.StatusBadRequest || got["message"] != "invalid object type: apps/v1, Kind=Deployment" {
		t.Errorf("apply of a Deployment to the scale subresource: %d %v, want 400 invalid object type: apps/v1, Kind=Deployment", resp.StatusCode, got["message"])
	}
}

// replicatedDeployment is a Deployment of one replica, the least
// kube-apiserver takes.
func replicatedDeployment(name string) *appsv1.Deployment {
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i"}}},
			},
		},
	}
}
