package crd

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
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

// TestCRDDryRunDelete: a dry-run DELETE of a CRD, or a dry-run
// deletecollection of CRDs, answers what the DELETE would answer (the
// CRD marked for deletion: deletionTimestamp, the
// customresourcecleanup finalizer, a Terminating condition) and changes
// nothing: the CRD keeps its resourceVersion, its kind is still served
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
			var list struct{ Items []crd }
			if err := json.Unmarshal(b, &list); err != nil || len(list.Items) != 1 {
				t.Fatalf("DELETE %s: %v: %s", path, err, b)
			}
			answer = list.Items[0]
		} else if err := json.Unmarshal(b, &answer); err != nil {
			t.Fatal(err)
		}
		terminating := false
		for _, cond := range answer.Status.Conditions {
			terminating = terminating || cond.Type == "Terminating" && cond.Status == "True"
		}
		if answer.Metadata.DeletionTimestamp == nil || len(answer.Metadata.Finalizers) != 1 ||
			answer.Metadata.Finalizers[0] != "customresourcecleanup.apiextensions.k8s.io" || !terminating {
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
