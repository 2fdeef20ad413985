package apiserver

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The tests here replay the transcripts that hack/realk8s/record-gc.sh
// recorded on a real control plane (kube-apiserver and
// kube-controller-manager v1.37.2, its garbage collector running):
// every request in the order recorded, each answer compared with the
// recorded one (uids, timestamps and resourceVersions made comparable,
// and resourceVersions checked to point where the recorded ones point),
// and the watch that was open during them compared event by event.
//
// A real collector's workers take an owner's dependents in no fixed
// order (120 and 121 differ), so a watch is compared per object (each
// object's events, in order, the same) and, for each owner, in the
// order its own events keep among its dependents' (a Background owner
// is gone before its dependents change; a Foreground or Orphan owner
// is marked before and gone after). Before each request the workshop's
// collector is let finish (collector.settle), as the real one had
// finished by the time the recording sent the next request.

// gcReplay replays transcripts on one workshop cluster with garbage
// collection.
type gcReplay struct {
	t    *testing.T
	s    *Server
	c    *client
	uids map[string]string // recorded uid → this server's
	rvs  map[string]string // recorded resourceVersion → this server's
	// known, if set, adjusts an answer for a difference that is known
	// and not garbage collection's (see TestGCClusterScopedOwner).
	known func(got map[string]any)
}

func newGCReplay(t *testing.T) *gcReplay {
	t.Helper()
	s := startServerWith(t, Options{GarbageCollection: true, Bootstrap: true})
	return &gcReplay{t: t, s: s, c: newClient(t, s), uids: map[string]string{}, rvs: map[string]string{}}
}

// replay sends the requests of testdata/transcripts/<name>.txt and
// compares the answers. The watch it records is opened when the
// recording opened it: after the answer whose resourceVersion it starts
// from.
func (r *gcReplay) replay(name string) {
	t := r.t
	t.Helper()
	exs := transcript(t, name)
	var ns string
	for _, ex := range exs {
		if _, rest, ok := strings.Cut(ex.Path, "/namespaces/"); ok && ns == "" {
			ns, _, _ = strings.Cut(rest, "/")
		}
	}
	r.c.mustDo(http.StatusCreated, http.MethodPost, "/api/v1/namespaces", map[string]any{"metadata": map[string]any{"name": ns}})
	// kube-controller-manager's root CA publisher writes this into every
	// namespace; the recorded lists count it (remainingItemCount).
	r.c.mustDo(http.StatusCreated, http.MethodPost, "/api/v1/namespaces/"+ns+"/configmaps", map[string]any{"metadata": map[string]any{"name": "kube-root-ca.crt"}})
	at := slices.IndexFunc(exs, func(ex exchange) bool { return strings.Contains(ex.Path, "watch=true") })
	var from string
	if at >= 0 {
		u, err := url.Parse(exs[at].Path)
		if err != nil {
			t.Fatal(err)
		}
		from = u.Query().Get("resourceVersion")
	}
	var st *stream
	for i, ex := range exs {
		what := fmt.Sprintf("%s #%d %s %s", name, i, ex.Method, ex.Path)
		if i == at {
			if st == nil {
				t.Fatalf("%s: no answer had resourceVersion %s to open the watch at", what, from)
			}
			r.sameEvents(what, st, ex.Events)
			continue
		}
		r.s.store.gc.settle()
		code, got := r.send(ex.Method, r.mapPath(ex.Path), r.mapBody(ex.Request))
		if code != ex.Code {
			t.Fatalf("%s: HTTP %d, want %d: %s", what, code, ex.Code, got)
		}
		want := decode(t, ex.Body)
		r.same(what, decode(t, got), want)
		if st == nil && at > i && str(want, "metadata", "resourceVersion") == from {
			q := url.Values{"watch": {"true"}, "resourceVersion": {r.rvs[from]}}
			st = r.c.watch(strings.Split(exs[at].Path, "?")[0] + "?" + q.Encode())
		}
	}
}

// send sends one request as the recording did (curl, JSON; a PATCH is a
// merge patch) and returns the status code and the body.
func (r *gcReplay) send(method, path string, body []byte) (int, []byte) {
	r.t.Helper()
	req := r.c.newRequest(r.t.Context(), method, path, body)
	if method == http.MethodPatch {
		req.Header.Set("Content-Type", "application/merge-patch+json")
	}
	resp, err := r.c.c.Do(req)
	if err != nil {
		r.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		r.t.Fatal(err)
	}
	return resp.StatusCode, b
}

// mapPath gives a recorded path this server's resourceVersion.
func (r *gcReplay) mapPath(path string) string {
	u, err := url.Parse(path)
	if err != nil {
		r.t.Fatal(err)
	}
	q := u.Query()
	if rv, ok := r.rvs[q.Get("resourceVersion")]; ok {
		q.Set("resourceVersion", rv)
		u.RawQuery = q.Encode()
	}
	return u.String()
}

// mapBody gives a recorded request body this server's uids and
// resourceVersions (ownerReferences, preconditions).
func (r *gcReplay) mapBody(body []byte) []byte {
	if body == nil {
		return nil
	}
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		r.t.Fatal(err)
	}
	var walk func(v any) any
	walk = func(v any) any {
		switch v := v.(type) {
		case map[string]any:
			for k, e := range v {
				if s, ok := e.(string); ok && k == "resourceVersion" && r.rvs[s] != "" {
					v[k] = r.rvs[s]
				} else if ok && k == "uid" && r.uids[s] != "" {
					v[k] = r.uids[s]
				} else {
					v[k] = walk(e)
				}
			}
		case []any:
			for i, e := range v {
				v[i] = walk(e)
			}
		}
		return v
	}
	b, err := json.Marshal(walk(v))
	if err != nil {
		r.t.Fatal(err)
	}
	return b
}

// same compares an answer with the recorded one: first their
// resourceVersions and uids (learned where first seen, checked after),
// then everything else, norm'd. kube-root-ca.crt, which
// kube-controller-manager writes into every namespace, is left out of
// lists, and what the deployment controller wrote (a Deployment's
// status) out of objects: the workshop cluster runs neither.
func (r *gcReplay) same(what string, got, want map[string]any) {
	r.t.Helper()
	got, want = withoutItems(got, []string{"kube-root-ca.crt"}), withoutItems(want, []string{"kube-root-ca.crt"})
	if r.known != nil {
		r.known(got)
	}
	want = withoutControllerStatus(want, got)
	r.sameIDs(what, got, want)
	want = r.mapKeys(want).(map[string]any)
	if m, ok := want["message"].(string); ok {
		want["message"] = r.mapText(m)
	}
	if diff := cmp.Diff(norm(want), norm(got)); diff != "" {
		r.t.Errorf("%s differs from the transcript (-real +workshop):\n%s", what, diff)
	}
}

// sameIDs checks that each resourceVersion and uid of an object (or of
// a list and its items) is this server's for the recorded one.
func (r *gcReplay) sameIDs(what string, got, want map[string]any) {
	r.t.Helper()
	pair := func(m map[string]string, kind, rec, mine string) {
		if rec == "" {
			return
		}
		if prev, ok := m[rec]; !ok {
			m[rec] = mine
		} else if prev != mine {
			r.t.Errorf("%s: %s %s, want %s (recorded %s)", what, kind, mine, prev, rec)
		}
	}
	one := func(got, want map[string]any) {
		pair(r.rvs, "resourceVersion", str(want, "metadata", "resourceVersion"), str(got, "metadata", "resourceVersion"))
		pair(r.uids, "uid", str(want, "metadata", "uid"), str(got, "metadata", "uid"))
		pair(r.uids, "uid", str(want, "details", "uid"), str(got, "details", "uid"))
	}
	one(got, want)
	gotItems, _ := got["items"].([]any)
	wantItems, _ := want["items"].([]any)
	if len(gotItems) != len(wantItems) {
		r.t.Errorf("%s: %d items, want %d", what, len(gotItems), len(wantItems))
		return
	}
	for i := range wantItems {
		one(gotItems[i].(map[string]any), wantItems[i].(map[string]any))
	}
}

// mapText gives the recorded uids and resourceVersions in a message
// this server's: "record (367)" reads "record (12)".
func (r *gcReplay) mapText(s string) string {
	for rec, mine := range r.uids {
		s = strings.ReplaceAll(s, rec, mine)
	}
	for rec, mine := range r.rvs {
		s = strings.ReplaceAll(s, "("+rec+")", "("+mine+")")
	}
	return s
}

// mapKeys gives the recorded uids in keys this server's: managedFields
// name an ownerReference by its uid (`k:{"uid":"…"}`).
func (r *gcReplay) mapKeys(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range v {
			for rec, mine := range r.uids {
				k = strings.ReplaceAll(k, rec, mine)
			}
			out[k] = r.mapKeys(e)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = r.mapKeys(e)
		}
		return out
	}
	return v
}

// withoutControllerStatus drops from a recorded object the status that
// kube-controller-manager wrote (a managedFields entry of its own, on
// the status subresource), and that entry, where the workshop's answer
// has no such entry.
func withoutControllerStatus(want, got map[string]any) map[string]any {
	md, _ := want["metadata"].(map[string]any)
	mfs, _ := md["managedFields"].([]any)
	var kept []any
	for _, mf := range mfs {
		m := mf.(map[string]any)
		if m["manager"] == "kube-controller-manager" && m["subresource"] == "status" {
			want["status"] = got["status"]
			continue
		}
		kept = append(kept, mf)
	}
	if len(kept) != len(mfs) {
		md["managedFields"] = kept
	}
	return want
}

// sameEvents reads as many events as were recorded, lets the collector
// finish, checks that nothing more was written, and compares the
// events per object and, for each owner, in its order among its
// dependents.
func (r *gcReplay) sameEvents(what string, st *stream, want []frame) {
	r.t.Helper()
	got := make([]frame, len(want))
	for i := range got {
		got[i] = st.next()
	}
	r.s.store.gc.settle()
	if last := str(got[len(got)-1].Object, "metadata", "resourceVersion"); last != r.s.ResourceVersion() {
		r.t.Errorf("%s: the server is at resourceVersion %s after the last recorded event (%s): it wrote more", what, r.s.ResourceVersion(), last)
	}
	per := func(frames []frame) map[string][]frame {
		out := map[string][]frame{}
		for _, fr := range frames {
			n := str(fr.Object, "metadata", "name")
			out[n] = append(out[n], fr)
		}
		return out
	}
	gotPer, wantPer := per(got), per(want)
	for name, ws := range wantPer {
		gs := gotPer[name]
		if len(gs) != len(ws) {
			r.t.Errorf("%s: %s: events %v, want %v", what, name, shape(gs), shape(ws))
			continue
		}
		for i := range ws {
			r.same(fmt.Sprintf("%s: %s event %d (%s)", what, name, i, ws[i].Type), map[string]any{"type": gs[i].Type, "object": gs[i].Object},
				map[string]any{"type": ws[i].Type, "object": ws[i].Object})
			r.sameIDs(what, gs[i].Object, ws[i].Object)
		}
	}
	for owner, deps := range dependentsIn(want) {
		if g, w := ownerOrder(got, owner, deps), ownerOrder(want, owner, deps); !slices.Equal(g, w) {
			r.t.Errorf("%s: %s among its dependents:\n got %q\nwant %q", what, owner, g, w)
		}
	}
}

// dependentsIn maps each object named as an owner in the events to the
// names of its dependents.
func dependentsIn(frames []frame) map[string][]string {
	out := map[string][]string{}
	for _, fr := range frames {
		refs, _ := fr.Object["metadata"].(map[string]any)["ownerReferences"].([]any)
		for _, ref := range refs {
			o := ref.(map[string]any)["name"].(string)
			if n := str(fr.Object, "metadata", "name"); !slices.Contains(out[o], n) {
				out[o] = append(out[o], n)
			}
		}
	}
	return out
}

// ownerOrder is the events of owner ("DELETED owner") and of its
// dependents ("dependent"), in order.
func ownerOrder(frames []frame, owner string, deps []string) []string {
	var out []string
	for _, fr := range frames {
		switch n := str(fr.Object, "metadata", "name"); {
		case n == owner:
			out = append(out, fr.Type+" "+n)
		case slices.Contains(deps, n):
			out = append(out, "dependent")
		}
	}
	return out
}

// TestGCTranscripts: an owner ConfigMap and three dependents
// ("blocking" with blockOwnerDeletion, "plain" without, "shared" with a
// second owner) deleted with each propagation policy, and the
// deprecated orphanDependents, as kube-apiserver and
// kube-controller-manager v1.37.2 answer and stream it.
// transcripts 120-gc-background, 121-gc-default, 122-gc-foreground,
// 123-gc-orphan, 124-gc-orphandependents-true,
// 125-gc-orphandependents-false
func TestGCTranscripts(t *testing.T) {
	for _, name := range []string{
		"120-gc-background", "121-gc-default", "122-gc-foreground",
		"123-gc-orphan", "124-gc-orphandependents-true", "125-gc-orphandependents-false",
	} {
		t.Run(name, func(t *testing.T) { newGCReplay(t).replay(name) })
	}
}

// TestGCDeleteCollectionTranscript: a collection's DELETE passes its
// propagationPolicy to each delete (Orphan here).
// transcript 132-gc-deletecollection-orphan
func TestGCDeleteCollectionTranscript(t *testing.T) {
	newGCReplay(t).replay("132-gc-deletecollection-orphan")
}

// TestGCClusterScopedOwner: a namespaced dependent of a cluster-scoped
// owner (a ClusterRole) is deleted with it.
// transcript 133-gc-cluster-scoped-owner
func TestGCClusterScopedOwner(t *testing.T) {
	r := newGCReplay(t)
	// kube-apiserver stores objects as protobuf, which keeps no
	// difference between an empty list and none: the ClusterRole created
	// with "rules": [] reads back "rules": null. The workshop cluster
	// keeps what was sent, for every kind; that is no part of garbage
	// collection.
	r.known = func(got map[string]any) {
		if rules, ok := got["rules"].([]any); ok && len(rules) == 0 && got["kind"] == "ClusterRole" {
			got["rules"] = nil
		}
	}
	r.replay("133-gc-cluster-scoped-owner")
}

// TestGCForegroundWaits: a Foreground delete waits for a dependent with
// blockOwnerDeletion that a finalizer of its own holds (the owner is
// still there, marked, 3 s later), and completes once that finalizer
// is removed; a dependent with dependents of its own is deleted in the
// foreground too, after them. The PATCH that removes the last finalizer
// deletes the object: the answer is the object it made, the DELETED
// event the one that was stored.
// transcript 126-gc-foreground-waits
func TestGCForegroundWaits(t *testing.T) {
	newGCReplay(t).replay("126-gc-foreground-waits")
}

// TestGCForegroundNonBlocking: a Foreground delete does not wait for a
// dependent without blockOwnerDeletion, even one that a finalizer holds:
// the dependent is marked, the owner goes.
// transcript 134-gc-foreground-nonblocking-held
func TestGCForegroundNonBlocking(t *testing.T) {
	newGCReplay(t).replay("134-gc-foreground-nonblocking-held")
}

// TestGCOwnerMissingTranscript: a dependent created with an owner that
// does not exist, by name or by uid, is deleted.
// transcript 127-gc-owner-missing
func TestGCOwnerMissingTranscript(t *testing.T) {
	newGCReplay(t).replay("127-gc-owner-missing")
}

// TestDeleteHeldByFinalizer: a DELETE that leaves the object in place
// (a finalizer holds it) is answered 202 Accepted only with
// orphanDependents=false, 200 with the object otherwise; a DELETE of an
// object already being deleted answers it again and still sets the
// deletion finalizers its options ask for.
// transcript 128-delete-held-by-finalizer
func TestDeleteHeldByFinalizer(t *testing.T) {
	newGCReplay(t).replay("128-delete-held-by-finalizer")
}

// TestDeletePreconditions: a DELETE whose preconditions (uid,
// resourceVersion) do not match is a 409 Conflict naming the kind; one
// whose preconditions match deletes.
// transcript 129-delete-preconditions
func TestDeletePreconditions(t *testing.T) {
	newGCReplay(t).replay("129-delete-preconditions")
}

// TestListRVWithLimit: a LIST with a resourceVersion and a limit and no
// resourceVersionMatch is served at exactly that resourceVersion (the
// items as they were then); without the limit, or with
// resourceVersionMatch=NotOlderThan, at the current one.
// transcript 130-list-rv-limit
func TestListRVWithLimit(t *testing.T) {
	newGCReplay(t).replay("130-list-rv-limit")
}
