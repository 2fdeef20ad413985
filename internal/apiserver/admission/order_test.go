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
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

// Where the webhooks come in a write, in kube-apiserver's order
// (internal/apiserver/store_admission.go): mutating webhooks after the
// decoder's defaults and the built-in mutating plugins, before the create
// strategy; validating webhooks after the kind's validation, before
// storage.

// recorder is a webhook server that records the requests it is sent,
// by path, and allows them all but those to /deny.
type recorder struct {
	*httptest.Server
	mu   sync.Mutex
	sent map[string][]*admissionv1.AdmissionRequest
}

func newRecorder(t *testing.T) *recorder {
	t.Helper()
	r := &recorder{sent: map[string][]*admissionv1.AdmissionRequest{}}
	r.Server = httptest.NewTLSServer(http.HandlerFunc(func(rw http.ResponseWriter, req *http.Request) {
		var review admissionv1.AdmissionReview
		if err := json.NewDecoder(req.Body).Decode(&review); err != nil || review.Request == nil {
			http.Error(rw, "bad review", http.StatusBadRequest)
			return
		}
		r.mu.Lock()
		r.sent[req.URL.Path] = append(r.sent[req.URL.Path], review.Request)
		r.mu.Unlock()
		resp := &admissionv1.AdmissionResponse{UID: review.Request.UID, Allowed: true}
		if req.URL.Path == "/deny" {
			resp = &admissionv1.AdmissionResponse{UID: review.Request.UID, Result: &metav1.Status{Code: http.StatusForbidden, Message: "denied"}}
		}
		review.Response, review.Request = resp, nil
		_ = json.NewEncoder(rw).Encode(&review)
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *recorder) requests(path string) []*admissionv1.AdmissionRequest {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.sent[path]
}

func (r *recorder) hook(path, resource string, ops ...admissionregistrationv1.OperationType) (admissionregistrationv1.WebhookClientConfig, []admissionregistrationv1.RuleWithOperations) {
	w := &webhook{Server: r.Server}
	return w.clientConfig(path), []admissionregistrationv1.RuleWithOperations{{Operations: ops,
		Rule: admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{resource}}}}
}

// mutating installs a mutating webhook at path for resource's ops.
func (r *recorder) mutating(t *testing.T, c kubernetes.Interface, path, resource string, ops ...admissionregistrationv1.OperationType) {
	t.Helper()
	cc, rules := r.hook(path, resource, ops...)
	cfg := &admissionregistrationv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "m" + path[1:]},
		Webhooks: []admissionregistrationv1.MutatingWebhook{{Name: path[1:] + ".order.example.com", ClientConfig: cc, Rules: rules,
			SideEffects: ptr.To(admissionregistrationv1.SideEffectClassNone), AdmissionReviewVersions: []string{"v1"}}},
	}
	if _, err := c.AdmissionregistrationV1().MutatingWebhookConfigurations().Create(t.Context(), cfg, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// validating installs a validating webhook at path for resource's ops.
func (r *recorder) validating(t *testing.T, c kubernetes.Interface, path, resource string, ops ...admissionregistrationv1.OperationType) {
	t.Helper()
	cc, rules := r.hook(path, resource, ops...)
	cfg := &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "v" + path[1:]},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{Name: path[1:] + ".order.example.com", ClientConfig: cc, Rules: rules,
			SideEffects: ptr.To(admissionregistrationv1.SideEffectClassNone), AdmissionReviewVersions: []string{"v1"}}},
	}
	if _, err := c.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(t.Context(), cfg, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func createNamespace(t *testing.T, c kubernetes.Interface) {
	t.Helper()
	if _, err := c.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// TestMutatingWebhookSeesDefaultedPod: a mutating webhook is sent a pod
// as kube-apiserver's create handler hands it to admission
// (handlers/create.go: decoded with its defaults, then the built-in
// plugins ServiceAccount, Priority, DefaultTolerationSeconds, which come
// before the webhook plugin in plugins.go's order), without what the
// create strategy adds after (registry/store.go's Create: the uid, the
// status); a validating webhook is sent the pod as it will be stored.
func TestMutatingWebhookSeesDefaultedPod(t *testing.T) {
	_, c := start(t)
	createNamespace(t, c)
	r := newRecorder(t)
	r.mutating(t, c, "/mutate", "pods", admissionregistrationv1.Create)
	r.validating(t, c, "/validate", "pods", admissionregistrationv1.Create)
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "x"}}}}
	if _, err := c.CoreV1().Pods(ns).Create(t.Context(), pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	decode := func(path string) *corev1.Pod {
		t.Helper()
		got := r.requests(path)
		if len(got) != 1 {
			t.Fatalf("%s was sent %d requests, want 1", path, len(got))
		}
		var p corev1.Pod
		if err := json.Unmarshal(got[0].Object.Raw, &p); err != nil {
			t.Fatal(err)
		}
		return &p
	}
	m := decode("/mutate")
	if m.Spec.RestartPolicy != corev1.RestartPolicyAlways || m.Spec.SchedulerName != corev1.DefaultSchedulerName {
		t.Errorf("mutating webhook: restartPolicy %q, schedulerName %q: want the defaults", m.Spec.RestartPolicy, m.Spec.SchedulerName)
	}
	if m.Spec.ServiceAccountName != "default" || !cmp.Equal(m.Spec.Priority, ptr.To[int32](0)) || len(m.Spec.Tolerations) != 2 {
		t.Errorf("mutating webhook: serviceAccountName %q, priority %v, %d tolerations: want the built-in plugins' (default, 0, 2)",
			m.Spec.ServiceAccountName, m.Spec.Priority, len(m.Spec.Tolerations))
	}
	if m.UID != "" || m.Status.Phase != "" || m.Status.QOSClass != "" {
		t.Errorf("mutating webhook: uid %q, phase %q, qosClass %q: want none, the create strategy comes after", m.UID, m.Status.Phase, m.Status.QOSClass)
	}
	v := decode("/validate")
	if v.UID == "" || v.Status.Phase != corev1.PodPending || v.Status.QOSClass != corev1.PodQOSBestEffort {
		t.Errorf("validating webhook: uid %q, phase %q, qosClass %q: want the pod as it will be stored", v.UID, v.Status.Phase, v.Status.QOSClass)
	}
}

// TestValidatingWebhookBeforeAlreadyExists: a create under a name that is
// taken is sent to the validating webhooks (Store.Create's
// createValidation, registry/store.go#L575, comes before storage finds
// the key, #L594): one that refuses it is the answer, 403, not 409.
func TestValidatingWebhookBeforeAlreadyExists(t *testing.T) {
	_, c := start(t)
	createNamespace(t, c)
	if _, err := c.CoreV1().ConfigMaps(ns).Create(t.Context(), configMap("taken", nil), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	r := newRecorder(t)
	r.validating(t, c, "/deny", "configmaps", admissionregistrationv1.Create)
	_, err := c.CoreV1().ConfigMaps(ns).Create(t.Context(), configMap("taken", nil), metav1.CreateOptions{})
	if !apierrors.IsForbidden(err) {
		t.Errorf("create under a taken name, refused by a validating webhook: %v, want 403", err)
	}
}

// TestUpdateAdmittedBeforeConflict: an update with a stale
// resourceVersion is sent to the mutating webhooks (the update handler's
// transformers, which Store.Update runs first, registry/store.go#L721)
// and then answered 409 (#L808), before the validating ones are called
// (#L840).
func TestUpdateAdmittedBeforeConflict(t *testing.T) {
	_, c := start(t)
	createNamespace(t, c)
	cm, err := c.CoreV1().ConfigMaps(ns).Create(t.Context(), configMap("cm", nil), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r := newRecorder(t)
	r.mutating(t, c, "/mutate", "configmaps", admissionregistrationv1.Update)
	r.validating(t, c, "/validate", "configmaps", admissionregistrationv1.Update)
	cm.ResourceVersion = "1"
	_, err = c.CoreV1().ConfigMaps(ns).Update(t.Context(), cm, metav1.UpdateOptions{})
	if !apierrors.IsConflict(err) {
		t.Fatalf("stale update: %v, want 409", err)
	}
	if m, v := len(r.requests("/mutate")), len(r.requests("/validate")); m != 1 || v != 0 {
		t.Errorf("stale update: sent to the mutating webhook %d times, the validating one %d: want 1 and 0", m, v)
	}
}

// TestDeleteCollectionAdmitted: a deletecollection is admitted item by
// item, as kube-apiserver's Store.DeleteCollection calls its
// deleteValidation for each (handlers/delete.go: one set of attributes
// for the request, with no name, completed with each item as oldObject);
// an item a webhook deletes while it answers for another is passed over
// (Store.DeleteCollection ignores NotFound), and the answer is the list
// as listed; a webhook's refusal of an item ends the request with it.
func TestDeleteCollectionAdmitted(t *testing.T) {
	_, c := start(t)
	ctx := t.Context()
	createNamespace(t, c)
	for _, name := range []string{"a", "b", "c"} {
		if _, err := c.CoreV1().ConfigMaps(ns).Create(ctx, configMap(name, map[string]string{"set": "one"}), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	var (
		mu   sync.Mutex
		seen []string // name in the attributes / oldObject's name
	)
	srv := httptest.NewTLSServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		var review admissionv1.AdmissionReview
		_ = json.NewDecoder(r.Body).Decode(&review)
		var old corev1.ConfigMap
		_ = json.Unmarshal(review.Request.OldObject.Raw, &old)
		mu.Lock()
		seen = append(seen, review.Request.Name+"/"+old.Name)
		mu.Unlock()
		resp := &admissionv1.AdmissionResponse{UID: review.Request.UID, Allowed: true}
		switch {
		case review.Request.Name == "" && old.Name == "a":
			// While a's delete is admitted, b goes.
			if err := c.CoreV1().ConfigMaps(ns).Delete(r.Context(), "b", metav1.DeleteOptions{}); err != nil {
				resp = &admissionv1.AdmissionResponse{UID: review.Request.UID, Result: &metav1.Status{Code: http.StatusInternalServerError, Message: err.Error()}}
			}
		case old.Labels["deny"] == "yes":
			resp = &admissionv1.AdmissionResponse{UID: review.Request.UID, Result: &metav1.Status{Code: http.StatusForbidden, Message: "keep it"}}
		}
		review.Response, review.Request = resp, nil
		_ = json.NewEncoder(rw).Encode(&review)
	}))
	t.Cleanup(srv.Close)
	r := &recorder{Server: srv}
	r.validating(t, c, "/delete", "configmaps", admissionregistrationv1.Delete)

	sel := metav1.ListOptions{LabelSelector: "set=one"}
	if err := c.CoreV1().ConfigMaps(ns).DeleteCollection(ctx, metav1.DeleteOptions{}, sel); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	got := seen
	mu.Unlock()
	// a's (the collection's: no name), b's own DELETE, then c's; b,
	// gone, is not admitted as an item.
	if want := []string{"/a", "b/b", "/c"}; !cmp.Equal(got, want) {
		t.Errorf("the webhook was sent %v, want %v", got, want)
	}
	if left, err := c.CoreV1().ConfigMaps(ns).List(ctx, sel); err != nil || len(left.Items) != 0 {
		t.Errorf("left: %v, %v; want none", left, err)
	}

	for _, name := range []string{"d", "e"} {
		labels := map[string]string{"set": "two"}
		if name == "d" {
			labels["deny"] = "yes"
		}
		if _, err := c.CoreV1().ConfigMaps(ns).Create(ctx, configMap(name, labels), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	err := c.CoreV1().ConfigMaps(ns).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: "set=two"})
	if !apierrors.IsForbidden(err) {
		t.Errorf("deletecollection with an item a webhook refuses: %v, want 403", err)
	}
	if left, err := c.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{LabelSelector: "set=two"}); err != nil || len(left.Items) != 2 {
		t.Errorf("after the refusal of the first item: %d left, %v; want both", len(left.Items), err)
	}
}
