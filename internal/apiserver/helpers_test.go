package apiserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/informer-walkthrough/informer-walkthrough/check/leakcheck"
	"github.com/informer-walkthrough/informer-walkthrough/internal/apiserver/transcripttest"
)

// This file holds what the protocol tests share: the recorded transcripts
// of a real kube-apiserver v1.36.3 (testdata/transcripts, copied verbatim
// from the course's reference captures), a plain-HTTP client that asks for
// JSON as the recordings did (and, like them, is curl to the field
// manager), and the comparison that ignores only what cannot match (uids,
// timestamps and absolute resourceVersions).

// The transcripts and their comparison are package transcripttest's,
// shared with internal/apiserver/crd's tests.
type (
	exchange = transcripttest.Exchange
	frame    = transcripttest.Frame
)

// transcript reads testdata/transcripts/<name>.txt.
func transcript(t *testing.T, name string) []exchange {
	t.Helper()
	return transcripttest.Read(t, filepath.Join("testdata", "transcripts", name+".txt"))
}

var (
	norm        = transcripttest.Norm
	decodeToken = transcripttest.DecodeToken
)

// mentions reports whether a decoded JSON value has key anywhere.
func mentions(v any, key string) bool {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			if k == key || mentions(e, key) {
				return true
			}
		}
	case []any:
		for _, e := range v {
			if mentions(e, key) {
				return true
			}
		}
	}
	return false
}

// withoutServiceAccountAdmission returns a copy of a decoded JSON value
// whose pod specs have lost what admitServiceAccount adds: the "default"
// service account, the kube-api-access-… volume and its mounts.
func withoutServiceAccountAdmission(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range v {
			out[k] = withoutServiceAccountAdmission(e)
		}
		if _, isPodSpec := out["containers"]; !isPodSpec {
			return out
		}
		for _, k := range []string{"serviceAccountName", "serviceAccount"} {
			if out[k] == defaultServiceAccount {
				delete(out, k)
			}
		}
		out["volumes"] = withoutTokenVolume(out["volumes"], func(v map[string]any) bool { return true })
		for _, list := range []string{"initContainers", "containers"} {
			cs, _ := out[list].([]any)
			for _, c := range cs {
				c := c.(map[string]any)
				c["volumeMounts"] = withoutTokenVolume(c["volumeMounts"], func(m map[string]any) bool {
					return m["mountPath"] == serviceAccountMountPath
				})
				if c["volumeMounts"] == nil {
					delete(c, "volumeMounts")
				}
			}
		}
		if out["volumes"] == nil {
			delete(out, "volumes")
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = withoutServiceAccountAdmission(e)
		}
		return out
	}
	return v
}

// withoutTokenVolume drops the entries of a volumes or volumeMounts list
// named kube-api-access-… that also pass also; nil if none is left.
func withoutTokenVolume(list any, also func(map[string]any) bool) any {
	items, _ := list.([]any)
	var kept []any
	for _, it := range items {
		m := it.(map[string]any)
		if name, _ := m["name"].(string); strings.HasPrefix(name, serviceAccountVolume+"-") && also(m) {
			continue
		}
		kept = append(kept, it)
	}
	if len(kept) == 0 {
		return nil
	}
	return kept
}

// sameJSON fails the test if got and want differ after norm. A
// transcript recorded without the ServiceAccount admission plugin (every
// one from the v1.36.3 captures: that server had no controller-manager,
// so no "default" ServiceAccount, and its pods have no serviceAccountName,
// which the plugin always sets) is compared with the workshop's answer
// less what that plugin adds; TestServiceAccountAdmission checks what it
// adds.
func sameJSON(t *testing.T, what string, got, want any) {
	t.Helper()
	if !mentions(want, "serviceAccountName") {
		got = withoutServiceAccountAdmission(got)
	}
	if diff := cmp.Diff(norm(want), norm(got)); diff != "" {
		t.Errorf("%s differs from the transcript (-real +workshop):\n%s", what, diff)
	}
}

func decode(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, b)
	}
	return m
}

// str digs a string out of a decoded JSON object: str(obj, "metadata", "name").
func str(obj map[string]any, path ...string) string {
	var v any = obj
	for _, p := range path {
		m, _ := v.(map[string]any)
		v = m[p]
	}
	s, _ := v.(string)
	return s
}

// rvOfJSON is the metadata.resourceVersion of a decoded object as a number.
func rvOfJSON(t *testing.T, obj map[string]any) uint64 {
	t.Helper()
	rv, err := strconv.ParseUint(str(obj, "metadata", "resourceVersion"), 10, 64)
	if err != nil {
		t.Fatalf("no resourceVersion in %v", obj)
	}
	return rv
}

// startServer starts a workshop cluster that closes when the test ends,
// after which no goroutine of the test may remain.
func startServer(t *testing.T) *Server {
	t.Helper()
	return startServerWith(t, Options{})
}

func startServerWith(t *testing.T, opts Options) *Server {
	t.Helper()
	leakcheck.Verify(t) // registered first: runs last, after Close
	s, err := Start(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// client is a plain HTTP client of one server that asks for JSON, as the
// transcripts were recorded.
type client struct {
	t *testing.T
	s *Server
	c *http.Client
	// rvs maps a recording's resourceVersions to this server's, where a
	// test replays a recording (kinds_test.go).
	rvs map[string]string
}

func newClient(t *testing.T, s *Server) *client {
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	return &client{t: t, s: s, c: &http.Client{Transport: tr}}
}

func (c *client) newRequest(ctx context.Context, method, path string, body []byte) *http.Request {
	c.t.Helper()
	req, err := http.NewRequestWithContext(ctx, method, c.s.URL()+path, bytes.NewReader(body))
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "curl/8.11.1") // the transcripts' field manager
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return req
}

// do sends one request and returns the status code and the decoded body.
func (c *client) do(method, path string, body any) (int, map[string]any) {
	c.t.Helper()
	var b []byte
	switch body := body.(type) {
	case nil:
	case []byte:
		b = body
	default:
		var err error
		if b, err = json.Marshal(body); err != nil {
			c.t.Fatal(err)
		}
	}
	resp, err := c.c.Do(c.newRequest(context.Background(), method, path, b))
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		c.t.Fatal(err)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		c.t.Errorf("%s %s: Content-Type %q, want application/json", method, path, ct)
	}
	return resp.StatusCode, decode(c.t, out)
}

// mustDo is do for requests that must succeed with the given code.
func (c *client) mustDo(code int, method, path string, body any) map[string]any {
	c.t.Helper()
	got, obj := c.do(method, path, body)
	if got != code {
		c.t.Fatalf("%s %s: HTTP %d, want %d: %v", method, path, got, code, obj)
	}
	return obj
}

// stream is an open watch read line by line.
type stream struct {
	t      *testing.T
	resp   *http.Response
	cancel context.CancelFunc
	frames chan frame
	done   chan struct{} // closed when the reader goroutine has ended
	// closing is set when the test closes the stream: a read cut short
	// then may end in a partial line, which is not the server's.
	closing atomic.Bool
}

// watch opens a watch and checks the response head is what kube-apiserver
// sends (200, application/json, no-cache).
func (c *client) watch(path string) *stream {
	c.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	resp, err := c.c.Do(c.newRequest(ctx, http.MethodGet, path, nil))
	if err != nil {
		cancel()
		c.t.Fatal(err)
	}
	return c.stream(resp, cancel)
}

// stream reads the answer to a watch request.
func (c *client) stream(resp *http.Response, cancel context.CancelFunc) *stream {
	c.t.Helper()
	path := resp.Request.URL.RequestURI()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		cancel()
		c.t.Fatalf("GET %s: HTTP %d: %s", path, resp.StatusCode, b)
	}
	for k, want := range map[string]string{"Content-Type": "application/json", "Cache-Control": "no-cache, private"} {
		if got := resp.Header.Get(k); got != want {
			c.t.Errorf("GET %s: %s %q, want %q", path, k, got, want)
		}
	}
	st := &stream{t: c.t, resp: resp, cancel: cancel, frames: make(chan frame, 100), done: make(chan struct{})}
	go st.read()
	c.t.Cleanup(st.close)
	return st
}

func (st *stream) read() {
	defer close(st.done)
	defer close(st.frames)
	sc := bufio.NewScanner(st.resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var fr frame
		if err := json.Unmarshal(sc.Bytes(), &fr); err != nil {
			if st.closing.Load() {
				return
			}
			st.t.Errorf("watch frame is not one JSON event per line: %v: %q", err, sc.Text())
			return
		}
		st.frames <- fr
	}
}

// next returns the next event, failing the test if none comes in 5 s.
func (st *stream) next() frame {
	st.t.Helper()
	select {
	case fr, ok := <-st.frames:
		if !ok {
			st.t.Fatal("watch stream ended early")
		}
		return fr
	case <-time.After(5 * time.Second):
		st.t.Fatal("no watch event within 5 s")
	}
	return frame{}
}

// rest returns every event up to the end of the stream, failing the test
// if the stream does not end in 5 s.
func (st *stream) rest() []frame {
	st.t.Helper()
	var out []frame
	timeout := time.After(5 * time.Second)
	for {
		select {
		case fr, ok := <-st.frames:
			if !ok {
				return out
			}
			out = append(out, fr)
		case <-timeout:
			st.t.Fatalf("watch stream did not end within 5 s (read %d events)", len(out))
		}
	}
}

func (st *stream) close() {
	st.closing.Store(true)
	st.cancel()
	st.resp.Body.Close()
	for range st.frames {
	}
	<-st.done
}

// shape lists "TYPE name" for each event, the shape of a watch stream.
func shape(frames []frame) []string {
	out := make([]string, len(frames))
	for i, fr := range frames {
		out[i] = fr.Type + " " + str(fr.Object, "metadata", "name")
	}
	return out
}

// namespacesResource is the namespaces resource of every server.
func namespacesResource() *Resource { return builtinRegistry().lookup(namespacesGVR) }
