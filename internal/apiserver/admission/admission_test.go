package admission_test

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	corev1apply "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/google/go-cmp/cmp"

	"github.com/informer-walkthrough/informer-walkthrough/check/leakcheck"
	"github.com/informer-walkthrough/informer-walkthrough/internal/apiserver"
	"github.com/informer-walkthrough/informer-walkthrough/internal/apiserver/admission"

	"github.com/informer-walkthrough/informer-walkthrough/internal/apiserver/transcripttest"
)

// The probe of transcripts 110-113: a webhook server on loopback with a
// self-signed certificate, configurations naming its url and caBundle, a
// ValidatingAdmissionPolicy and its binding, and the writes they see.
// The same scenario runs on the workshop cluster (TestProbe) and on a
// real one (TestRecordProbe, which writes the transcripts).

const ns = "admprobe"

// transcripts is where the transcripts are.
const transcripts = "../testdata/transcripts/"

// start starts a workshop cluster with admission.
func start(t *testing.T) (*apiserver.Server, kubernetes.Interface) {
	t.Helper()
	s, err := apiserver.Start(apiserver.Options{Admission: admission.Enabled})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s, kubernetes.NewForConfigOrDie(s.Config())
}

// webhook is an HTTPS webhook server on loopback that records the
// AdmissionReviews it is sent (with the path and query they were sent
// to) and answers each with probe's answer.
type webhook struct {
	*httptest.Server
	mu   sync.Mutex
	sent map[string][]sent // by path
}

type sent struct {
	uri  string
	body []byte
}

func newWebhook(t *testing.T) *webhook {
	t.Helper()
	w := &webhook{sent: map[string][]sent{}}
	w.Server = httptest.NewTLSServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var review admissionv1.AdmissionReview
		if err := json.Unmarshal(body, &review); err != nil || review.Request == nil {
			http.Error(rw, "bad review", http.StatusBadRequest)
			return
		}
		if review.Request.DryRun == nil || !*review.Request.DryRun { // not install's dry runs
			w.mu.Lock()
			w.sent[r.URL.Path] = append(w.sent[r.URL.Path], sent{r.URL.RequestURI(), body})
			w.mu.Unlock()
		}
		resp := probe(r.URL.Path, review.Request)
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

func (w *webhook) requests(path string) []sent {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.sent[path]
}

// probe answers: /validate refuses a ConfigMap labelled deny=webhook
// (403, as controller-runtime's admission.Denied), /mutate adds a label.
func probe(path string, req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
	raw := req.Object.Raw
	if len(raw) == 0 || string(raw) == "null" {
		raw = req.OldObject.Raw
	}
	var cm corev1.ConfigMap
	_ = json.Unmarshal(raw, &cm)
	switch path {
	case "/validate":
		if cm.Labels["deny"] == "webhook" {
			return &admissionv1.AdmissionResponse{Result: &metav1.Status{Code: http.StatusForbidden, Message: "probe webhook says no"}}
		}
	case "/mutate":
		pt := admissionv1.PatchTypeJSONPatch
		return &admissionv1.AdmissionResponse{Allowed: true, PatchType: &pt,
			Patch: []byte(`[{"op":"add","path":"/metadata/labels/mutated","value":"yes"}]`)}
	}
	return &admissionv1.AdmissionResponse{Allowed: true}
}

func configMap(name string, labels map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Data: map[string]string{"k": "v"}}
}

// install creates the namespace, the webhook configurations and the
// policy, and waits until each is in force (at once on the workshop
// cluster; a moment later on kube-apiserver, whose admission plugins
// read them through informers): dry-run creates that each must act on.
func install(t *testing.T, c kubernetes.Interface, w *webhook) {
	t.Helper()
	ctx := t.Context()
	if _, err := c.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	rules := func(ops ...admissionregistrationv1.OperationType) []admissionregistrationv1.RuleWithOperations {
		return []admissionregistrationv1.RuleWithOperations{{Operations: ops,
			Rule: admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}}}}
	}
	v := &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "admprobe-validating"},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			Name: "deny.probe.example.com", ClientConfig: w.clientConfig("/validate"),
			Rules:       rules(admissionregistrationv1.Create, admissionregistrationv1.Update, admissionregistrationv1.Delete),
			SideEffects: ptr.To(admissionregistrationv1.SideEffectClassNone), AdmissionReviewVersions: []string{"v1"},
			ObjectSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"probe": "validate"}},
		}},
	}
	m := &admissionregistrationv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "admprobe-mutating"},
		Webhooks: []admissionregistrationv1.MutatingWebhook{{
			Name: "mutate.probe.example.com", ClientConfig: w.clientConfig("/mutate"), Rules: rules(admissionregistrationv1.Create),
			SideEffects: ptr.To(admissionregistrationv1.SideEffectClassNone), AdmissionReviewVersions: []string{"v1"},
			ObjectSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"probe": "mutate"}},
		}},
	}
	policy := &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "admprobe-policy"},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
				RuleWithOperations: rules(admissionregistrationv1.Create)[0],
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
	a := c.AdmissionregistrationV1()
	for _, err := range []error{
		ignoreResult(a.ValidatingWebhookConfigurations().Create(ctx, v, metav1.CreateOptions{})),
		ignoreResult(a.MutatingWebhookConfigurations().Create(ctx, m, metav1.CreateOptions{})),
		ignoreResult(a.ValidatingAdmissionPolicies().Create(ctx, policy, metav1.CreateOptions{})),
		ignoreResult(a.ValidatingAdmissionPolicyBindings().Create(ctx, binding, metav1.CreateOptions{})),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	dry := metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}
	inForce := func(cm *corev1.ConfigMap, done func(*corev1.ConfigMap, error) bool) {
		err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
			got, err := c.CoreV1().ConfigMaps(ns).Create(ctx, cm, dry)
			return done(got, err), nil
		})
		if err != nil {
			t.Fatalf("waiting for the configurations to be in force: %v", err)
		}
	}
	inForce(configMap("warm-1", map[string]string{"deny": "webhook", "probe": "validate"}),
		func(_ *corev1.ConfigMap, err error) bool { return apierrors.IsForbidden(err) })
	inForce(configMap("warm-2", map[string]string{"probe": "mutate"}),
		func(cm *corev1.ConfigMap, err error) bool { return err == nil && cm.Labels["mutated"] == "yes" })
	inForce(configMap("warm-3", map[string]string{"deny": "policy"}),
		func(_ *corev1.ConfigMap, err error) bool { return apierrors.IsInvalid(err) })
}

func ignoreResult[T any](_ T, err error) error { return err }

// document is one recorded document of the scenario: a transcript's
// name, its heading line and its JSON.
type document struct {
	name, heading string
	json          []byte
}

// scenario makes the writes the transcripts record, and returns what
// was sent to the webhooks and what the client was answered.
func scenario(t *testing.T, c kubernetes.Interface, w *webhook) []document {
	t.Helper()
	ctx := t.Context()
	cms := c.CoreV1().ConfigMaps(ns)
	var docs []document
	status := func(name, heading string, err error) {
		var st apierrors.APIStatus
		if !errors.As(err, &st) {
			t.Fatalf("%s: got %v, want a Status", name, err)
		}
		docs = append(docs, document{name, heading, indent(t, st.Status())})
	}
	review := func(name, path string, i int, what string) {
		got := w.requests(path)
		if len(got) <= i {
			t.Fatalf("%s: %s was called %d times, want %d", name, path, len(got), i+1)
		}
		var v any
		if err := json.Unmarshal(got[i].body, &v); err != nil {
			t.Fatal(err)
		}
		docs = append(docs, document{name, fmt.Sprintf("### POST %s (sent by the API server to the webhook: %s)", got[i].uri, what), indent(t, v)})
	}

	_, err := cms.Create(ctx, configMap("w-1", map[string]string{"deny": "webhook", "probe": "validate"}), metav1.CreateOptions{FieldManager: "probe"})
	review("110-admission-review-validating-webhook", "/validate", 0, "a create")
	status("112-create-refused-by-validating-webhook", "### the Status a client gets when a validating webhook refuses a create", err)

	if _, err := cms.Create(ctx, configMap("m-1", map[string]string{"probe": "mutate"}), metav1.CreateOptions{FieldManager: "probe"}); err != nil {
		t.Fatal(err)
	}
	review("111-admission-review-mutating-webhook", "/mutate", 0, "a create")

	w2, err := cms.Create(ctx, configMap("w-2", map[string]string{"probe": "validate"}), metav1.CreateOptions{FieldManager: "probe"})
	if err != nil {
		t.Fatal(err)
	}
	w2.Data["k"] = "v2"
	if _, err := cms.Update(ctx, w2, metav1.UpdateOptions{FieldManager: "probe"}); err != nil {
		t.Fatal(err)
	}
	review("110b-admission-review-validating-webhook-update", "/validate", 2, "an update")
	if err := cms.Delete(ctx, "w-2", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	review("110c-admission-review-validating-webhook-delete", "/validate", 3, "a delete")

	_, err = cms.Create(ctx, configMap("p-1", map[string]string{"deny": "policy"}), metav1.CreateOptions{})
	status("113-create-refused-by-validating-admission-policy", "### the Status a client gets when a ValidatingAdmissionPolicy refuses a create", err)
	return docs
}

func indent(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestProbe runs the probe on the workshop cluster and compares what it
// sends and answers with what kube-apiserver v1.37.2 did.
func TestProbe(t *testing.T) {
	leakcheck.Verify(t) // the plugins' goroutines end with the server
	_, c := start(t)
	w := newWebhook(t)
	install(t, c, w)
	for _, d := range scenario(t, c, w) {
		data, err := os.ReadFile(transcripts + d.name + ".txt")
		if err != nil {
			t.Fatal(err)
		}
		heading, want, _ := strings.Cut(string(data), "\n")
		if heading != d.heading {
			t.Errorf("%s: heading %q, want %q", d.name, d.heading, heading)
		}
		if diff := cmp.Diff(comparable(t, []byte(want)), comparable(t, d.json)); diff != "" {
			t.Errorf("%s (-kube-apiserver +workshop):\n%s", d.name, diff)
		}
	}
	// The mutating webhook's patch is in the object stored.
	cm, err := c.CoreV1().ConfigMaps(ns).Get(t.Context(), "m-1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if cm.Labels["mutated"] != "yes" {
		t.Errorf("m-1's labels %v: the webhook's patch is not applied", cm.Labels)
	}
	// A ConfigMap that no selector matches is sent to no webhook.
	before := len(w.requests("/validate")) + len(w.requests("/mutate"))
	if _, err := c.CoreV1().ConfigMaps(ns).Create(t.Context(), configMap("plain", nil), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if after := len(w.requests("/validate")) + len(w.requests("/mutate")); after != before {
		t.Errorf("a ConfigMap no selector matches was sent to %d webhooks", after-before)
	}
	// A server-side apply is admitted too: a create, then an update.
	apply := corev1apply.ConfigMap("applied", ns).WithLabels(map[string]string{"probe": "validate"})
	if _, err := c.CoreV1().ConfigMaps(ns).Apply(t.Context(), apply, metav1.ApplyOptions{FieldManager: "probe"}); err != nil {
		t.Fatal(err)
	}
	apply.WithLabels(map[string]string{"deny": "webhook"})
	if _, err := c.CoreV1().ConfigMaps(ns).Apply(t.Context(), apply, metav1.ApplyOptions{FieldManager: "probe"}); !apierrors.IsForbidden(err) {
		t.Errorf("an apply the webhook refuses: got %v, want 403", err)
	}
}

// comparable is a recorded JSON document less what differs between two
// servers at every run: what transcripttest.Norm replaces (uids, times,
// resourceVersions), and the user an AdmissionReview names (a workshop
// cluster has one user, workshop-admin).
func comparable(t *testing.T, b []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	n := transcripttest.Norm(v)
	if doc, ok := n.(map[string]any); ok {
		if req, ok := doc["request"].(map[string]any); ok && req["userInfo"] != nil {
			req["userInfo"] = "USER"
		}
	}
	return n
}

// TestNamespaceSelector: a webhook is sent the writes in the namespaces
// its namespaceSelector matches, as their labels are now: the plugins
// read namespaces as the store holds them.
func TestNamespaceSelector(t *testing.T) {
	_, c := start(t)
	w := newWebhook(t)
	ctx := t.Context()
	for _, name := range []string{"team-a", "team-b"} {
		n := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"team": name}}}
		if _, err := c.CoreV1().Namespaces().Create(ctx, n, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	cfg := &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "teams"},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			Name: "team.probe.example.com", ClientConfig: w.clientConfig("/team"),
			Rules: []admissionregistrationv1.RuleWithOperations{{Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
				Rule: admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}}}},
			SideEffects: ptr.To(admissionregistrationv1.SideEffectClassNone), AdmissionReviewVersions: []string{"v1"},
			NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"team": "team-a"}},
		}},
	}
	if _, err := c.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx, cfg, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	create := func(namespace, name string) {
		t.Helper()
		if _, err := c.CoreV1().ConfigMaps(namespace).Create(ctx, configMap(name, nil), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	create("team-a", "one")
	create("team-b", "two")
	if n := len(w.requests("/team")); n != 1 {
		t.Fatalf("the webhook was sent %d writes, want the one in team-a", n)
	}
	// team-b's label changes: its writes are sent from now on.
	nb, err := c.CoreV1().Namespaces().Get(ctx, "team-b", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	nb.Labels["team"] = "team-a"
	if _, err := c.CoreV1().Namespaces().Update(ctx, nb, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	create("team-b", "three")
	if n := len(w.requests("/team")); n != 2 {
		t.Errorf("the webhook was sent %d writes, want 2 once team-b matches", n)
	}
}

// TestWebhookCallsBack: a webhook that reads from the API server while
// it answers (as one that checks other objects does) is answered: the
// store is not locked while admission runs.
func TestWebhookCallsBack(t *testing.T) {
	_, c := start(t)
	ctx := t.Context()
	if _, err := c.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var listed atomic.Int64
	srv := httptest.NewTLSServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		var review admissionv1.AdmissionReview
		_ = json.NewDecoder(r.Body).Decode(&review)
		list, err := c.CoreV1().ConfigMaps(ns).List(r.Context(), metav1.ListOptions{})
		if err == nil {
			listed.Store(int64(len(list.Items)))
		}
		review.Response = &admissionv1.AdmissionResponse{UID: review.Request.UID, Allowed: err == nil}
		review.Request = nil
		_ = json.NewEncoder(rw).Encode(&review)
	}))
	t.Cleanup(srv.Close)
	w := &webhook{Server: srv}
	cfg := &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "reader"},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			Name: "reader.probe.example.com", ClientConfig: w.clientConfig("/"),
			Rules: []admissionregistrationv1.RuleWithOperations{{Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
				Rule: admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}}}},
			SideEffects: ptr.To(admissionregistrationv1.SideEffectClassNone), AdmissionReviewVersions: []string{"v1"},
			TimeoutSeconds: ptr.To[int32](2),
		}},
	}
	if _, err := c.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx, cfg, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"one", "two"} {
		if _, err := c.CoreV1().ConfigMaps(ns).Create(ctx, configMap(name, nil), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if n := listed.Load(); n != 1 {
		t.Errorf("the webhook listed %d ConfigMaps while the second was created, want 1", n)
	}
}

// TestFailurePolicy: a webhook that cannot be reached refuses the write
// with failurePolicy Fail (kube-apiserver's 500 "failed calling
// webhook"), and lets it through with Ignore.
func TestFailurePolicy(t *testing.T) {
	_, c := start(t)
	ctx := t.Context()
	if _, err := c.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	gone := newWebhook(t)
	gone.Close() // nothing listens at its url now
	for _, policy := range []admissionregistrationv1.FailurePolicyType{admissionregistrationv1.Fail, admissionregistrationv1.Ignore} {
		name := strings.ToLower(string(policy))
		cfg := &admissionregistrationv1.ValidatingWebhookConfiguration{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Webhooks: []admissionregistrationv1.ValidatingWebhook{{
				Name: name + ".probe.example.com", ClientConfig: gone.clientConfig("/"), FailurePolicy: &policy,
				Rules: []admissionregistrationv1.RuleWithOperations{{Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
					Rule: admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}}}},
				SideEffects: ptr.To(admissionregistrationv1.SideEffectClassNone), AdmissionReviewVersions: []string{"v1"},
				ObjectSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"policy": name}},
			}},
		}
		if _, err := c.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx, cfg, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	_, err := c.CoreV1().ConfigMaps(ns).Create(ctx, configMap("fail", map[string]string{"policy": "fail"}), metav1.CreateOptions{})
	if !apierrors.IsInternalError(err) || !strings.Contains(err.Error(), `failed calling webhook "fail.probe.example.com"`) {
		t.Errorf("failurePolicy Fail: got %v, want 500 failed calling webhook", err)
	}
	if _, err := c.CoreV1().ConfigMaps(ns).Create(ctx, configMap("ignore", map[string]string{"policy": "ignore"}), metav1.CreateOptions{}); err != nil {
		t.Errorf("failurePolicy Ignore: %v", err)
	}
}
