package cluster

import (
	"net/http"
	"strings"

	"github.com/informer-walkthrough/informer-walkthrough/internal/apiserver"
)

// logRequest describes a request as the request log and the trace's wire
// lane record it: apiserver.NewRequest for the built-in kinds, and, for a
// path it cannot place (a custom resource, which only the server's table
// of CRDs knows), the verb and resource read from the path itself, as
// kube-apiserver's RequestInfoFactory reads any /apis path:
// /apis/GROUP/VERSION[/namespaces/NS]/RESOURCE[/NAME[/SUBRESOURCE]].
// Discovery and /version still have no verb.
func logRequest(r *http.Request) apiserver.Request {
	return PlaceRequest(apiserver.NewRequest(r))
}

// PlaceRequest is logRequest for a request the server logged: it fills
// in the verb and resource of a request for a custom resource.
func PlaceRequest(req apiserver.Request) apiserver.Request {
	if req.Verb != "" {
		return req
	}
	parts := strings.Split(strings.Trim(req.Path, "/"), "/")
	if len(parts) < 4 || parts[0] != "apis" {
		return req
	}
	group, rest := parts[1], parts[3:]
	if len(rest) >= 3 && rest[0] == "namespaces" {
		rest = rest[2:]
	}
	if len(rest) == 0 || len(rest) > 3 {
		return req
	}
	named := len(rest) >= 2
	switch r := req; {
	case r.Method == http.MethodGet && !named && r.Query.Get("watch") == "true":
		req.Verb = "watch"
	case r.Method == http.MethodGet && named:
		req.Verb = "get"
	case r.Method == http.MethodGet:
		req.Verb = "list"
	case r.Method == http.MethodPost && !named:
		req.Verb = "create"
	case r.Method == http.MethodPut && named:
		req.Verb = "update"
	case r.Method == http.MethodPatch && named:
		req.Verb = "patch"
	case r.Method == http.MethodDelete && named:
		req.Verb = "delete"
	case r.Method == http.MethodDelete:
		req.Verb = "deletecollection"
	default:
		return req
	}
	req.Resource = rest[0] + "." + group
	return req
}
