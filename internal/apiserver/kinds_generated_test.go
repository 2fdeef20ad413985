package apiserver

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestBuiltinKindsMatchOpenAPI: every row of zz_generated.kinds.go says
// what the embedded OpenAPI document of its group-version says of the
// resource (openapi/gen.go wrote both; a row added or changed by hand is
// checked the same way): its kind, whether it is namespaced, which of the
// status and scale subresources it has, and whether its collection takes
// a DELETE.
func TestBuiltinKindsMatchOpenAPI(t *testing.T) {
	docs, err := openAPIDocuments()
	if err != nil {
		t.Fatal(err)
	}
	paths := map[string]map[string]json.RawMessage{} // by document path
	for _, d := range docs {
		var doc struct {
			Paths map[string]json.RawMessage `json:"paths"`
		}
		if err := json.Unmarshal(d.json, &doc); err != nil {
			t.Fatalf("%s: %v", d.path, err)
		}
		paths[d.path] = doc.Paths
	}
	for _, k := range builtinKinds {
		docPath := "apis/" + k.group + "/" + k.version
		prefix := "/" + docPath
		if k.group == "" {
			docPath, prefix = "api/"+k.version, "/api/"+k.version
		}
		ps, ok := paths[docPath]
		if !ok {
			t.Errorf("%s: no embedded OpenAPI document %s (run openapi/gen.go)", k.resource, docPath)
			continue
		}
		collection := prefix + "/" + k.resource
		if k.namespaced {
			collection = prefix + "/namespaces/{namespace}/" + k.resource
		}
		item, ok := ps[collection+"/{name}"]
		if !ok {
			t.Errorf("%s/%s: no path %s/{name} in %s (namespaced: %v)", k.group, k.resource, collection, docPath, k.namespaced)
			continue
		}
		var get struct {
			Get struct {
				GVK struct{ Group, Version, Kind string } `json:"x-kubernetes-group-version-kind"`
			} `json:"get"`
		}
		if err := json.Unmarshal(item, &get); err != nil {
			t.Fatal(err)
		}
		if g := get.Get.GVK; g.Group != k.group || g.Version != k.version || g.Kind != k.kind {
			t.Errorf("%s/%s: row says %s/%s %s, the document %s/%s %s", k.group, k.resource, k.group, k.version, k.kind, g.Group, g.Version, g.Kind)
		}
		_, status := ps[collection+"/{name}/status"]
		_, scale := ps[collection+"/{name}/scale"]
		var coll struct {
			Delete json.RawMessage `json:"delete"`
		}
		if c, ok := ps[collection]; ok {
			if err := json.Unmarshal(c, &coll); err != nil {
				t.Fatal(err)
			}
		}
		if status != k.status || scale != k.scale || (coll.Delete != nil) != k.deleteCollection {
			t.Errorf("%s/%s: row says status %v scale %v deleteCollection %v, the document %v %v %v",
				k.group, k.resource, k.status, k.scale, k.deleteCollection, status, scale, coll.Delete != nil)
		}
		if strings.Contains(k.resource, "/") {
			t.Errorf("%s: a row names a resource, not a subresource", k.resource)
		}
	}
}
