package crd

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	apiextensionsfeatures "k8s.io/apiextensions-apiserver/pkg/features"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/dynamic"
	"k8s.io/component-base/featuregate"
)

// TestCRDRealK8s replays what kube-apiserver v1.37.2 answered
// (testdata/realk8s, recorded by testdata/record.sh) for a CRD with CEL
// rules, selectableFields and two served versions:
//   - 96: CRDs refused for rules that do not compile, a selectable field
//     the schema lacks, and a messageExpression over the cost limit;
//   - 97, 98: the Gizmo CRD made, its two versions discovered (v1
//     preferred, v1beta1 listed, one storageVersionHash);
//   - 99, 100: CEL rules on create (message, messageExpression,
//     reason, fieldPath) and on update (transition rules with oldSelf,
//     on the status subresource too); a type error blocks the rules;
//   - 101, 102: the CRD tightened, an update that leaves the now invalid
//     field as it was is let through (ratcheting), one that changes it
//     is not;
//   - 103: a Gizmo written through v1beta1 is read through v1 and the
//     other way round, each version pruning and defaulting with its own
//     schema; v1beta1 has no status subresource;
//   - 104: field selectors on the selectable fields of v1, refused on
//     v1beta1, which declares none, and for a field that is not
//     selectable; a watch with one;
//   - 105: the CRD deleted.
func TestCRDRealK8s(t *testing.T) {
	c := newClient(t)
	c.do(http.MethodPost, "/api/v1/namespaces", []byte(`{"metadata":{"name":"wt-29d"}}`), "")
	for _, name := range []string{
		"96-crd-cel-uncompilable",
		"97-crd-gizmos-create",
		"98-crd-gizmos-discovery",
		"99-cr-cel-create-422",
		"100-cr-cel-transition",
		"101-crd-tighten",
		"102-cr-ratcheting",
		"103-cr-versions",
		"104-cr-selectable-fields",
		"105-crd-delete",
	} {
		c.replay("realk8s/" + name)
	}
}

// TestCRDVersionsShareStorage: a watch through one version sees what is
// written through the other, in its own version and pruned with its own
// schema; a version no longer served leaves the objects to the others,
// and serving it again shows them; conversion strategy Webhook is still
// refused (the workshop cluster calls no webhooks; kube-apiserver
// accepts such a CRD).
func TestCRDVersionsShareStorage(t *testing.T) {
	c := newClient(t)
	c.do(http.MethodPost, "/api/v1/namespaces", []byte(`{"metadata":{"name":"wt-29d"}}`), "")
	crdJSON, err := os.ReadFile(filepath.Join("testdata", "gizmo-crd.json"))
	if err != nil {
		t.Fatal(err)
	}
	if code, _, body := c.do(http.MethodPost, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crdJSON, ""); code != http.StatusCreated {
		t.Fatalf("CRD: HTTP %d: %s", code, body)
	}
	dyn, err := dynamic.NewForConfig(c.s.Config())
	if err != nil {
		t.Fatal(err)
	}
	v1 := dyn.Resource(schema.GroupVersionResource{Group: "wt29d.example.com", Version: "v1", Resource: "gizmos"}).Namespace("wt-29d")
	v1beta1 := dyn.Resource(schema.GroupVersionResource{Group: "wt29d.example.com", Version: "v1beta1", Resource: "gizmos"}).Namespace("wt-29d")
	ctx := context.Background()
	w, err := v1beta1.Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	g := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "wt29d.example.com/v1", "kind": "Gizmo",
		"metadata": map[string]any{"name": "g1"},
		"spec":     map[string]any{"color": "red", "mode": "fast", "minReplicas": int64(1), "maxReplicas": int64(2)},
	}}
	if _, err := v1.Create(ctx, g, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	ev := <-w.ResultChan()
	got := ev.Object.(*unstructured.Unstructured)
	if ev.Type != watch.Added || got.GetAPIVersion() != "wt29d.example.com/v1beta1" {
		t.Fatalf("v1beta1 watch: %s %s, want ADDED wt29d.example.com/v1beta1", ev.Type, got.GetAPIVersion())
	}
	if spec := got.Object["spec"].(map[string]any); spec["mode"] != nil || spec["tier"] != "gold" {
		t.Errorf("v1beta1 watch: spec %v, want mode pruned (v1beta1 has none) and v1's default tier gold", spec)
	}

	// v1beta1 no longer served: its objects are v1's, and stay.
	patch := `{"spec":{"versions":[{"name":"v1beta1","served":false,"storage":false,"schema":{"openAPIV3Schema":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}},` +
		`{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}}]}}`
	if code, _, body := c.do(http.MethodPatch, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gizmos.wt29d.example.com", []byte(patch), ""); code != http.StatusOK {
		t.Fatalf("CRD patch: HTTP %d: %s", code, body)
	}
	if _, err := v1beta1.Get(ctx, "g1", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("v1beta1 no longer served: %v, want NotFound", err)
	}
	if _, err := v1.Get(ctx, "g1", metav1.GetOptions{}); err != nil {
		t.Errorf("v1 after v1beta1 stopped: %v", err)
	}
	served := strings.Replace(patch, `"served":false`, `"served":true`, 1)
	if code, _, body := c.do(http.MethodPatch, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gizmos.wt29d.example.com", []byte(served), ""); code != http.StatusOK {
		t.Fatalf("CRD patch: HTTP %d: %s", code, body)
	}
	if got, err := v1beta1.Get(ctx, "g1", metav1.GetOptions{}); err != nil || got.GetAPIVersion() != "wt29d.example.com/v1beta1" {
		t.Errorf("v1beta1 served again: %v, %v", got, err)
	}

	// Conversion strategy Webhook: refused.
	webhook := strings.Replace(string(crdJSON), `"gizmos.wt29d.example.com"`, `"doodads.wt29d.example.com"`, 1)
	webhook = strings.NewReplacer(`"plural":"gizmos"`, `"plural":"doodads"`, `"singular":"gizmo"`, `"singular":"doodad"`, `"kind":"Gizmo"`, `"kind":"Doodad"`, `"listKind":"GizmoList"`, `"listKind":"DoodadList"`).Replace(webhook)
	webhook = strings.Replace(webhook, `"scope":"Namespaced",`, `"scope":"Namespaced","conversion":{"strategy":"Webhook","webhook":{"conversionReviewVersions":["v1"],"clientConfig":{"url":"https://example.com/convert"}}},`, 1)
	code, _, body := c.do(http.MethodPost, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", []byte(webhook), "")
	if code != http.StatusUnprocessableEntity || !strings.Contains(string(body), `spec.conversion.strategy: Unsupported value: \"Webhook\": supported values: \"None\"`) {
		t.Errorf("Webhook conversion: HTTP %d: %s", code, body)
	}
}

// TestFeatureGates: what kube-apiserver v1.37 does by default, the
// library does here too: ratcheting (CRDValidationRatcheting, GA since
// 1.33 and locked on) and field selectors on custom resources
// (CustomResourceFieldSelectors, GA since 1.32), per
// k8s.io/apiextensions-apiserver v0.37.2 pkg/features/kube_features.go.
func TestFeatureGates(t *testing.T) {
	for _, f := range []featuregate.Feature{apiextensionsfeatures.CRDValidationRatcheting, apiextensionsfeatures.CustomResourceFieldSelectors} {
		if !utilfeature.DefaultFeatureGate.Enabled(f) {
			t.Errorf("%s is off", f)
		}
	}
}
