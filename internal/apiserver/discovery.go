package apiserver

import (
	"crypto/sha512"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"sort"
	"strconv"
	"strings"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Aggregated discovery: /api and /apis answered as one
// apidiscovery.k8s.io/v2 APIGroupDiscoveryList, every group-version with
// its resources, when the Accept header asks for it first. client-go's
// discovery client asks for it ahead of the legacy documents
// (discovery_client.go acceptDiscoveryFormats, "AcceptV2,AcceptV1") and
// then makes no request per group-version; a server that answers only
// the legacy documents makes it fall back to one request per
// group-version. kube-apiserver's side is k8s.io/apiserver
// pkg/endpoints/discovery/aggregated (WrappedHandler picks the answer
// from Accept; ServeHTTPWithETag writes it) and, per group-version,
// pkg/endpoints/installer.go ConvertGroupVersionIntoToDiscovery (built-in
// kinds) or apiextensions-apiserver's DiscoveryController (custom
// resources); transcript 83 records a custom resource's entry.

// aggregatedMediaType is what the answer's Content-Type says.
const aggregatedMediaType = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"

// wantsAggregated reports whether Accept asks for aggregated discovery
// before anything else the workshop cluster can send (kube-apiserver's
// NegotiateMediaTypeOptions with DiscoveryEndpointRestrictions): the
// first range it can serve decides. It serves the v2 list in JSON only,
// as client-go asks for it; the v2beta1 type is no longer served
// (feature AggregatedDiscoveryRemoveBetaType).
func wantsAggregated(accept string) bool {
	for _, part := range strings.Split(accept, ",") {
		mediaType, params, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		switch mediaType {
		case "application/json", "application/*", "*/*":
		default:
			continue
		}
		if params["as"] == "" {
			return false // the legacy document comes first
		}
		if params["g"] == "apidiscovery.k8s.io" && params["v"] == "v2" && params["as"] == "APIGroupDiscoveryList" {
			return true
		}
	}
	return false
}

// serveAggregated answers /api (legacy true: the core group) or /apis
// (every other group) as an APIGroupDiscoveryList, with
// ServeHTTPWithETag's headers: an ETag of the list (the SHA-512 of its
// JSON, calculateETag), Vary: Accept, Cache-Control: public, and 304 Not
// Modified when If-None-Match names the ETag.
func (s *Server) serveAggregated(w http.ResponseWriter, r *http.Request, legacy bool) {
	list := s.aggregatedDiscovery(legacy)
	body, err := json.Marshal(list)
	if err != nil {
		writeJSON(w, http.StatusInternalServerError, err.Error())
		return
	}
	etag := strconv.Quote(fmt.Sprintf("%X", sha512.Sum512(body)))
	w.Header().Set("ETag", etag)
	w.Header().Set("Vary", "Accept")
	w.Header().Set("Cache-Control", "public")
	if r.Header.Get("If-None-Match") == etag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	w.Header().Set("Content-Type", aggregatedMediaType)
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(append(body, '\n'))
}

// aggregatedDiscovery builds the list: the groups in the order /apis
// lists them, each group's versions preferred first, each version's
// resources sorted by name, freshness Current (the workshop cluster
// knows every group-version it serves, none is stale).
func (s *Server) aggregatedDiscovery(legacy bool) *apidiscoveryv2.APIGroupDiscoveryList {
	list := &apidiscoveryv2.APIGroupDiscoveryList{
		TypeMeta: metav1.TypeMeta{Kind: "APIGroupDiscoveryList", APIVersion: "apidiscovery.k8s.io/v2"},
		Items:    []apidiscoveryv2.APIGroupDiscovery{},
	}
	reg := s.store.reg
	seen := map[string]bool{}
	for _, res := range reg.all() {
		g := res.GVR.Group
		if seen[g] || (g == "") != legacy {
			continue
		}
		seen[g] = true
		group := apidiscoveryv2.APIGroupDiscovery{ObjectMeta: metav1.ObjectMeta{Name: g}}
		for _, v := range reg.groupVersions(g) {
			group.Versions = append(group.Versions, apidiscoveryv2.APIVersionDiscovery{
				Version:   v,
				Resources: s.resourcesDiscovery(g, v),
				Freshness: apidiscoveryv2.DiscoveryFreshnessCurrent,
			})
		}
		list.Items = append(list.Items, group)
	}
	return list
}

// resourcesDiscovery is one group-version's resources, as
// ConvertGroupVersionIntoToDiscovery turns the legacy APIResourceList
// into them (the legacy list sorted by path, as the installer registers
// it): a built-in kind's responseKind names its kind only, a
// subresource's too but where it takes another group's kind (scale's
// autoscaling/v1 Scale, pods/eviction's policy/v1 Eviction,
// serviceaccounts/token's authentication.k8s.io/v1 TokenRequest). A
// custom resource's entry is the DiscoveryController's: responseKind
// with group and version, status before scale (transcript 83).
func (s *Server) resourcesDiscovery(group, version string) []apidiscoveryv2.APIResourceDiscovery {
	var out []apidiscoveryv2.APIResourceDiscovery
	for _, res := range s.store.reg.all() {
		if res.GVR.Group != group || res.GVR.Version != version {
			continue
		}
		_, custom := res.New().(*unstructured.Unstructured)
		kind := &metav1.GroupVersionKind{Kind: res.Kind}
		if custom {
			kind = &metav1.GroupVersionKind{Group: group, Version: version, Kind: res.Kind}
		}
		scope := apidiscoveryv2.ScopeCluster
		if res.Namespaced {
			scope = apidiscoveryv2.ScopeNamespace
		}
		d := apidiscoveryv2.APIResourceDiscovery{
			Resource: res.GVR.Resource, ResponseKind: kind, Scope: scope,
			SingularResource: strings.ToLower(res.Kind), Verbs: res.verbs(), ShortNames: res.ShortNames,
		}
		for _, sub := range res.subresources() {
			k := &metav1.GroupVersionKind{Group: sub.kind.Group, Version: sub.kind.Version, Kind: sub.kind.Kind}
			if sub.kind.Group == "" && sub.kind.Version == "" && custom {
				k = kind
			}
			d.Subresources = append(d.Subresources, apidiscoveryv2.APISubresourceDiscovery{Subresource: sub.name, ResponseKind: k, Verbs: sub.verbs})
		}
		out = append(out, d)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Resource < out[j].Resource })
	return out
}

// verbs are the verbs discovery lists for the resource.
func (r *Resource) verbs() metav1.Verbs {
	if r.Hooks != nil && r.Hooks.Verbs != nil {
		return r.Hooks.Verbs
	}
	if r.DeleteCollection {
		return metav1.Verbs{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}
	}
	return metav1.Verbs{"create", "delete", "get", "list", "patch", "update", "watch"}
}

// subresource is one subresource of a resource as discovery lists it:
// its name, the kind it takes and answers (group and version empty when
// they are the resource's own), and its verbs.
type subresource struct {
	name  string
	kind  schema.GroupVersionKind
	verbs metav1.Verbs
}

// subresources are the subresources res serves, in discovery's order:
// by name (kube-apiserver's installer registers them sorted by path),
// but for a custom resource, whose status comes before its scale (the
// DiscoveryController's order, transcript 83).
func (r *Resource) subresources() []subresource {
	rw := metav1.Verbs{"get", "patch", "update"}
	own := schema.GroupVersionKind{Kind: r.Kind}
	scale := subresource{"scale", scaleResource.GroupVersionKind(), rw}
	var out []subresource
	if r.Approval != nil {
		out = append(out, subresource{"approval", own, rw})
	}
	if r.GVR == podsGVR {
		out = append(out, subresource{"binding", schema.GroupVersionKind{Kind: "Binding"}, metav1.Verbs{"create"}},
			subresource{"eviction", evictionResource.GroupVersionKind(), metav1.Verbs{"create"}})
	}
	_, custom := r.New().(*unstructured.Unstructured)
	if r.Scale && !custom {
		out = append(out, scale)
	}
	if r.StatusSubresource {
		out = append(out, subresource{"status", own, rw})
	}
	if r.Scale && custom {
		out = append(out, scale)
	}
	if r.GVR == serviceAccountsGVR {
		out = append(out, subresource{"token", tokenRequestResource.GroupVersionKind(), metav1.Verbs{"create"}})
	}
	return out
}
