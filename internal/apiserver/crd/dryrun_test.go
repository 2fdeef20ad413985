package crd

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// gizmos makes the Gizmo CRD (testdata/gizmo-crd.json, versions v1beta1
// and v1) and one Gizmo g1 in namespace wt-29d.
func gizmos(t *testing.T) *client {
	t.Helper()
	c := newClient(t)
	c.do(http.MethodPost, "/api/v1/namespaces", []byte(`{"metadata":{"name":"wt-29d"}}`), "")
	crdJSON, err := os.ReadFile(filepath.Join("testdata", "gizmo-crd.json"))
	if err != nil {
		t.Fatal(err)
	}
	if code, _, body := c.do(http.MethodPost, crdsPath, crdJSON, ""); code != http.StatusCreated {
		t.Fatalf("CRD: HTTP %d: %s", code, body)
	}
	g1 := `{"apiVersion":"wt29d.example.com/v1","kind":"Gizmo","metadata":{"name":"g1"},"spec":{"color":"red","minReplicas":1,"maxReplicas":2}}`
	if code, _, body := c.do(http.MethodPost, gizmosV1, []byte(g1), ""); code != http.StatusCreated {
		t.Fatalf("g1: HTTP %d: %s", code, body)
	}
	return c
}

const (
	crdsPath      = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
	gizmosV1      = "/apis/wt29d.example.com/v1/namespaces/wt-29d/gizmos"
	gizmosV1beta1 = "/apis/wt29d.example.com/v1beta1/namespaces/wt-29d/gizmos"
)

// TestCRDDryRunDelete: a dry-run DELETE of a CRD answers what the
// DELETE would answer (the CRD marked for deletion: deletionTimestamp,
// the customresourcecleanup finalizer, a Terminating condition), a
// dry-run deletecollection of CRDs the list as listed, and neither
// changes anything: the CRD keeps its resourceVersion, its kind is still served
// and its objects stay, as kube-apiserver's CRD registry
// (apiextensions-apiserver registry/customresourcedefinition/etcd.go
// Delete) passes dryRun to its GuaranteedUpdate.
func TestCRDDryRunDelete(t *testing.T) {
	c := gizmos(t)
	const name = "gizmos.wt29d.example.com"
	type crd struct {
		Metadata struct {
			ResourceVersion   string   `json:"resourceVersion"`
			DeletionTimestamp *string  `json:"deletionTimestamp"`
			Finalizers        []string `json:"finalizers"`
		} `json:"metadata"`
		Status struct {
			Conditions []struct{ Type, Status string } `json:"conditions"`
		} `json:"status"`
	}
	get := func() crd {
		t.Helper()
		code, _, b := c.do(http.MethodGet, crdsPath+"/"+name, nil, "")
		if code != http.StatusOK {
			t.Fatalf("get CRD: HTTP %d: %s", code, b)
		}
		var out crd
		if err := json.Unmarshal(b, &out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	before := get()
	for _, path := range []string{crdsPath + "/" + name + "?dryRun=All", crdsPath + "?dryRun=All"} {
		code, _, b := c.do(http.MethodDelete, path, nil, "")
		if code != http.StatusOK {
			t.Fatalf("DELETE %s: HTTP %d: %s", path, code, b)
		}
		var answer crd
		if path == crdsPath+"?dryRun=All" {
			// A collection's DELETE answers the list as listed, before
			// the deletes (Store.DeleteCollection; transcript 132).
			var list struct{ Items []crd }
			if err := json.Unmarshal(b, &list); err != nil || len(list.Items) != 1 {
				t.Fatalf("DELETE %s: %v: %s", path, err, b)
			}
			if got := list.Items[0].Metadata; got.DeletionTimestamp != nil || got.ResourceVersion != before.Metadata.ResourceVersion {
				t.Errorf("DELETE %s: answer not the CRD as listed: %s", path, b)
			}
		} else if err := json.Unmarshal(b, &answer); err != nil {
			t.Fatal(err)
		}
		terminating := false
		for _, cond := range answer.Status.Conditions {
			terminating = terminating || cond.Type == "Terminating" && cond.Status == "True"
		}
		if path != crdsPath+"?dryRun=All" && (answer.Metadata.DeletionTimestamp == nil || len(answer.Metadata.Finalizers) != 1 ||
			answer.Metadata.Finalizers[0] != "customresourcecleanup.apiextensions.k8s.io" || !terminating) {
			t.Errorf("DELETE %s: answer not the marked CRD: %s", path, b)
		}
		after := get()
		if after.Metadata.ResourceVersion != before.Metadata.ResourceVersion || after.Metadata.DeletionTimestamp != nil {
			t.Errorf("DELETE %s: CRD changed: resourceVersion %s (was %s), deletionTimestamp %v",
				path, after.Metadata.ResourceVersion, before.Metadata.ResourceVersion, after.Metadata.DeletionTimestamp)
		}
		for _, p := range []string{gizmosV1 + "/g1", gizmosV1beta1 + "/g1"} {
			if code, _, b := c.do(http.MethodGet, p, nil, ""); code != http.StatusOK {
				t.Errorf("DELETE %s: then GET %s: HTTP %d: %s", path, p, code, b)
			}
		}
	}
}

// TestCRDApplyIntegers: a server-side apply of a custom resource whose
// schema has integer fields is stored, its CEL rules comparing them, and
// answers them as integers, pruned and defaulted as a create's body is
// (kube-apiserver's answer is decoded from what it stored).
func TestCRDApplyIntegers(t *testing.T) {
	c := gizmos(t)
	for _, name := range []string{"g1", "g2"} { // an update, a create
		body := "apiVersion: wt29d.example.com/v1\nkind: Gizmo\nmetadata:\n  name: " + name +
			"\nspec:\n  color: blue\n  minReplicas: 1\n  maxReplicas: 3\n  bogus: yes\n"
		req, err := http.NewRequest(http.MethodPatch, c.s.URL()+gizmosV1+"/"+name+"?fieldManager=alice&force=true", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/apply-patch+yaml")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusCreated {
			t.Fatalf("apply %s: HTTP %d: %s", name, resp.StatusCode, b)
		}
		var got struct{ Spec map[string]any }
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatal(err)
		}
		if got.Spec["maxReplicas"] != float64(3) || got.Spec["tier"] != "gold" || got.Spec["bogus"] != nil {
			t.Errorf("apply %s: spec %v, want maxReplicas 3, tier defaulted to gold, bogus pruned", name, got.Spec)
		}
		if !strings.Contains(string(b), `"maxReplicas":3,`) && !strings.Contains(string(b), `"maxReplicas":3}`) {
			t.Errorf("apply %s: maxReplicas not an integer: %s", name, b)
		}
	}
}

// TestCRDScaleKeepsOtherVersionsManagedFields: a scale write through one
// version of a CRD keeps the managedFields entries written through
// another (a version with the scale subresource, and one without), as
// apiextensions-apiserver maps every version's replicas path for
// ScaleHandler (replicasPathInCustomResource,
// pkg/apiserver/customresource_handler.go:706-724); the replicas the
// writer owned through the other version go to the scale's writer.
func TestCRDScaleKeepsOtherVersionsManagedFields(t *testing.T) {
	c := newClient(t)
	c.do(http.MethodPost, "/api/v1/namespaces", []byte(`{"metadata":{"name":"wt-29g"}}`), "")
	schema := `"schema":{"openAPIV3Schema":{"type":"object","properties":{"spec":{"type":"object","properties":{"replicas":{"type":"integer"},"color":{"type":"string"},"shape":{"type":"string"}}},"status":{"type":"object","properties":{"replicas":{"type":"integer"}}}}}}`
	scale := `"subresources":{"scale":{"specReplicasPath":".spec.replicas","statusReplicasPath":".status.replicas"}},`
	crd := `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"widgets.wt29g.example.com"},
"spec":{"group":"wt29g.example.com","scope":"Namespaced","names":{"plural":"widgets","singular":"widget","kind":"Widget","listKind":"WidgetList"},"versions":[
{"name":"v1alpha1","served":true,"storage":false,` + schema + `},
{"name":"v1beta1","served":true,"storage":false,` + scale + schema + `},
{"name":"v1","served":true,"storage":true,` + scale + schema + `}]}}`
	if code, _, body := c.do(http.MethodPost, crdsPath, []byte(crd), ""); code != http.StatusCreated {
		t.Fatalf("CRD: HTTP %d: %s", code, body)
	}
	const ns = "/apis/wt29g.example.com/%s/namespaces/wt-29g/widgets"
	if code, _, body := c.do(http.MethodPost, fmt.Sprintf(ns, "v1beta1"), []byte(`{"apiVersion":"wt29g.example.com/v1beta1","kind":"Widget","metadata":{"name":"w1"},"spec":{"replicas":1,"color":"red"}}`), ""); code != http.StatusCreated {
		t.Fatalf("create through v1beta1: HTTP %d: %s", code, body)
	}
	if code, _, body := c.do(http.MethodPatch, fmt.Sprintf(ns, "v1alpha1")+"/w1?fieldManager=alpha", []byte(`{"spec":{"shape":"round"}}`), ""); code != http.StatusOK {
		t.Fatalf("patch through v1alpha1: HTTP %d: %s", code, body)
	}
	if code, _, body := c.do(http.MethodPatch, fmt.Sprintf(ns, "v1")+"/w1/scale?fieldManager=scaler", []byte(`{"spec":{"replicas":3}}`), ""); code != http.StatusOK {
		t.Fatalf("scale through v1: HTTP %d: %s", code, body)
	}
	code, _, body := c.do(http.MethodGet, fmt.Sprintf(ns, "v1")+"/w1", nil, "")
	if code != http.StatusOK {
		t.Fatalf("get: HTTP %d: %s", code, body)
	}
	var got struct {
		Metadata struct {
			ManagedFields []struct {
				Manager, APIVersion, Subresource string
				FieldsV1                         map[string]any `json:"fieldsV1"`
			} `json:"managedFields"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatal(err)
	}
	var entries []string
	for _, e := range got.Metadata.ManagedFields {
		f, _ := json.Marshal(e.FieldsV1)
		entries = append(entries, e.Manager+" "+e.APIVersion+" "+e.Subresource+" "+string(f))
	}
	want := []string{
		// The scale write's entry has no time, so it sorts first
		// among the Updates (scale.go).
		`scaler wt29g.example.com/v1 scale {"f:spec":{"f:replicas":{}}}`,
		`alpha wt29g.example.com/v1alpha1  {"f:spec":{"f:shape":{}}}`,
		`curl wt29g.example.com/v1beta1  {"f:spec":{".":{},"f:color":{}}}`,
	}
	if d := cmp.Diff(want, entries); d != "" {
		t.Errorf("managedFields after the scale write (-want +got):\n%s", d)
	}
}

// TestCRDDryRunNonStorageVersion: a dry-run create or update through a
// version that is not the storage version answers what the write would
// answer: the object through the storage version and back, so pruned of
// what the storage version's schema lacks, as kube-apiserver's dry run
// encodes for storage and decodes what it would have stored.
func TestCRDDryRunNonStorageVersion(t *testing.T) {
	c := newClient(t)
	c.do(http.MethodPost, "/api/v1/namespaces", []byte(`{"metadata":{"name":"wt-29g"}}`), "")
	crd := `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"widgets.wt29g.example.com"},
"spec":{"group":"wt29g.example.com","scope":"Namespaced","names":{"plural":"widgets","singular":"widget","kind":"Widget","listKind":"WidgetList"},"versions":[
{"name":"v1beta1","served":true,"storage":false,"schema":{"openAPIV3Schema":{"type":"object","properties":{"spec":{"type":"object","properties":{"extra":{"type":"string"},"color":{"type":"string"}}}}}}},
{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object","properties":{"spec":{"type":"object","properties":{"color":{"type":"string"}}}}}}}]}}`
	if code, _, body := c.do(http.MethodPost, crdsPath, []byte(crd), ""); code != http.StatusCreated {
		t.Fatalf("CRD: HTTP %d: %s", code, body)
	}
	const path = "/apis/wt29g.example.com/v1beta1/namespaces/wt-29g/widgets"
	body := func(rv string) []byte {
		return []byte(`{"apiVersion":"wt29g.example.com/v1beta1","kind":"Widget","metadata":{"name":"w1"` + rv + `},"spec":{"extra":"x","color":"red"}}`)
	}
	spec := func(what string, b []byte) string {
		t.Helper()
		var got struct {
			Spec     map[string]any
			Metadata struct{ ResourceVersion string }
		}
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatalf("%s: %v: %s", what, err, b)
		}
		out, _ := json.Marshal(got.Spec)
		return string(out)
	}
	const want = `{"color":"red"}`
	code, _, b := c.do(http.MethodPost, path+"?dryRun=All", body(""), "")
	if code != http.StatusCreated || spec("dry-run create", b) != want {
		t.Errorf("dry-run create: HTTP %d: %s, want spec %s", code, b, want)
	}
	code, _, b = c.do(http.MethodPost, path, body(""), "")
	if code != http.StatusCreated || spec("create", b) != want {
		t.Fatalf("create: HTTP %d: %s, want spec %s", code, b, want)
	}
	code, _, b = c.do(http.MethodPut, path+"/w1?dryRun=All", body(""), "")
	if code != http.StatusOK || spec("dry-run update", b) != want {
		t.Errorf("dry-run update: HTTP %d: %s, want spec %s", code, b, want)
	}
}

// TestCRDSingleVersionHistoryAcrossUpdate: after a single-version CRD's
// spec changes (here a printer column), a watch and an exact list
// through the new resource from a resourceVersion before the change see
// the history written through the old one, as for a CRD with several
// versions: one storage, whatever serves it.
func TestCRDSingleVersionHistoryAcrossUpdate(t *testing.T) {
	c := newClient(t)
	c.do(http.MethodPost, "/api/v1/namespaces", []byte(`{"metadata":{"name":"wt-29g"}}`), "")
	crd := `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"things.wt29g.example.com"},
"spec":{"group":"wt29g.example.com","scope":"Namespaced","names":{"plural":"things","singular":"thing","kind":"Thing","listKind":"ThingList"},"versions":[
{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}}]}}`
	if code, _, body := c.do(http.MethodPost, crdsPath, []byte(crd), ""); code != http.StatusCreated {
		t.Fatalf("CRD: HTTP %d: %s", code, body)
	}
	const things = "/apis/wt29g.example.com/v1/namespaces/wt-29g/things"
	code, _, body := c.do(http.MethodPost, things, []byte(`{"apiVersion":"wt29g.example.com/v1","kind":"Thing","metadata":{"name":"t1"},"x":1}`), "")
	if code != http.StatusCreated {
		t.Fatalf("create: HTTP %d: %s", code, body)
	}
	var created struct {
		Metadata struct{ ResourceVersion string }
	}
	if err := json.Unmarshal(body, &created); err != nil {
		t.Fatal(err)
	}
	rv := created.Metadata.ResourceVersion
	if code, _, body := c.do(http.MethodPatch, things+"/t1", []byte(`{"x":2}`), ""); code != http.StatusOK {
		t.Fatalf("patch: HTTP %d: %s", code, body)
	}
	if code, _, body := c.do(http.MethodPatch, crdsPath+"/things.wt29g.example.com",
		[]byte(`{"spec":{"versions":[{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object","x-kubernetes-preserve-unknown-fields":true}},"additionalPrinterColumns":[{"name":"X","type":"integer","jsonPath":".x"}]}]}}`), ""); code != http.StatusOK {
		t.Fatalf("CRD update: HTTP %d: %s", code, body)
	}
	if code, _, body := c.do(http.MethodPatch, things+"/t1", []byte(`{"x":3}`), ""); code != http.StatusOK {
		t.Fatalf("patch after the CRD update: HTTP %d: %s", code, body)
	}

	code, _, body = c.do(http.MethodGet, things+"?resourceVersionMatch=Exact&resourceVersion="+rv, nil, "")
	var list struct{ Items []struct{ X float64 } }
	if err := json.Unmarshal(body, &list); code != http.StatusOK || err != nil || len(list.Items) != 1 || list.Items[0].X != 1 {
		t.Errorf("exact list at %s: HTTP %d: %s, want t1 with x 1", rv, code, body)
	}

	resp, err := http.Get(c.s.URL() + things + "?watch=true&resourceVersion=" + rv)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var ev struct {
		Type   string
		Object struct{ X float64 }
	}
	if err := json.NewDecoder(resp.Body).Decode(&ev); err != nil {
		t.Fatal(err)
	}
	if ev.Type != "MODIFIED" || ev.Object.X != 2 {
		t.Errorf("first event of a watch from %s: %s x=%v, want MODIFIED x=2 (the patch before the CRD update)", rv, ev.Type, ev.Object.X)
	}
}
