package apiserver

import (
	"testing"
)

// TestNameValidationPerKind: metadata.name is checked as each kind's
// kube-apiserver validation checks it, answered word for word as
// kube-apiserver v1.37.2 answered (hack/realk8s): the RBAC kinds take any
// path segment (ValidateRBACName: "clusterRole-10", "Role:X", "RB_1"), a
// Service's name is a DNS-1123 label (no dots, may start with a digit),
// a ConfigMap's a DNS-1123 subdomain. Found by controller-runtime's
// pkg/client suite (NamespacedClient, cluster-scoped "clusterRole-10"),
// run against the workshop cluster with USE_EXISTING_CLUSTER.
func TestNameValidationPerKind(t *testing.T) {
	s := startServer(t)
	c := newClient(t, s)
	c.mustDo(201, "POST", "/api/v1/namespaces", map[string]any{"metadata": map[string]any{"name": "names"}})
	rbac := "/apis/rbac.authorization.k8s.io/v1"
	svc := func(name string) map[string]any {
		return map[string]any{"metadata": map[string]any{"name": name}, "spec": map[string]any{"ports": []any{map[string]any{"port": 80}}}}
	}
	meta := func(name string) map[string]any { return map[string]any{"metadata": map[string]any{"name": name}} }
	roleRef := func(name string) map[string]any {
		m := meta(name)
		m["roleRef"] = map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "x"}
		return m
	}
	for _, tc := range []struct {
		path string
		body map[string]any
		want string // "" for created
	}{
		{rbac + "/clusterroles", meta("clusterRole-10"), ""},
		{rbac + "/namespaces/names/roles", meta("Role:X"), ""},
		{rbac + "/namespaces/names/rolebindings", roleRef("RB_1"), ""},
		{rbac + "/clusterroles", meta("a%b"), `ClusterRole.rbac.authorization.k8s.io "a%b" is invalid: metadata.name: Invalid value: "a%b": may not contain '%'`},
		{rbac + "/clusterroles", meta(".."), `ClusterRole.rbac.authorization.k8s.io ".." is invalid: metadata.name: Invalid value: "..": may not be '..'`},
		{"/api/v1/namespaces/names/services", svc("1svc"), ""},
		{"/api/v1/namespaces/names/services", svc("my.svc"), `Service "my.svc" is invalid: metadata.name: Invalid value: "my.svc": must not contain dots`},
		{"/api/v1/namespaces/names/services", svc("My"), `Service "My" is invalid: metadata.name: Invalid value: "My": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`},
		{"/api/v1/namespaces/names/configmaps", meta("Cm"), `ConfigMap "Cm" is invalid: metadata.name: Invalid value: "Cm": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`},
	} {
		code, got := c.do("POST", tc.path, tc.body)
		name := tc.body["metadata"].(map[string]any)["name"]
		switch {
		case tc.want == "" && code != 201:
			t.Errorf("POST %s %q: %d %v, want 201", tc.path, name, code, got["message"])
		case tc.want != "" && (code != 422 || got["message"] != tc.want):
			t.Errorf("POST %s %q: %d %v\nwant 422 %s", tc.path, name, code, got["message"], tc.want)
		}
	}
}
