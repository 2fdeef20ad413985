package crd

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// TestCRDUnservableUpdateStoresNothing: what may fail in serving a CRD
// is done before it is stored. An update whose served version would take
// the place of a built-in resource (names once accepted are not checked
// again) is refused with a 422, and the CRD stays as it was: no new
// resourceVersion, no watch event, the old version still served.
func TestCRDUnservableUpdateStoresNothing(t *testing.T) {
	c := newClient(t)
	// versions is v2 served, or v2 kept for storage and v1 served.
	crd := func(served string) []byte {
		versions := `{"name":"v2","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}}`
		if served == "v1" {
			versions = `{"name":"v2","served":false,"storage":true,"schema":{"openAPIV3Schema":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}},
{"name":"v1","served":true,"storage":false,"schema":{"openAPIV3Schema":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}}`
		}
		return []byte(`{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
"metadata":{"name":"ingresses.networking.k8s.io","annotations":{"api-approved.kubernetes.io":"unapproved, a test"}},
"spec":{"group":"networking.k8s.io","scope":"Namespaced","names":{"plural":"ingresses","singular":"ingress","kind":"Ingress","listKind":"IngressList"},
"versions":[` + versions + `]}}`)
	}
	const path = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
	if code, _, b := c.do(http.MethodPost, path, crd("v2"), ""); code != http.StatusCreated {
		t.Fatalf("create: HTTP %d: %s", code, b)
	}
	var stored struct {
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
		Status struct {
			Conditions []struct{ Type, Status string } `json:"conditions"`
		} `json:"status"`
	}
	get := func() {
		t.Helper()
		code, _, b := c.do(http.MethodGet, path+"/ingresses.networking.k8s.io", nil, "")
		if code != http.StatusOK {
			t.Fatalf("get: HTTP %d: %s", code, b)
		}
		if err := json.Unmarshal(b, &stored); err != nil {
			t.Fatal(err)
		}
	}
	get()
	if len(stored.Status.Conditions) != 2 || stored.Status.Conditions[1].Type != "Established" || stored.Status.Conditions[1].Status != "True" {
		t.Fatalf("v2 not established: %+v", stored.Status.Conditions)
	}
	rv := stored.Metadata.ResourceVersion

	resp, err := http.Get(c.s.URL() + path + "?watch=true&resourceVersion=" + rv)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	events := json.NewDecoder(resp.Body)

	code, _, b := c.do(http.MethodPut, path+"/ingresses.networking.k8s.io",
		[]byte(strings.Replace(string(crd("v1")), `"metadata":{`, `"metadata":{"resourceVersion":"`+rv+`",`, 1)), "")
	if code != http.StatusUnprocessableEntity || !strings.Contains(string(b), "spec.versions[1].name: Forbidden: the workshop cluster already serves networking.k8s.io/v1, Resource=ingresses") {
		t.Errorf("update onto a built-in resource: HTTP %d: %s", code, b)
	}
	get()
	if stored.Metadata.ResourceVersion != rv {
		t.Errorf("resourceVersion %s after a refused update, want %s", stored.Metadata.ResourceVersion, rv)
	}
	if code, _, b := c.do(http.MethodGet, "/apis/networking.k8s.io/v2/namespaces/capture-crd/ingresses", nil, ""); code != http.StatusOK {
		t.Errorf("v2 no longer served: HTTP %d: %s", code, b)
	}

	// The next event the watch sees is a later change, not the refused one.
	if code, _, b := c.do(http.MethodPatch, path+"/ingresses.networking.k8s.io", []byte(`{"metadata":{"labels":{"later":"yes"}}}`), ""); code != http.StatusOK {
		t.Fatalf("patch: HTTP %d: %s", code, b)
	}
	var ev struct {
		Type   string
		Object struct {
			Metadata struct{ Labels map[string]string } `json:"metadata"`
		}
	}
	if err := events.Decode(&ev); err != nil {
		t.Fatal(err)
	}
	if ev.Type != "MODIFIED" || ev.Object.Metadata.Labels["later"] != "yes" {
		t.Errorf("first event after the refused update: %+v", ev)
	}
}
