package apiserver

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/informer-walkthrough/informer-walkthrough/check/leakcheck"
)

// The protocol tests replay, against the workshop cluster, the requests
// recorded from a real kube-apiserver v1.36.3 (testdata/transcripts) and
// compare the answers: Status bodies exactly; objects, lists and watch
// events field by field, managedFields included, except uids and
// timestamps (see norm); resourceVersions by what they mean rather than their value (see
// capture.real).

// capture is a workshop cluster that replays the session the transcripts
// were recorded in: namespace "capture" and pods web-1, web-2 and db-1,
// created with the very requests of transcripts 00 and 01.
type capture struct {
	*client
	// real maps a recorded resourceVersion to the workshop cluster's
	// resourceVersion of the same write. The numbers differ (a real
	// cluster has other writers); what they point at must not.
	real map[string]uint64
	// settings is configmap "settings" once createSettings made it.
	settings map[string]any
	// changed is the last recorded change made (see change).
	changed int
}

func newCapture(t *testing.T) *capture {
	t.Helper()
	// The recording's clock: requests replayed from it (a status update,
	// say) carry its timestamps, which must not read as changes.
	recorded := time.Date(2026, time.November, 22, 6, 56, 42, 0, time.UTC)
	s := startServerWith(t, Options{Now: func() time.Time { return recorded }})
	c := &capture{client: newClient(t, s), real: map[string]uint64{}}
	// The recordings asked for resourceVersions 1 and 300, from before the
	// namespace existed; here the namespace is the first write.
	c.real["1"], c.real["300"] = 1, 1
	rv := 346
	for _, name := range []string{"00-create-namespace", "01-create-pods"} {
		for _, ex := range transcript(t, name) {
			c.step(ex.Code, ex.Method, ex.Path, ex.Request, rv)
			rv++
		}
	}
	return c
}

// step sends a request that must succeed and maps the recorded
// resourceVersions of the writes it makes (in order) to the new ones.
// Without writes it is a request the recordings did not make.
func (c *capture) step(code int, method, path string, body any, writes ...int) map[string]any {
	c.t.Helper()
	before := c.rv()
	answer := c.mustDo(code, method, path, body)
	if len(writes) > 0 {
		c.wrote(before, writes)
	}
	return answer
}

// wrote checks that the writes since before are exactly the recorded ones
// (one resourceVersion each, from the global counter) and maps them.
func (c *capture) wrote(before uint64, writes []int) {
	c.t.Helper()
	if got := c.rv() - before; got != uint64(len(writes)) {
		c.t.Fatalf("%d writes, want %d (recorded resourceVersions %v)", got, len(writes), writes)
	}
	for i, rv := range writes {
		c.real[strconv.Itoa(rv)] = before + uint64(i) + 1
	}
}

func (c *capture) rv() uint64 {
	rv, _ := strconv.ParseUint(c.s.ResourceVersion(), 10, 64)
	return rv
}

const pods = "/api/v1/namespaces/capture/pods/"

// edit reads an object, changes it and writes it back with PUT (to path
// plus subresource), as the recordings did with curl.
func (c *capture) edit(path, subresource string, change func(obj map[string]any), writes ...int) map[string]any {
	c.t.Helper()
	obj := c.mustDo(http.StatusOK, http.MethodGet, path, nil)
	change(obj)
	return c.step(http.StatusOK, http.MethodPut, path+subresource, obj, writes...)
}

// labelsOf returns an object's labels, to change them in place.
func labelsOf(obj map[string]any) map[string]any {
	md := obj["metadata"].(map[string]any)
	if md["labels"] == nil {
		md["labels"] = map[string]any{}
	}
	return md["labels"].(map[string]any)
}

// change makes the recorded changes not made yet up to resourceVersion
// through, the ones transcript 12 watched (350 to 355).
func (c *capture) change(through int) {
	c.t.Helper()
	steps := []struct {
		rv int
		do func(rv int)
	}{
		{350, func(rv int) { c.edit(pods+"web-1", "", func(p map[string]any) { labelsOf(p)["tier"] = "front" }, rv) }},
		{351, func(rv int) { // the status subresource (transcript 14)
			c.edit(pods+"web-1", "/status", func(p map[string]any) { p["status"].(map[string]any)["phase"] = "Running" }, rv)
		}},
		{352, func(rv int) { c.edit(pods+"web-2", "", func(p map[string]any) { labelsOf(p)["app"] = "other" }, rv) }},
		{353, func(rv int) { c.edit(pods+"db-1", "", func(p map[string]any) { labelsOf(p)["app"] = "web" }, rv) }},
		{354, func(rv int) { c.step(http.StatusOK, http.MethodDelete, pods+"web-2", nil, rv, rv+1) }}, // transcript 15
	}
	for _, s := range steps {
		if c.changed < s.rv && s.rv <= through {
			s.do(s.rv)
			c.changed = s.rv
		}
	}
}

// Requests and bodies of later recordings (27 to 40).
const (
	configMaps = "/api/v1/namespaces/capture/configmaps/"
	tmpPod     = `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"tmp-1"},"spec":{"schedulingGates":[{"name":"walkthrough/hold"}],"containers":[{"name":"c","image":"x"}]}}`
)

// createSettings creates configmap "settings" with transcript 27's request.
func (c *capture) createSettings() {
	c.t.Helper()
	ex := transcript(c.t, "27-configmap-create")[0]
	c.settings = c.step(ex.Code, ex.Method, ex.Path, ex.Request, 363)
}

// mapPath rewrites the recorded resourceVersion (and the one inside a
// recorded continue token) to the workshop cluster's.
func (c *capture) mapPath(path string) string {
	u, err := url.Parse(path)
	if err != nil {
		c.t.Fatal(err)
	}
	q := u.Query()
	if rv, ok := c.real[q.Get("resourceVersion")]; ok {
		q.Set("resourceVersion", fmt.Sprint(rv))
	}
	if tok := q.Get("continue"); tok != "" {
		q.Set("continue", c.mapToken(tok))
	}
	u.RawQuery = q.Encode()
	return u.String()
}

func (c *capture) mapToken(tok string) string {
	m := decodeToken(tok)
	rv, ok := c.real[fmt.Sprint(m["rv"])]
	if !ok {
		c.t.Fatalf("continue token %v: no mapped resourceVersion", m)
	}
	m["rv"] = rv
	b, _ := json.Marshal(m)
	return base64.RawURLEncoding.EncodeToString(b)
}

// mapBody rewrites the metadata.resourceVersion of a recorded request body.
func (c *capture) mapBody(body []byte) any {
	if body == nil {
		return nil
	}
	obj := decode(c.t, body)
	if md, ok := obj["metadata"].(map[string]any); ok {
		if rv, ok := c.real[fmt.Sprint(md["resourceVersion"])]; ok {
			md["resourceVersion"] = fmt.Sprint(rv)
		}
	}
	return obj
}

// sameRVs checks that an answer's resourceVersion, and its items', are the
// workshop cluster's for the recorded ones.
func (c *capture) sameRVs(t *testing.T, what string, got, want map[string]any) {
	t.Helper()
	check := func(what string, got, want map[string]any) {
		t.Helper()
		rec := str(want, "metadata", "resourceVersion")
		if rec == "" {
			return
		}
		mapped, ok := c.real[rec]
		if !ok {
			t.Errorf("%s: recorded resourceVersion %s is not mapped", what, rec)
			return
		}
		if g := str(got, "metadata", "resourceVersion"); g != fmt.Sprint(mapped) {
			t.Errorf("%s: resourceVersion %s, want %d (recorded %s)", what, g, mapped, rec)
		}
	}
	check(what, got, want)
	gotItems, _ := got["items"].([]any)
	wantItems, _ := want["items"].([]any)
	for i, w := range wantItems {
		if i < len(gotItems) {
			check(fmt.Sprintf("%s item %d", what, i), gotItems[i].(map[string]any), w.(map[string]any))
		}
	}
}

// TestCreate replays the creation of the namespace and the pods: the
// defaults kube-apiserver fills in, deterministic uids and timestamps, and
// resourceVersions counted from 1.
// transcript 00-create-namespace, 01-create-pods
func TestCreate(t *testing.T) {
	c := newClient(t, startServer(t))
	want := uint64(1)
	for _, name := range []string{"00-create-namespace", "01-create-pods"} {
		for _, ex := range transcript(t, name) {
			code, got := c.do(ex.Method, ex.Path, ex.Request)
			if code != ex.Code {
				t.Errorf("%s: HTTP %d, want %d", name, code, ex.Code)
			}
			sameJSON(t, name, got, decode(t, ex.Body))
			if rv := rvOfJSON(t, got); rv != want {
				t.Errorf("%s: resourceVersion %d, want %d", name, rv, want)
			}
			if uid := str(got, "metadata", "uid"); uid != string(nthUID(want)) {
				t.Errorf("%s: uid %s", name, uid)
			}
			if ts := str(got, "metadata", "creationTimestamp"); ts != FixedTime.Format(time.RFC3339) {
				t.Errorf("%s: creationTimestamp %s, want the fixed clock", name, ts)
			}
			want++
		}
	}
}

// TestRequests replays one recorded request per behaviour and compares the
// answer. before brings the cluster to the recorded state; writes lists
// the recorded resourceVersions of the writes the request makes (none for
// a refused request: an error never writes).
func TestRequests(t *testing.T) {
	for _, tc := range []struct {
		transcript string
		before     func(c *capture)
		writes     []int
		path       func(c *capture) string // when the recorded path cannot be sent as is
		want       func(c *capture, want map[string]any)
		check      func(t *testing.T, c *capture, got map[string]any)
	}{
		// Create of an existing name: 409 AlreadyExists.
		{transcript: "02-create-duplicate-409"},
		// List: sorted by name, at the current resourceVersion.
		{transcript: "03-list", check: listAtCurrentRV},
		// limit: a continue token {"v","rv","start"} and remainingItemCount.
		{transcript: "04-list-limit", check: func(t *testing.T, c *capture, got map[string]any) {
			listAtCurrentRV(t, c, got)
			tok := decodeToken(str(got, "metadata", "continue"))
			if fmt.Sprint(tok["rv"]) != c.s.ResourceVersion() || tok["start"] != "/web-1\x00" || tok["v"] != "meta.k8s.io/v1" {
				t.Errorf("continue token %v", tok)
			}
		}},
		// continue (the recorded token, its rv mapped): the rest, at the
		// token's resourceVersion.
		{transcript: "05-list-continue"},
		// resourceVersion=0: any recent state; here the current one.
		{transcript: "06-list-rv0", check: listAtCurrentRV},
		{transcript: "07-list-labelselector"},
		{transcript: "08-list-fieldselector"},
		// An unsupported field selector: 400 BadRequest.
		{transcript: "09-list-bad-fieldselector"},
		{transcript: "10-get-notfound"},
		// PUT with a stale resourceVersion: 409 Conflict.
		{transcript: "11-update-stale-409"},
		// PUT of the status subresource.
		{transcript: "14-update-status", before: func(c *capture) { c.change(350) }, writes: []int{351}},
		// DELETE of a pod on no node: the pod, at the DELETED resourceVersion.
		{transcript: "15-delete", before: func(c *capture) { c.change(353) }, writes: []int{354, 355}},
		// Watch-list without resourceVersionMatch: 422 before any stream.
		{transcript: "19-watchlist-missing-rvmatch"},
		// A list from a resourceVersion not reached yet: 504 ResourceVersionTooLarge.
		{transcript: "23-list-future-rv", want: func(c *capture, want map[string]any) {
			want["message"] = "Timeout: Too large resource version: 99999999, current: " + c.s.ResourceVersion()
		}},
		// resourceVersionMatch=Exact: the list as it was then.
		{transcript: "24-list-exact-old-rv"},
		{transcript: "35-list-exact-rv-before-namespace-existed"},
		// A continue token is a consistent snapshot: web-2 as it was when
		// the token was made, though it has changed and gone since.
		{
			transcript: "36-list-continue-after-etcd-compaction",
			before:     func(c *capture) { c.change(355) },
			path: func(c *capture) string {
				return "/api/v1/namespaces/capture/pods?limit=1&continue=" + c.mapToken(recordedToken(c, "04-list-limit"))
			},
		},
		{transcript: "27-configmap-create", writes: []int{363}},
		// A cluster-scoped resource: no namespace; the not-ready taint.
		{transcript: "28-node-create", writes: []int{364}},
		{transcript: "29-node-list", before: func(c *capture) {
			ex := transcript(c.t, "28-node-create")[0]
			c.step(ex.Code, ex.Method, ex.Path, ex.Request, 364)
		}},
		// apps/v1 defaults, the pod template's included.
		{transcript: "30-deployment-create", writes: []int{366}},
		// An invalid name: 422 Invalid with details.causes.
		{transcript: "31-create-invalid-422"},
		{transcript: "32-list-bad-labelselector"},
		{transcript: "33-delete-notfound"},
		// DELETE with gracePeriodSeconds 0: the pod, marked, at the DELETED rv.
		{
			transcript: "39-delete-pod-grace0-response",
			before:     func(c *capture) { c.step(http.StatusCreated, http.MethodPost, pods, []byte(tmpPod), 384) },
			writes:     []int{385, 386},
		},
		// DELETE of a configmap: a Status Success naming it.
		{
			transcript: "40-delete-configmap-response",
			before:     func(c *capture) { c.createSettings() },
			writes:     []int{388},
			check: func(t *testing.T, c *capture, got map[string]any) {
				if uid := str(got, "details", "uid"); uid != str(c.settings, "metadata", "uid") {
					t.Errorf("details.uid %s, want the configmap's", uid)
				}
			},
		},
	} {
		t.Run(tc.transcript, func(t *testing.T) {
			c := newCapture(t)
			if tc.before != nil {
				tc.before(c)
			}
			for _, ex := range transcript(t, tc.transcript) {
				var path string
				if tc.path != nil {
					path = tc.path(c)
				} else {
					path = c.mapPath(ex.Path)
				}
				before := c.rv()
				code, got := c.do(ex.Method, path, c.mapBody(ex.Request))
				if code != ex.Code {
					t.Errorf("%s %s: HTTP %d, want %d", ex.Method, path, code, ex.Code)
				}
				c.wrote(before, tc.writes)
				want := decode(t, ex.Body)
				if tc.want != nil {
					tc.want(c, want)
				}
				sameJSON(t, "answer", got, want)
				c.sameRVs(t, "answer", got, want)
				if tc.check != nil {
					tc.check(t, c, got)
				}
			}
		})
	}
}

// listAtCurrentRV: a list's resourceVersion is the store's current one,
// not that of its newest item (transcript 03).
func listAtCurrentRV(t *testing.T, c *capture, got map[string]any) {
	t.Helper()
	if rv := str(got, "metadata", "resourceVersion"); rv != c.s.ResourceVersion() {
		t.Errorf("list resourceVersion %s, want the current %s", rv, c.s.ResourceVersion())
	}
}

// recordedToken is the continue token a recorded answer carried.
func recordedToken(c *capture, name string) string {
	return str(decode(c.t, transcript(c.t, name)[0].Body), "metadata", "continue")
}

// TestListRV0IsWhole: a LIST at resourceVersion=0 is answered whole, as
// kube-apiserver answers it from its watch cache: limit=1 is ignored, no
// continue token, no remainingItemCount, with or without
// resourceVersionMatch=NotOlderThan; without a resourceVersion the same
// limit=1 pages. The namespace's objects are made from the recorded
// answer (kube-root-ca.crt is kube-controller-manager's there); the
// recording left managedFields out of the items.
// transcript 06b-list-rv0-limit-ignored
func TestListRV0IsWhole(t *testing.T) {
	s := startServer(t)
	c := newClient(t, s)
	const ns = "/api/v1/namespaces/capture-limit/configmaps"
	c.mustDo(http.StatusCreated, http.MethodPost, "/api/v1/namespaces",
		map[string]any{"metadata": map[string]any{"name": "capture-limit"}})
	exchanges := transcript(t, "06b-list-rv0-limit-ignored")
	for _, it := range decode(t, exchanges[0].Body)["items"].([]any) {
		md := it.(map[string]any)["metadata"].(map[string]any)
		for _, k := range []string{"uid", "resourceVersion", "creationTimestamp"} {
			delete(md, k)
		}
		c.mustDo(http.StatusCreated, http.MethodPost, ns, it)
	}
	for _, ex := range exchanges {
		// The recording kept the answers' bodies only, each a
		// ConfigMapList: a 200.
		code, got := c.do(ex.Method, ex.Path, nil)
		if code != http.StatusOK {
			t.Errorf("%s: HTTP %d, want 200", ex.Path, code)
		}
		for _, it := range got["items"].([]any) {
			delete(it.(map[string]any)["metadata"].(map[string]any), "managedFields")
		}
		sameJSON(t, ex.Path, got, decode(t, ex.Body))
		if rv := str(got, "metadata", "resourceVersion"); rv != s.ResourceVersion() {
			t.Errorf("%s: list resourceVersion %s, want the current %s", ex.Path, rv, s.ResourceVersion())
		}
	}
}

// TestWatches opens each recorded watch and compares the stream: the event
// types and objects in order, and their resourceVersions. before brings the
// cluster to the recorded state; during makes the changes the watch sees
// live. The stream is then ended with DropWatches, which first sends what
// was queued, so an extra event would show.
func TestWatches(t *testing.T) {
	if leakcheck.RunApart(t) {
		return // one of its watches waits out timeoutSeconds, apart from the other tests
	}
	for _, tc := range []struct {
		transcript string
		before     func(c *capture)
		during     func(c *capture)
		endsItself bool // timeoutSeconds ends it
		check      func(t *testing.T, c *capture, got []frame)
	}{
		// From an exact resourceVersion: the changes after it, replayed
		// from the history; a DELETED event has a resourceVersion of its own.
		{transcript: "12-watch-from-rv", before: func(c *capture) { c.change(355) }},
		// With a label selector, live: an object that stops matching
		// arrives as DELETED (its old state, the new resourceVersion), one
		// that starts matching as ADDED.
		{
			transcript: "13-watch-labelselector-enter-leave",
			during:     func(c *capture) { c.change(355) },
			check: func(t *testing.T, c *capture, got []frame) {
				leave := got[2].Object
				if str(leave, "metadata", "labels", "app") != "web" || rvOfJSON(t, leave) != c.real["352"] {
					t.Errorf("leave event: want web-2 with its old labels at the resourceVersion of the change, got %v", leave["metadata"])
				}
			},
		},
		// No resourceVersion, or 0: synthetic ADDED for what exists, sorted.
		{transcript: "16-watch-no-rv-synthetic-added", before: func(c *capture) { c.change(355) }},
		{transcript: "17-watch-rv0", before: func(c *capture) { c.change(355) }},
		// Watch-list: ADDED, then the initial-events-end BOOKMARK (only
		// metadata.resourceVersion, the current one, and the annotation).
		{transcript: "18-watchlist", before: func(c *capture) { c.change(355) }},
		// Without allowWatchBookmarks there is no bookmark.
		{transcript: "20-watchlist-without-bookmarks", before: func(c *capture) { c.change(355) }},
		// From an old resourceVersion still in the history: replayed.
		{transcript: "21-watch-too-old-rv", before: func(c *capture) { c.change(355) }},
		{transcript: "34-watch-old-rv-served-from-watch-cache", before: func(c *capture) { c.change(355) }},
		// From a resourceVersion not reached yet: nothing, even while
		// other changes happen.
		{
			transcript: "22-watch-future-rv",
			during: func(c *capture) {
				p := c.mustDo(http.StatusOK, http.MethodGet, pods+"web-1", nil)
				labelsOf(p)["tier"] = "back"
				c.mustDo(http.StatusOK, http.MethodPut, pods+"web-1", p)
			},
		},
		// timeoutSeconds=1: the server ends the stream.
		{
			transcript: "25-watch-timeoutseconds", before: func(c *capture) { c.change(355) }, endsItself: true,
		},
		// All namespaces, field selector on metadata.namespace: a pod in
		// another namespace stays out.
		{
			transcript: "26-watchlist-all-namespaces-fieldselector",
			before: func(c *capture) {
				c.change(355)
				c.mustDo(http.StatusCreated, http.MethodPost, "/api/v1/namespaces", map[string]any{"metadata": map[string]any{"name": "other"}})
				c.mustDo(http.StatusCreated, http.MethodPost, "/api/v1/namespaces/other/pods", []byte(tmpPod))
			},
		},
		// Deleting a pod: MODIFIED with deletionTimestamp, then DELETED.
		{
			transcript: "37-watch-delete-grace0",
			before:     func(c *capture) { c.real["383"] = c.rv() },
			during: func(c *capture) {
				c.step(http.StatusCreated, http.MethodPost, pods, []byte(tmpPod), 384)
				ex := transcript(c.t, "39-delete-pod-grace0-response")[0]
				c.step(ex.Code, ex.Method, ex.Path, ex.Request, 385, 386)
			},
		},
		// Watch-list of configmaps; the stream goes on with the changes.
		// A configmap's DELETE is one event.
		{
			transcript: "38-watchlist-configmaps-update-delete",
			before:     func(c *capture) { c.createSettings() },
			during: func(c *capture) {
				c.edit(configMaps+"settings", "", func(cm map[string]any) { cm["data"].(map[string]any)["a"] = "2" }, 387)
				ex := transcript(c.t, "40-delete-configmap-response")[0]
				c.step(ex.Code, ex.Method, ex.Path, nil, 388)
			},
		},
	} {
		t.Run(tc.transcript, func(t *testing.T) {
			c := newCapture(t)
			if tc.before != nil {
				tc.before(c)
			}
			ex := transcript(t, tc.transcript)[0]
			for _, fr := range ex.Events {
				if fr.Type == "BOOKMARK" {
					// A watch-list bookmark is at the resourceVersion
					// current when the watch opened.
					c.real[str(fr.Object, "metadata", "resourceVersion")] = c.rv()
				}
			}
			start := time.Now()
			st := c.watch(c.mapPath(ex.Path))
			for _, k := range []string{"Content-Type", "Cache-Control"} {
				if got, want := st.resp.Header.Get(k), ex.Header.Get(k); got != want {
					t.Errorf("%s %q, want %q", k, got, want)
				}
			}
			if tc.during != nil {
				tc.during(c)
			}
			if !tc.endsItself {
				if n := c.s.DropWatches(); n != 1 {
					t.Errorf("DropWatches ended %d watches, want 1", n)
				}
			}
			got := st.rest()
			if tc.endsItself {
				if d := time.Since(start); d < time.Second {
					t.Errorf("stream ended after %v, before timeoutSeconds", d)
				}
			}
			if diff := cmp.Diff(shape(ex.Events), shape(got)); diff != "" {
				t.Fatalf("events differ from the transcript (-real +workshop):\n%s", diff)
			}
			for i := range got {
				what := fmt.Sprintf("event %d (%s)", i, shape(got)[i])
				sameJSON(t, what, got[i].Object, ex.Events[i].Object)
				c.sameRVs(t, what, got[i].Object, ex.Events[i].Object)
			}
			if tc.check != nil {
				tc.check(t, c, got)
			}
		})
	}
}
