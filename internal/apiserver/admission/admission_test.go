package admission_test

import (
	"encoding/json"
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/google/go-cmp/cmp"

	"github.com/informer-walkthrough/informer-walkthrough/internal/apiserver"
	"github.com/informer-walkthrough/informer-walkthrough/internal/apiserver/admission"
)

const ns = "admprobe"

// start starts a workshop cluster with admission, and a namespace.
func start(t *testing.T) (*apiserver.Server, kubernetes.Interface) {
	t.Helper()
	s, err := apiserver.Start(apiserver.Options{Admission: admission.Enabled})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	c := kubernetes.NewForConfigOrDie(s.Config())
	if _, err := c.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return s, c
}

// webhook is an HTTPS webhook server on loopback that records the
// AdmissionReviews it is sent and answers each with answer.
type webhook struct {
	*httptest.Server
	mu       sync.Mutex
	requests map[string][][]byte // by path
}

func newWebhook(t *testing.T, answer func(path string, req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse) *webhook {
	t.Helper()
	w := &webhook{requests: map[string][][]byte{}}
	w.Server = httptest.NewTLSServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.mu.Lock()
		w.requests[r.URL.Path] = append(w.requests[r.URL.Path], body)
		w.mu.Unlock()
		var review admissionv1.AdmissionReview
		if err := json.Unmarshal(body, &review); err != nil || review.Request == nil {
			http.Error(rw, "bad review", http.StatusBadRequest)
			return
		}
		resp := answer(r.URL.Path, review.Request)
		resp.UID = review.Request.UID
		review.Response, review.Request = resp, nil
		_ = json.NewEncoder(rw).Encode(&review)
	}))
	t.Cleanup(w.Close)
	return w
}

func (w *webhook) clientConfig(path string) admissionregistrationv1.WebhookClientConfig {
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: w.Certificate().Raw})
	return admissionregistrationv1.WebhookClientConfig{URL: ptr.To(w.URL + path), CABundle: ca}
}

func (w *webhook) sent(path string) [][]byte {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.requests[path]
}

var configMapRules = []admissionregistrationv1.RuleWithOperations{{
	Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
	Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}},
}}

// probe is the webhooks of transcripts 110-112: a validating one that
// refuses a ConfigMap labelled deny=webhook, a mutating one that adds a
// label.
func probe(path string, req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
	var cm corev1.ConfigMap
	_ = json.Unmarshal(req.Object.Raw, &cm)
	switch path {
	case "/validate":
		if cm.Labels["deny"] == "webhook" {
			return &admissionv1.AdmissionResponse{Result: &metav1.Status{Code: http.StatusForbidden, Message: "probe webhook says no"}}
		}
	case "/mutate":
		pt := admissionv1.PatchTypeJSONPatch
		return &admissionv1.AdmissionResponse{Allowed: true, PatchType: &pt,
			Patch: []byte(`[{"op":"add","path":"/metadata/labels","value":{"mutated":"yes"}}]`)}
	}
	return &admissionv1.AdmissionResponse{Allowed: true}
}

func installProbe(t *testing.T, c kubernetes.Interface, w *webhook) {
	t.Helper()
	sel := &metav1.LabelSelector{MatchLabels: map[string]string{}}
	v := &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "probe-validating"},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			Name: "deny.probe.example.com", ClientConfig: w.clientConfig("/validate"), Rules: configMapRules,
			SideEffects: ptr.To(admissionregistrationv1.SideEffectClassNone), AdmissionReviewVersions: []string{"v1"},
			NamespaceSelector: sel, ObjectSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
				{Key: "probe", Operator: metav1.LabelSelectorOpIn, Values: []string{"validate"}}}},
		}},
	}
	m := &admissionregistrationv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "probe-mutating"},
		Webhooks: []admissionregistrationv1.MutatingWebhook{{
			Name: "mutate.probe.example.com", ClientConfig: w.clientConfig("/mutate"), Rules: configMapRules,
			SideEffects: ptr.To(admissionregistrationv1.SideEffectClassNone), AdmissionReviewVersions: []string{"v1"},
			ObjectSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"probe": "mutate"}},
		}},
	}
	ctx := t.Context()
	if _, err := c.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx, v, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.AdmissionregistrationV1().MutatingWebhookConfigurations().Create(ctx, m, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// TestValidatingWebhook: a create the webhook refuses is answered as
// kube-apiserver answers it (transcript 112), and the webhook is sent
// what kube-apiserver sends (transcript 110).
func TestValidatingWebhook(t *testing.T) {
	_, c := start(t)
	w := newWebhook(t, probe)
	installProbe(t, c, w)

	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "w-1", Labels: map[string]string{"deny": "webhook", "probe": "validate"}},
		Data: map[string]string{"k": "v"}}
	_, err := c.CoreV1().ConfigMaps(ns).Create(t.Context(), cm, metav1.CreateOptions{FieldManager: "probe"})
	var status apierrors.APIStatus
	if !apierrors.IsForbidden(err) || !errorsAs(err, &status) {
		t.Fatalf("create refused by the webhook: got %v, want 403", err)
	}
	got, _ := json.Marshal(status.Status())
	want := section(t, "112-create-refused-by-validating-webhook.txt")
	if diff := cmp.Diff(jsonOf(t, want), jsonOf(t, got)); diff != "" {
		t.Errorf("the Status, against transcript 112 (-want +got):\n%s", diff)
	}

	sent := w.sent("/validate")
	if len(sent) != 1 {
		t.Fatalf("the webhook was called %d times, want 1", len(sent))
	}
	compareReview(t, "110-admission-review-validating-webhook.txt", sent[0])

	// A ConfigMap the webhook allows is created; one its selector
	// does not match is not sent to it.
	cm.Name, cm.Labels = "w-2", map[string]string{"probe": "validate"}
	if _, err := c.CoreV1().ConfigMaps(ns).Create(t.Context(), cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cm.Name, cm.Labels = "w-3", map[string]string{"deny": "webhook"}
	if _, err := c.CoreV1().ConfigMaps(ns).Create(t.Context(), cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if n := len(w.sent("/validate")); n != 2 {
		t.Errorf("the webhook was called %d times, want 2", n)
	}
}

// TestMutatingWebhook: the webhook's patch is in the object stored, and
// it was sent what kube-apiserver sends (transcript 111).
func TestMutatingWebhook(t *testing.T) {
	_, c := start(t)
	w := newWebhook(t, probe)
	installProbe(t, c, w)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "m-1", Labels: map[string]string{"probe": "mutate"}},
		Data: map[string]string{"k": "v"}}
	got, err := c.CoreV1().ConfigMaps(ns).Create(t.Context(), cm, metav1.CreateOptions{FieldManager: "probe"})
	if err != nil {
		t.Fatal(err)
	}
	if got.Labels["mutated"] != "yes" {
		t.Errorf("labels %v: the webhook's patch is not applied", got.Labels)
	}
	sent := w.sent("/mutate")
	if len(sent) != 1 {
		t.Fatalf("the webhook was called %d times, want 1", len(sent))
	}
	compareReview(t, "111-admission-review-mutating-webhook.txt", sent[0])
}

func errorsAs(err error, status *apierrors.APIStatus) bool {
	s, ok := err.(apierrors.APIStatus)
	*status = s
	return ok
}

// section is the JSON document of a transcript that records one.
func section(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile("../testdata/transcripts/" + name)
	if err != nil {
		t.Fatal(err)
	}
	_, doc, _ := strings.Cut(string(data), "\n")
	return []byte(doc)
}

func jsonOf(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	return m
}

// compareReview compares an AdmissionReview with a transcript's, less
// what differs between two servers at every run: uids, names, times,
// the user.
func compareReview(t *testing.T, transcript string, got []byte) {
	t.Helper()
	want, have := jsonOf(t, section(t, transcript)), jsonOf(t, got)
	for _, m := range []map[string]any{want, have} {
		req := m["request"].(map[string]any)
		req["uid"], req["name"], req["namespace"], req["userInfo"] = "UID", "NAME", "NS", "USER"
		obj := req["object"].(map[string]any)
		md := obj["metadata"].(map[string]any)
		md["name"], md["namespace"] = "NAME", "NS"
		delete(md, "labels") // the probes' own
		for _, k := range []string{"uid", "creationTimestamp"} {
			if _, ok := md[k]; ok {
				md[k] = k
			}
		}
		if mf, ok := md["managedFields"].([]any); ok {
			for _, e := range mf {
				e := e.(map[string]any)
				e["time"] = "TIME"
				if fm, ok := e["fieldsV1"].(map[string]any)["f:metadata"].(map[string]any); ok {
					delete(fm, "f:labels")
					if len(fm) == 0 {
						delete(e["fieldsV1"].(map[string]any), "f:metadata")
					}
				}
			}
		}
	}
	if diff := cmp.Diff(want, have); diff != "" {
		t.Errorf("the AdmissionReview sent, against transcript %s (-want +got):\n%s", transcript, diff)
	}
}

// TestValidatingAdmissionPolicy: a create a policy's CEL refuses is
// answered as kube-apiserver answers it (transcript 113), at once after
// the policy and its binding are created.
func TestValidatingAdmissionPolicy(t *testing.T) {
	_, c := start(t)
	ctx := t.Context()
	policy := &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "admprobe-policy"},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
				RuleWithOperations: configMapRules[0],
			}}},
			Validations: []admissionregistrationv1.Validation{{
				Expression: `!has(object.metadata.labels) || !('deny' in object.metadata.labels) || object.metadata.labels['deny'] != 'policy'`,
				Message:    "probe policy says no",
			}},
		},
	}
	binding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "admprobe-binding"},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        policy.Name,
			ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny},
		},
	}
	if _, err := c.AdmissionregistrationV1().ValidatingAdmissionPolicies().Create(ctx, policy, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "p-1", Labels: map[string]string{"deny": "policy"}}}
	_, err := c.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{})
	var status apierrors.APIStatus
	if !apierrors.IsInvalid(err) || !errorsAs(err, &status) {
		t.Fatalf("create refused by the policy: got %v, want 422", err)
	}
	got, _ := json.Marshal(status.Status())
	want := strings.NewReplacer("p-1795765127890710265", "p-1", "admprobe-75323", "admprobe").Replace(
		string(section(t, "113-create-refused-by-validating-admission-policy.txt")))
	if diff := cmp.Diff(jsonOf(t, []byte(want)), jsonOf(t, got)); diff != "" {
		t.Errorf("the Status, against transcript 113 (-want +got):\n%s", diff)
	}
	cm.Name, cm.Labels = "p-2", nil
	if _, err := c.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Errorf("a ConfigMap the policy allows: %v", err)
	}
}
