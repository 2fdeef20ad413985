package crd

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
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
// and serving it again shows them; a CRD of conversion strategy Webhook
// is served, and what needs converting fails while its webhook is down.
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

	// Conversion strategy Webhook: served, its converter calling the
	// webhook (examples/widget-controller's TestWidgetConversion has a
	// controller-runtime one). This one refuses every ConversionReview:
	// what is stored in v1 is read through v1, and not through v1beta1
	// (kube-apiserver's converter's error, answered 500).
	var reviews []apiextensionsv1.ConversionReview
	var mu sync.Mutex
	hook := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var review apiextensionsv1.ConversionReview
		if err := json.NewDecoder(r.Body).Decode(&review); err != nil || review.Request == nil {
			http.Error(w, "not a ConversionReview", http.StatusBadRequest)
			return
		}
		mu.Lock()
		reviews = append(reviews, review)
		mu.Unlock()
		review.Response = &apiextensionsv1.ConversionResponse{UID: review.Request.UID,
			Result: metav1.Status{Status: metav1.StatusFailure, Message: "doodads are not converted here"}}
		review.Request = nil
		_ = json.NewEncoder(w).Encode(review)
	}))
	defer hook.Close()
	caBundle := base64.StdEncoding.EncodeToString(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: hook.Certificate().Raw}))
	webhook := strings.Replace(string(crdJSON), `"gizmos.wt29d.example.com"`, `"doodads.wt29d.example.com"`, 1)
	webhook = strings.NewReplacer(`"plural":"gizmos"`, `"plural":"doodads"`, `"singular":"gizmo"`, `"singular":"doodad"`, `"kind":"Gizmo"`, `"kind":"Doodad"`, `"listKind":"GizmoList"`, `"listKind":"DoodadList"`).Replace(webhook)
	webhook = strings.Replace(webhook, `"scope":"Namespaced",`, `"scope":"Namespaced","conversion":{"strategy":"Webhook","webhook":{"conversionReviewVersions":["v1"],"clientConfig":{"url":"`+hook.URL+`/convert","caBundle":"`+caBundle+`"}}},`, 1)
	if code, _, body := c.do(http.MethodPost, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", []byte(webhook), ""); code != http.StatusCreated {
		t.Fatalf("Webhook conversion CRD: HTTP %d: %s", code, body)
	}
	d := `{"apiVersion":"wt29d.example.com/v1","kind":"Doodad","metadata":{"name":"d1"},"spec":{"color":"red","minReplicas":1,"maxReplicas":2}}`
	if code, _, body := c.do(http.MethodPost, "/apis/wt29d.example.com/v1/namespaces/wt-29d/doodads", []byte(d), ""); code != http.StatusCreated {
		t.Errorf("v1 create, stored as it is: HTTP %d: %s", code, body)
	}
	if code, _, body := c.do(http.MethodGet, "/apis/wt29d.example.com/v1/namespaces/wt-29d/doodads/d1", nil, ""); code != http.StatusOK {
		t.Errorf("v1 get: HTTP %d: %s", code, body)
	}
	mu.Lock()
	if len(reviews) != 0 {
		t.Errorf("the webhook was called %d times for v1, the storage version", len(reviews))
	}
	mu.Unlock()
	for path, want := range map[string]string{
		"/apis/wt29d.example.com/v1beta1/namespaces/wt-29d/doodads/d1": `"message":"Internal error occurred: StorageError: corrupt object, Code: 7, Key: /wt29d.example.com/doodads/wt-29d/d1, ResourceVersion: 0, AdditionalErrorMsg: object not decodable revision=`,
		"/apis/wt29d.example.com/v1beta1/namespaces/wt-29d/doodads":    `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"conversion webhook for wt29d.example.com/v1, Kind=Doodad failed: doodads are not converted here","code":500}`,
	} {
		if code, _, body := c.do(http.MethodGet, path, nil, ""); code != http.StatusInternalServerError || !strings.Contains(string(body), want) ||
			!strings.Contains(string(body), "conversion webhook for wt29d.example.com/v1, Kind=Doodad failed: doodads are not converted here") {
			t.Errorf("GET %s, webhook refusing: HTTP %d: %s\nwant 500: %s", path, code, body, want)
		}
	}
	// What the webhook was sent: the stored object, without its
	// resourceVersion (kube-apiserver converts what etcd holds), to be
	// converted to v1beta1.
	mu.Lock()
	if len(reviews) != 2 {
		t.Fatalf("the webhook was sent %d ConversionReviews, want 2", len(reviews))
	}
	for _, r := range reviews {
		var obj map[string]any
		if len(r.Request.Objects) == 1 {
			_ = json.Unmarshal(r.Request.Objects[0].Raw, &obj)
		}
		meta, _ := obj["metadata"].(map[string]any)
		if r.Request.DesiredAPIVersion != "wt29d.example.com/v1beta1" || obj["apiVersion"] != "wt29d.example.com/v1" || meta["name"] != "d1" || meta["resourceVersion"] != nil {
			t.Errorf("ConversionReview: to %s, objects %s", r.Request.DesiredAPIVersion, r.Request.Objects)
		}
	}
	mu.Unlock()
	d1beta1 := strings.NewReplacer(`/v1"`, `/v1beta1"`, `"d1"`, `"d2"`).Replace(d)
	if code, _, body := c.do(http.MethodPost, "/apis/wt29d.example.com/v1beta1/namespaces/wt-29d/doodads", []byte(d1beta1), ""); code != http.StatusInternalServerError ||
		!strings.Contains(string(body), `"message":"conversion webhook for wt29d.example.com/v1beta1, Kind=Doodad failed: doodads are not converted here"`) {
		t.Errorf("v1beta1 create, webhook refusing: HTTP %d: %s", code, body)
	}
	if code, _, body := c.do(http.MethodGet, "/apis/wt29d.example.com/v1/namespaces/wt-29d/doodads/d2", nil, ""); code != http.StatusNotFound {
		t.Errorf("v1beta1 create refused, yet stored: HTTP %d: %s", code, body)
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
