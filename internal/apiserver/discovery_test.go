package apiserver

import (
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	"k8s.io/client-go/discovery"
)

// seen records, from the client's side, each request's path and the
// Content-Type of its answer.
type seen struct {
	mu   sync.Mutex
	log  []string
	next http.RoundTripper
}

func (s *seen) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := s.next.RoundTrip(r)
	if err == nil {
		s.mu.Lock()
		s.log = append(s.log, r.URL.Path+" "+resp.Header.Get("Content-Type"))
		s.mu.Unlock()
	}
	return resp, err
}

// discover runs client-go's discovery client (legacy: as a client that
// asks for the legacy documents only) and returns what it found, one
// line per resource, and the requests it made.
func discover(t *testing.T, s *Server, legacy bool) ([]string, []string) {
	t.Helper()
	cfg := s.Config()
	tap := &seen{}
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper { tap.next = rt; return tap }
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	dc.UseLegacyDiscovery = legacy
	groups, lists, err := dc.ServerGroupsAndResources()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, g := range groups {
		out = append(out, "group "+g.Name+" preferred "+g.PreferredVersion.GroupVersion)
	}
	for _, l := range lists {
		for _, r := range l.APIResources {
			if strings.Contains(r.Name, "/") {
				// A subresource: the legacy documents give it no
				// singular name, client-go's conversion of aggregated
				// discovery gives it the parent's (convertAPISubresource).
				r.SingularName = ""
			}
			out = append(out, l.GroupVersion+" "+r.Name+" "+r.SingularName+" "+r.Kind+" "+r.Group+"/"+r.Version+
				" "+strings.Join(r.Verbs, ",")+" "+strings.Join(r.ShortNames, ",")+" "+map[bool]string{true: "namespaced"}[r.Namespaced])
		}
	}
	sort.Strings(out)
	return out, tap.log
}

// TestAggregatedDiscovery: client-go's discovery client gets every group
// and resource from /api and /apis in aggregated form, with no request
// per group-version and no fallback, and finds what the legacy documents
// list: the same resources, kinds, verbs and short names.
func TestAggregatedDiscovery(t *testing.T) {
	s := startServerWith(t, Options{})
	got, requests := discover(t, s, false)
	want := []string{
		"/api " + aggregatedMediaType,
		"/apis " + aggregatedMediaType,
	}
	if !slices.Equal(requests, want) {
		t.Errorf("requests:\n%s\nwant\n%s", strings.Join(requests, "\n"), strings.Join(want, "\n"))
	}
	legacy, requests := discover(t, s, true)
	if len(requests) < 3 || requests[0] != "/api application/json" {
		t.Errorf("legacy requests: %q", requests)
	}
	// The legacy documents leave a resource's group and version out; the
	// discovery client fills them in from aggregated discovery's
	// responseKind only where it names them (scale's autoscaling/v1).
	if diff := cmp.Diff(legacy, got); diff != "" {
		t.Errorf("aggregated discovery differs from legacy (-legacy +aggregated):\n%s", diff)
	}
	for _, line := range []string{
		"v1 pods pod Pod / create,delete,deletecollection,get,list,patch,update,watch po namespaced",
		"apps/v1 deployments/scale  Scale autoscaling/v1 get,patch,update  namespaced",
		"group apps preferred apps/v1",
	} {
		if !slices.Contains(got, line) {
			t.Errorf("missing %q", line)
		}
	}
}

// TestAggregatedDiscoveryHTTP: the answer's headers (transcript 83:
// Content-Type, Vary, Cache-Control, an ETag), 304 for a matching
// If-None-Match, and the legacy documents for an Accept that does not
// put aggregated discovery first.
func TestAggregatedDiscoveryHTTP(t *testing.T) {
	s := startServerWith(t, Options{})
	get := func(path, accept, etag string) (*http.Response, string) {
		req, _ := http.NewRequest(http.MethodGet, s.URL()+path, nil)
		req.Header.Set("Accept", accept)
		if etag != "" {
			req.Header.Set("If-None-Match", etag)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	const v2 = discovery.AcceptV2 + "," + discovery.AcceptV1
	resp, body := get("/apis", v2, "")
	h := resp.Header
	if resp.StatusCode != http.StatusOK || h.Get("Content-Type") != aggregatedMediaType || h.Get("Vary") != "Accept" ||
		h.Get("Cache-Control") != "public" || len(h.Get("ETag")) != 130 {
		t.Errorf("HTTP %d %v", resp.StatusCode, h)
	}
	if !strings.Contains(body, `"kind":"APIGroupDiscoveryList","apiVersion":"apidiscovery.k8s.io/v2"`) {
		t.Errorf("body: %.200s", body)
	}
	if resp, _ := get("/apis", v2, h.Get("ETag")); resp.StatusCode != http.StatusNotModified {
		t.Errorf("If-None-Match: HTTP %d, want 304", resp.StatusCode)
	}
	for _, accept := range []string{"application/json", discovery.AcceptV1 + "," + discovery.AcceptV2, "",
		"application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json"} {
		if resp, body := get("/api", accept, ""); resp.Header.Get("Content-Type") != "application/json" || !strings.Contains(body, `"kind":"APIVersions"`) {
			t.Errorf("Accept %q: %s %.100s", accept, resp.Header.Get("Content-Type"), body)
		}
	}
	// /api in aggregated form: the core group, named "".
	_, body = get("/api", v2, "")
	if !strings.Contains(body, `"items":[{"metadata":{},"versions":[{"version":"v1","resources":[`) {
		t.Errorf("/api: %.200s", body)
	}
}

// TestDiscoverySubresources: every subresource served is listed, in
// both discovery documents, as kube-apiserver v1.37.2 lists it (recorded
// from a real one: its entries for these resources, less the
// subresources the workshop cluster does not serve, such as pods/log).
func TestDiscoverySubresources(t *testing.T) {
	s := startServer(t)
	c := newClient(t, s)
	want := map[string]string{
		"pods":                       "binding:/Binding:create eviction:policy/v1/Eviction:create status:/Pod:get,patch,update",
		"serviceaccounts":            "token:authentication.k8s.io/v1/TokenRequest:create",
		"certificatesigningrequests": "approval:/CertificateSigningRequest:get,patch,update status:/CertificateSigningRequest:get,patch,update",
		"deployments":                "scale:autoscaling/v1/Scale:get,patch,update status:/Deployment:get,patch,update",
	}
	got := map[string]string{}
	for _, path := range []string{"/api", "/apis"} {
		req := c.newRequest(t.Context(), http.MethodGet, path, nil)
		req.Header.Set("Accept", aggregatedMediaType)
		resp, err := c.c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var list apidiscoveryv2.APIGroupDiscoveryList
		if err := json.NewDecoder(resp.Body).Decode(&list); err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		for _, g := range list.Items {
			for _, v := range g.Versions {
				for _, r := range v.Resources {
					if _, ok := want[r.Resource]; !ok {
						continue
					}
					var subs []string
					for _, sub := range r.Subresources {
						k := sub.ResponseKind
						gv := k.Group + "/" + k.Version
						if k.Group == "" && k.Version == "" {
							gv = ""
						}
						subs = append(subs, sub.Subresource+":"+gv+"/"+k.Kind+":"+strings.Join(sub.Verbs, ","))
					}
					got[r.Resource] = strings.Join(subs, " ")
				}
			}
		}
	}
	for r, w := range want {
		if got[r] != w {
			t.Errorf("aggregated %s:\n got %s\nwant %s", r, got[r], w)
		}
	}
	// The legacy list: pods/eviction names its group and version.
	list := c.mustDo(http.StatusOK, http.MethodGet, "/api/v1", nil)
	var eviction, token map[string]any
	for _, r := range list["resources"].([]any) {
		switch r := r.(map[string]any); r["name"] {
		case "pods/eviction":
			eviction = r
		case "serviceaccounts/token":
			token = r
		}
	}
	if eviction["group"] != "policy" || eviction["version"] != "v1" || eviction["kind"] != "Eviction" ||
		token["group"] != "authentication.k8s.io" || token["kind"] != "TokenRequest" {
		t.Errorf("legacy /api/v1: %v %v", eviction, token)
	}
}
