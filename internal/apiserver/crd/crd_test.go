package crd

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	"k8s.io/client-go/discovery"

	"github.com/informer-walkthrough/informer-walkthrough/internal/apiserver"
	"github.com/informer-walkthrough/informer-walkthrough/internal/apiserver/transcripttest"
)

// Each test replays what a real kube-apiserver v1.36.3 answered
// (../testdata/transcripts 80-90, recorded with a CRD widgets.example.com)
// and compares the workshop cluster's answers with the recorded ones,
// uids, timestamps and resourceVersions aside.

// transcript reads ../testdata/transcripts/<name>.txt (package
// transcripttest, shared with internal/apiserver's tests).
func transcript(t *testing.T, name string) []transcripttest.Exchange {
	t.Helper()
	path := filepath.Join("..", "testdata", "transcripts", name+".txt")
	if strings.HasPrefix(name, "realk8s/") { // recorded by testdata/record.sh
		path = filepath.Join("testdata", name+".txt")
	}
	return transcripttest.Read(t, path)
}

// client talks to one workshop cluster with CRDs served.
type client struct {
	t   *testing.T
	s   *apiserver.Server
	rvs map[string]string // recorded resourceVersion -> the workshop's
}

func newClient(t *testing.T) *client {
	t.Helper()
	s, err := apiserver.Start(apiserver.Options{
		Extend: Serve,
		Now:    func() time.Time { return time.Date(2026, time.November, 24, 23, 19, 25, 0, time.UTC) },
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	c := &client{t: t, s: s, rvs: map[string]string{}}
	c.do(http.MethodPost, "/api/v1/namespaces", []byte(`{"metadata":{"name":"capture-crd"}}`), "")
	return c
}

func (c *client) do(method, path string, body []byte, accept string) (int, http.Header, []byte) {
	c.t.Helper()
	req, err := http.NewRequest(method, c.s.URL()+path, bytes.NewReader(body))
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("User-Agent", "curl/8.5.0")
	req.Header.Set("Content-Type", "application/json")
	if method == http.MethodPatch {
		req.Header.Set("Content-Type", "application/merge-patch+json")
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		c.t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, b
}

// replay sends a transcript's requests and compares the answers.
func (c *client) replay(name string) [][]byte {
	c.t.Helper()
	var answers [][]byte
	for i, ex := range transcript(c.t, name) {
		if strings.Contains(ex.Path, "watch=true") {
			c.watch(name, ex)
			continue
		}
		code, _, got := c.do(ex.Method, ex.Path, ex.Request, "")
		if code != ex.Code {
			c.t.Fatalf("%s #%d %s %s: HTTP %d, want %d: %s", name, i, ex.Method, ex.Path, code, ex.Code, got)
		}
		c.same(name+" "+ex.Method+" "+ex.Path, got, ex.Body)
		answers = append(answers, got)
	}
	return answers
}

// watch opens a recorded watch, reads as many frames as were recorded
// and compares each.
func (c *client) watch(name string, ex transcripttest.Exchange) {
	c.t.Helper()
	resp, err := http.Get(c.s.URL() + ex.Path)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != ex.Code {
		c.t.Fatalf("%s %s: HTTP %d, want %d", name, ex.Path, resp.StatusCode, ex.Code)
	}
	dec := json.NewDecoder(resp.Body)
	for i, fr := range ex.Events {
		var got json.RawMessage
		if err := dec.Decode(&got); err != nil {
			c.t.Fatalf("%s frame %d: %v", name, i, err)
		}
		want, _ := json.Marshal(fr)
		c.same(fmt.Sprintf("%s frame %d", name, i), got, want)
	}
}

// same compares two JSON documents after norm.
func (c *client) same(what string, got, want []byte) {
	c.t.Helper()
	if !json.Valid(want) {
		if string(got) != string(want)+"\n" && string(got) != string(want) {
			c.t.Errorf("%s: %q, want %q", what, got, want)
		}
		return
	}
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		c.t.Fatalf("%s: not JSON: %s", what, got)
	}
	_ = json.Unmarshal(want, &w)
	g, w = unordered(c.t, g), unordered(c.t, w)
	if diff := cmp.Diff(transcripttest.Norm(w), transcripttest.Norm(g)); diff != "" {
		c.t.Errorf("%s differs from the transcript (-real +workshop):\n%s", what, diff)
	}
}

// unordered makes a Status's causes comparable: kube-openapi's
// validator reports a schema's properties in map order, so their order
// varies from one request to the next on kube-apiserver too. The causes
// are sorted, and the message, which lists them in that order, is
// checked to name each and then left out.
func unordered(t *testing.T, v any) any {
	m, ok := v.(map[string]any)
	if !ok || m["kind"] != "Status" {
		return v
	}
	details, _ := m["details"].(map[string]any)
	causes, _ := details["causes"].([]any)
	if len(causes) < 2 {
		return v
	}
	msg, _ := m["message"].(string)
	for _, c := range causes {
		c := c.(map[string]any)
		if part := fmt.Sprintf("%s: %s", c["field"], c["message"]); !strings.Contains(msg, part) {
			t.Errorf("message %q does not name %q", msg, part)
		}
	}
	sort.Slice(causes, func(i, j int) bool {
		return fmt.Sprint(causes[i]) < fmt.Sprint(causes[j])
	})
	m["message"] = "<causes>"
	return m
}

// TestCRDLifecycle: a CRD is created (80) and Established (81), its kind
// is discovered (82); a Widget is pruned and defaulted (84), refused with
// kube-apiserver's 422 (85), written through its status (86) and scale
// (87) subresources, printed with the CRD's columns (88) and watch-listed
// (89b); deleting the CRD stops serving it (90).
func TestCRDLifecycle(t *testing.T) {
	c := newClient(t)
	c.replay("80-crd-create")
	c.replay("81-crd-established")
	c.replay("82-crd-discovery")
	c.aggregatedEntry(true)
	c.replay("84-cr-create-defaulted-pruned")
	c.replay("85-cr-validation-422")
	c.replay("86-cr-status-subresource")
	c.replay("87-cr-scale-subresource")
	// kubectl get widgets: the CRD's printer columns (88).
	table := transcript(t, "88-cr-table")[0]
	_, _, got := c.do(http.MethodGet, "/apis/example.com/v1/namespaces/capture-crd/widgets", nil,
		"application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json")
	c.same("88-cr-table", got, table.Body)
	c.replay("89b-cr-watchlist-later")
	c.replay("90-crd-delete")
	c.aggregatedEntry(false)
}

// aggregatedEntry: /apis in aggregated discovery, as client-go's
// discovery client asks for it, has the example.com group exactly as
// transcript 83 recorded it (only that entry was kept), with the
// recorded Content-Type, Vary and Cache-Control; served says whether the
// CRD is.
func (c *client) aggregatedEntry(served bool) {
	c.t.Helper()
	rec := transcript(c.t, "83-crd-aggregated-discovery-entry")[0]
	code, h, body := c.do(http.MethodGet, "/apis", nil, discovery.AcceptV2+","+discovery.AcceptV1)
	if code != rec.Code || h.Get("Content-Type") != "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList" ||
		h.Get("Vary") != "Accept" || h.Get("Cache-Control") != "public" || h.Get("ETag") == "" {
		c.t.Errorf("/apis aggregated: HTTP %d %v", code, h)
	}
	var list apidiscoveryv2.APIGroupDiscoveryList
	if err := json.Unmarshal(body, &list); err != nil {
		c.t.Fatal(err)
	}
	var entry []apidiscoveryv2.APIGroupDiscovery
	for _, g := range list.Items {
		if g.Name == "example.com" {
			entry = append(entry, g)
		}
	}
	if !served {
		if len(entry) != 0 {
			c.t.Errorf("example.com still in aggregated discovery: %v", entry)
		}
		return
	}
	list.Items = entry
	got, _ := json.Marshal(list)
	c.same("83-crd-aggregated-discovery-entry", got, rec.Body)
}
