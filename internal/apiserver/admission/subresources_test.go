package admission_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// TestSubresourcesAdmitted: a write through the scale, binding and
// eviction subresources is admitted with the subresource's kind and
// object, as kube-apiserver sends them: an UPDATE of deployments/scale
// with autoscaling/v1 Scales (a mutating webhook's patch of the Scale
// reaches the Deployment), a CREATE of pods/binding with the v1
// Binding, a CREATE of pods/eviction with the policy/v1 Eviction (which
// a validating webhook can refuse).
func TestSubresourcesAdmitted(t *testing.T) {
	_, c := start(t)
	ctx := t.Context()
	createNamespace(t, c)
	type call struct{ Path, Op, Kind, Resource, Sub, Name, ObjectKind string }
	var (
		mu    sync.Mutex
		calls []call
	)
	srv := httptest.NewTLSServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		var review admissionv1.AdmissionReview
		_ = json.NewDecoder(r.Body).Decode(&review)
		q := review.Request
		var tm metav1.TypeMeta
		_ = json.Unmarshal(q.Object.Raw, &tm)
		mu.Lock()
		calls = append(calls, call{r.URL.Path, string(q.Operation), q.Kind.Group + "/" + q.Kind.Version + "/" + q.Kind.Kind,
			q.Resource.Resource, q.SubResource, q.Name, tm.APIVersion + "/" + tm.Kind})
		mu.Unlock()
		resp := &admissionv1.AdmissionResponse{UID: q.UID, Allowed: true}
		switch {
		case r.URL.Path == "/mutate" && q.SubResource == "scale":
			pt := admissionv1.PatchTypeJSONPatch
			resp.PatchType, resp.Patch = &pt, []byte(`[{"op":"replace","path":"/spec/replicas","value":5}]`)
		case r.URL.Path == "/validate" && q.SubResource == "eviction":
			resp = &admissionv1.AdmissionResponse{UID: q.UID, Result: &metav1.Status{Code: http.StatusForbidden, Message: "no evictions"}}
		}
		review.Response, review.Request = resp, nil
		_ = json.NewEncoder(rw).Encode(&review)
	}))
	t.Cleanup(srv.Close)
	w := &webhook{Server: srv}
	rules := []admissionregistrationv1.RuleWithOperations{{
		Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Update},
		Rule:       admissionregistrationv1.Rule{APIGroups: []string{"apps"}, APIVersions: []string{"v1"}, Resources: []string{"deployments/scale"}},
	}, {
		Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
		Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods/binding", "pods/eviction"}},
	}}
	none := ptr.To(admissionregistrationv1.SideEffectClassNone)
	a := c.AdmissionregistrationV1()
	if _, err := a.MutatingWebhookConfigurations().Create(ctx, &admissionregistrationv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "subresources"},
		Webhooks: []admissionregistrationv1.MutatingWebhook{{Name: "mutate.subresources.example.com", ClientConfig: w.clientConfig("/mutate"),
			Rules: rules, SideEffects: none, AdmissionReviewVersions: []string{"v1"}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.ValidatingWebhookConfigurations().Create(ctx, &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "subresources"},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{Name: "validate.subresources.example.com", ClientConfig: w.clientConfig("/validate"),
			Rules: rules, SideEffects: none, AdmissionReviewVersions: []string{"v1"}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	labels := map[string]string{"app": "d"}
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "d"}, Spec: appsv1.DeploymentSpec{
		Replicas: ptr.To[int32](1), Selector: &metav1.LabelSelector{MatchLabels: labels},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "x"}}}},
	}}
	if _, err := c.AppsV1().Deployments(ns).Create(ctx, d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	sc, err := c.AppsV1().Deployments(ns).UpdateScale(ctx, "d", &autoscalingv1.Scale{ObjectMeta: metav1.ObjectMeta{Name: "d", Namespace: ns}, Spec: autoscalingv1.ScaleSpec{Replicas: 3}}, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.AppsV1().Deployments(ns).Get(ctx, "d", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if sc.Spec.Replicas != 5 || *got.Spec.Replicas != 5 {
		t.Errorf("after a scale to 3 that the webhook patches to 5: the Scale says %d, the Deployment %d; want 5", sc.Spec.Replicas, *got.Spec.Replicas)
	}

	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "x"}}}}
	if _, err := c.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := c.CoreV1().Pods(ns).Bind(ctx, &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Target: corev1.ObjectReference{Name: "node-1"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	err = c.PolicyV1().Evictions(ns).Evict(ctx, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: ns}})
	if !apierrors.IsForbidden(err) {
		t.Errorf("an eviction a validating webhook refuses: %v, want 403", err)
	}
	if _, err := c.CoreV1().Pods(ns).Get(ctx, "p", metav1.GetOptions{}); err != nil {
		t.Errorf("the pod whose eviction was refused: %v", err)
	}

	mu.Lock()
	defer mu.Unlock()
	scale := call{Op: "UPDATE", Kind: "autoscaling/v1/Scale", Resource: "deployments", Sub: "scale", Name: "d", ObjectKind: "autoscaling/v1/Scale"}
	binding := call{Op: "CREATE", Kind: "/v1/Binding", Resource: "pods", Sub: "binding", Name: "p", ObjectKind: "v1/Binding"}
	eviction := call{Op: "CREATE", Kind: "policy/v1/Eviction", Resource: "pods", Sub: "eviction", Name: "p", ObjectKind: "policy/v1/Eviction"}
	var want []call
	for _, c := range []call{scale, binding, eviction} {
		for _, path := range []string{"/mutate", "/validate"} {
			c.Path = path
			want = append(want, c)
		}
	}
	if diff := cmp.Diff(want, calls); diff != "" {
		t.Errorf("the webhooks were sent (-want +got):\n%s", diff)
	}
}
