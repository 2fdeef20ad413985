package apiserver

import (
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// A write's steps in kube-apiserver's order (store_admission.go). No
// transcript records these precedences: each test names the source line
// that decides it, in k8s.io/apiserver v0.37.2 and k8s.io/kubernetes
// v1.37.2.

// TestCreatePrecedence: which refusal a create gets when it has more than
// one reason to be refused.
func TestCreatePrecedence(t *testing.T) {
	s := startServer(t)
	c := newClient(t, s)
	c.mustDo(http.StatusCreated, "POST", "/api/v1/namespaces", map[string]any{"metadata": map[string]any{"name": "ns"}})
	c.mustDo(http.StatusCreated, "POST", "/api/v1/namespaces/ns/configmaps", map[string]any{"metadata": map[string]any{"name": "taken"}})
	pod := func(name string, containers ...any) map[string]any {
		return map[string]any{"metadata": map[string]any{"name": name}, "spec": map[string]any{"containers": containers}}
	}
	c.mustDo(http.StatusCreated, "POST", "/api/v1/namespaces/ns/pods", pod("taken", map[string]any{"name": "c", "image": "x"}))
	for _, tc := range []struct {
		what, path string
		body       map[string]any
		code       int
		reason     string
	}{{
		// The create handler checks the object's namespace against the
		// request's (handlers/create.go#L175) before admission runs
		// NamespaceLifecycle (#L203).
		what: "a namespace that does not match, in one that does not exist",
		path: "/api/v1/namespaces/missing/configmaps", body: map[string]any{"metadata": map[string]any{"name": "a", "namespace": "other"}},
		code: http.StatusBadRequest, reason: "BadRequest",
	}, {
		// Admission (#L203) before Store.Create's validation
		// (registry/store.go#L569).
		what: "an invalid name, in a namespace that does not exist",
		path: "/api/v1/namespaces/missing/configmaps", body: map[string]any{"metadata": map[string]any{"name": "Not_A_Name"}},
		code: http.StatusNotFound, reason: "NotFound",
	}, {
		// The validation (#L569) before storage's AlreadyExists (#L594).
		what: "an invalid object under a name that is taken",
		path: "/api/v1/namespaces/ns/pods", body: pod("taken"),
		code: http.StatusUnprocessableEntity, reason: "Invalid",
	}, {
		// etcd3's store.Create refuses a resourceVersion before its
		// transaction finds the key (storage/etcd3/store.go#L298).
		what: "a resourceVersion, under a name that is taken",
		path: "/api/v1/namespaces/ns/configmaps", body: map[string]any{"metadata": map[string]any{"name": "taken", "resourceVersion": "1"}},
		code: http.StatusInternalServerError, reason: "InternalError",
	}} {
		code, st := c.do("POST", tc.path, tc.body)
		if code != tc.code || str(st, "reason") != tc.reason {
			t.Errorf("%s: HTTP %d %s, want %d %s: %v", tc.what, code, str(st, "reason"), tc.code, tc.reason, st)
		}
	}
}

// TestNamespaceCreateStrategy: a namespace's labels and finalizers as
// kube-apiserver makes them: the kubernetes.io/metadata.name label from
// the defaults (owned by the writer, transcript 00) or, for a generated
// name, from the strategy's Canonicalize (owned by no one); the
// kubernetes finalizer added to those sent (namespace/strategy.go's
// PrepareForCreate); the label put back by an update that drops it (the
// defaults run on an update's body too).
func TestNamespaceCreateStrategy(t *testing.T) {
	s := startServer(t)
	cs := kubernetes.NewForConfigOrDie(s.Config())
	ctx := t.Context()
	ns, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "gen-"},
		Spec:       corev1.NamespaceSpec{Finalizers: []corev1.FinalizerName{"example.com/hold"}},
	}, metav1.CreateOptions{FieldManager: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if got := ns.Labels[corev1.LabelMetadataName]; got != ns.Name {
		t.Errorf("label %s = %q, want the generated name %q", corev1.LabelMetadataName, got, ns.Name)
	}
	if len(ns.ManagedFields) != 1 || strings.Contains(string(ns.ManagedFields[0].FieldsV1.Raw), "f:labels") {
		t.Errorf("managedFields %v, want the writer's, with no labels: no owner of a label the strategy added", ns.ManagedFields)
	}
	if want := []corev1.FinalizerName{"example.com/hold", corev1.FinalizerKubernetes}; !cmp.Equal(ns.Spec.Finalizers, want) {
		t.Errorf("finalizers %v, want %v", ns.Spec.Finalizers, want)
	}
	ns.Labels = map[string]string{"team": "a"}
	ns, err = cs.CoreV1().Namespaces().Update(ctx, ns, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]string{"team": "a", corev1.LabelMetadataName: ns.Name}; !cmp.Equal(ns.Labels, want) {
		t.Errorf("labels after an update that dropped it: %v, want %v", ns.Labels, want)
	}
}
