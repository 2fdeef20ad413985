package apiserver

import (
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/openapi3"
	"k8s.io/kube-openapi/pkg/spec3"

	"github.com/informer-walkthrough/informer-walkthrough/check/leakcheck"
)

// TestOpenAPI: the documents are found the way kubectl finds them
// (client-go's openapi3 root over discovery), describe every served kind,
// and offer fieldValidation on each kind's PATCH, which is what kubectl
// apply checks before it leaves validation to the server. The documents
// are kube-apiserver v1.36.3's (openapi-v3/ of the reference captures),
// filtered: every $ref must still resolve.
func TestOpenAPI(t *testing.T) {
	if leakcheck.RunApart(t) {
		return // it builds the OpenAPI models, while the tests that wait wait, apart from the other tests
	}
	s := startServer(t)
	dc, err := discovery.NewDiscoveryClientForConfig(s.Config())
	if err != nil {
		t.Fatal(err)
	}
	root := openapi3.NewRoot(dc.OpenAPIV3())
	gvs, err := root.GroupVersions()
	if err != nil {
		t.Fatal(err)
	}
	served := map[schema.GroupVersion]bool{}
	for _, res := range builtinResources() {
		served[res.GVR.GroupVersion()] = true
	}
	if len(gvs) != len(served) {
		t.Errorf("group-versions %v, want one per served group-version %v", gvs, served)
	}
	ref := regexp.MustCompile(`"\$ref":"#/components/schemas/([^"]+)"`)
	for _, res := range builtinResources() {
		gvk := res.GroupVersionKind()
		doc, err := root.GVSpec(gvk.GroupVersion())
		if err != nil {
			t.Fatalf("%s: %v", gvk, err)
		}
		if !hasKind(doc, gvk) {
			t.Errorf("%s: no schema", gvk)
		}
		if !patchTakes(doc, gvk, "fieldValidation") {
			t.Errorf("%s: no PATCH path taking fieldValidation", gvk)
		}
		b, _ := json.Marshal(doc)
		for _, m := range ref.FindAllSubmatch(b, -1) {
			if doc.Components.Schemas[string(m[1])] == nil {
				t.Errorf("%s: $ref %s does not resolve", gvk.GroupVersion(), m[1])
			}
		}
	}
	// The Scale kind of the scale subresource is in apps/v1.
	apps, _ := root.GVSpec(schema.GroupVersion{Group: "apps", Version: "v1"})
	if !hasKind(apps, schema.GroupVersionKind{Group: "autoscaling", Version: "v1", Kind: "Scale"}) {
		t.Error("apps/v1 lacks autoscaling/v1 Scale")
	}

	// Plain HTTP: gzip when asked, and a 404 for other documents.
	resp, err := http.Get(s.URL() + "/openapi/v3/apis/flowcontrol.apiserver.k8s.io/v1")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("flowcontrol.apiserver.k8s.io/v1: HTTP %d %s", resp.StatusCode, b)
	}
}

func hasKind(doc *spec3.OpenAPI, gvk schema.GroupVersionKind) bool {
	for _, s := range doc.Components.Schemas {
		var kinds []map[string]string
		if err := s.Extensions.GetObject("x-kubernetes-group-version-kind", &kinds); err != nil {
			continue
		}
		for _, k := range kinds {
			if k["group"] == gvk.Group && k["version"] == gvk.Version && k["kind"] == gvk.Kind {
				return true
			}
		}
	}
	return false
}

// patchTakes is what kubectl's QueryParamVerifierV3 looks for.
func patchTakes(doc *spec3.OpenAPI, gvk schema.GroupVersionKind, param string) bool {
	for _, p := range doc.Paths.Paths {
		op := p.Patch
		if op == nil {
			continue
		}
		var k map[string]string
		if err := op.Extensions.GetObject("x-kubernetes-group-version-kind", &k); err != nil ||
			k["group"] != gvk.Group || k["version"] != gvk.Version || k["kind"] != gvk.Kind {
			continue
		}
		for _, prm := range append(op.Parameters, p.Parameters...) {
			if prm.Name == param {
				return true
			}
		}
	}
	return false
}
