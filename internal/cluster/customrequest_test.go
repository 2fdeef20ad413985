package cluster

import (
	"net/http/httptest"
	"testing"
)

// TestLogRequestPlacesCustomResources: a request for a custom resource,
// which apiserver.NewRequest cannot place, gets its verb and resource
// from the path, as kube-apiserver's RequestInfoFactory reads it;
// discovery still gets none, and built-in kinds are NewRequest's.
func TestLogRequestPlacesCustomResources(t *testing.T) {
	const memos = "/apis/course.example.com/v1alpha1/namespaces/ns/memos"
	for _, tc := range []struct {
		method, target, verb, resource string
	}{
		{"GET", memos, "list", "memos.course.example.com"},
		{"GET", memos + "?watch=true", "watch", "memos.course.example.com"},
		{"GET", memos + "/lunch", "get", "memos.course.example.com"},
		{"POST", memos, "create", "memos.course.example.com"},
		{"PUT", memos + "/lunch", "update", "memos.course.example.com"},
		{"PUT", memos + "/lunch/status", "update", "memos.course.example.com"},
		{"PATCH", memos + "/lunch", "patch", "memos.course.example.com"},
		{"DELETE", memos + "/lunch", "delete", "memos.course.example.com"},
		{"DELETE", memos + "?labelSelector=a%3Db", "deletecollection", "memos.course.example.com"},
		{"GET", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/memos.course.example.com",
			"get", "customresourcedefinitions.apiextensions.k8s.io"},
		{"GET", "/apis/course.example.com/v1alpha1", "", ""}, // discovery
		{"GET", "/api/v1/namespaces/ns/pods", "list", "pods"},
	} {
		got := logRequest(httptest.NewRequest(tc.method, tc.target, nil))
		if got.Verb != tc.verb || got.Resource != tc.resource {
			t.Errorf("%s %s: verb %q resource %q, want %q %q",
				tc.method, tc.target, got.Verb, got.Resource, tc.verb, tc.resource)
		}
	}
}
