package apiserver

import (
	"fmt"
	"net/url"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apiserver/pkg/sharding"
)

// The sharding tests replay transcripts 60-75, recorded from kube-apiserver
// v1.36.3 with --feature-gates=ShardedListAndWatch=true (60-69b) and
// without it (73-75): namespace capture-shard, pods web-1..web-8. The
// workshop's uids are not the recording's, so which pod falls in which
// shard differs; what must match is how a shard is chosen (the uid's
// FNV-1a hash in [start, end)) and everything about the answer but that.

const shardPods = "/api/v1/namespaces/capture-shard/pods"

// gateOn is a server with the ShardedListAndWatch gate on, as chapter 12
// starts it (shardparse.Parse is this parser).
var gateOn = Options{ShardSelectors: sharding.Parse}

// newShardCapture starts a workshop cluster (opts) holding what transcript
// 60 (or 73) created.
func newShardCapture(t *testing.T, opts Options, create string) *client {
	t.Helper()
	c := newClient(t, startServerWith(t, opts))
	c.mustDo(201, "POST", "/api/v1/namespaces", map[string]any{"metadata": map[string]any{"name": "capture-shard"}})
	for _, ex := range transcript(t, create) {
		c.mustDo(ex.Code, ex.Method, ex.Path, ex.Request)
	}
	return c
}

// shardOf returns, for a transcript's recorded GET, its shard selector.
func shardOf(t *testing.T, ex exchange) string {
	t.Helper()
	u, err := url.Parse(ex.Path)
	if err != nil {
		t.Fatal(err)
	}
	return u.Query().Get("shardSelector")
}

// members lists the names of the items whose uid the selector keeps, by
// apimachinery's own Matches: the shard as kube-apiserver computes it.
func members(t *testing.T, selector string, items []any) []string {
	t.Helper()
	sel, err := sharding.Parse(selector)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, it := range items {
		ok, err := sel.Matches(&unstructured.Unstructured{Object: it.(map[string]any)})
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			out = append(out, str(it.(map[string]any), "metadata", "name"))
		}
	}
	return out
}

func names(items []any) []string {
	var out []string
	for _, it := range items {
		out = append(out, str(it.(map[string]any), "metadata", "name"))
	}
	return out
}

// TestShardIsTheUIDHash checks the recording against apimachinery's hash:
// the two halves kube-apiserver answered (62, 63) are exactly the pods of
// the whole list (61) whose uid's FNV-1a hash falls in each range. The
// workshop cluster matches with the same code, so its shards are chosen
// as kube-apiserver's.
func TestShardIsTheUIDHash(t *testing.T) {
	all := decode(t, transcript(t, "61-gate-on-list-all")[0].Body)["items"].([]any)
	var union []string
	for _, name := range []string{"62-gate-on-list-shard-0-of-2", "63-gate-on-list-shard-1-of-2"} {
		ex := transcript(t, name)[0]
		got := names(decode(t, ex.Body)["items"].([]any))
		if want := members(t, shardOf(t, ex), all); !slices.Equal(got, want) {
			t.Errorf("%s: kube-apiserver answered %v; the uid hash puts %v there", name, got, want)
		}
		union = append(union, got...)
	}
	slices.Sort(union)
	if want := names(all); !slices.Equal(union, want) {
		t.Errorf("the two halves hold %v, the whole list %v", union, want)
	}
}

// TestShardedList: with the gate on, a sharded list holds the shard's
// pods and says which shard it is in metadata.shardInfo (62, 63); the
// halves are disjoint and together the whole list (61), which itself is
// answered as kube-apiserver answers it. Sharding pods of every namespace
// by namespace keeps or drops a namespace whole (65).
func TestShardedList(t *testing.T) {
	c := newShardCapture(t, gateOn, "60-gate-on-create-8-pods")
	whole := transcript(t, "61-gate-on-list-all")[0]
	all := c.mustDo(200, "GET", whole.Path, nil)
	sameJSON(t, "the whole list", all, decode(t, whole.Body))
	var union []string
	for _, name := range []string{"62-gate-on-list-shard-0-of-2", "63-gate-on-list-shard-1-of-2", "65-gate-on-list-all-namespaces-by-namespace-hash"} {
		ex := transcript(t, name)[0]
		got := c.mustDo(ex.Code, ex.Method, ex.Path, nil)
		want := decode(t, ex.Body)
		if diff := cmp.Diff(norm(want["metadata"]), norm(got["metadata"])); diff != "" {
			t.Errorf("%s: list metadata differs (-real +workshop):\n%s", name, diff)
		}
		items := got["items"].([]any)
		if w := members(t, shardOf(t, ex), all["items"].([]any)); !slices.Equal(names(items), w) {
			t.Errorf("%s: the shard holds %v, want %v", name, names(items), w)
		}
		if name == "65-gate-on-list-all-namespaces-by-namespace-hash" {
			if w := names(want["items"].([]any)); !slices.Equal(names(items), w) {
				t.Errorf("%s: %v, kube-apiserver answered %v", name, names(items), w)
			}
			continue
		}
		union = append(union, names(items)...)
	}
	slices.Sort(union)
	if w := names(all["items"].([]any)); !slices.Equal(union, w) {
		t.Errorf("the halves hold %v together, the whole list %v", union, w)
	}
}

// TestShardedListPages: a sharded list pages as any list (64):
// limit counts the shard's items, the continue token starts after the
// page's last item, and remainingItemCount counts the whole collection
// after the page, not only the shard's part of it (v1.36.3; see
// sharding.go). Following the tokens yields the shard.
func TestShardedListPages(t *testing.T) {
	c := newShardCapture(t, gateOn, "60-gate-on-create-8-pods")
	ex := transcript(t, "64-gate-on-list-shard-0-limit-2")[0]
	want := decode(t, ex.Body)["metadata"].(map[string]any)
	all := c.mustDo(200, "GET", shardPods, nil)["items"].([]any)
	shard := members(t, shardOf(t, ex), all)
	if len(shard) < 3 {
		t.Fatalf("the workshop's uids put %v in shard 0: too few to page by 2", shard)
	}
	page := c.mustDo(ex.Code, ex.Method, ex.Path, nil)
	got := page["metadata"].(map[string]any)
	for _, k := range []string{"shardInfo", "remainingItemCount"} {
		if !cmp.Equal(got[k], want[k]) {
			t.Errorf("first page: %s = %v, kube-apiserver answered %v", k, got[k], want[k])
		}
	}
	if tok := decodeToken(got["continue"].(string)); tok["start"] != "/"+shard[1]+"\x00" {
		t.Errorf("first page's continue token %v, want it to start after %s", tok, shard[1])
	}
	var paged []string
	for {
		paged = append(paged, names(page["items"].([]any))...)
		next, _ := page["metadata"].(map[string]any)["continue"].(string)
		if next == "" {
			break
		}
		page = c.mustDo(200, "GET", ex.Path+"&continue="+url.QueryEscape(next), nil)
	}
	if !slices.Equal(paged, shard) {
		t.Errorf("pages of 2 hold %v, the shard %v", paged, shard)
	}
}

// TestShardedWatchList: a watch-list with a shard selector sends ADDED for
// the shard's pods (sorted by name), then the same initial-events-end
// bookmark as without a shard, then only the shard's changes: of 69b's
// four creates and one delete, those of pods in the shard (69).
func TestShardedWatchList(t *testing.T) {
	c := newShardCapture(t, gateOn, "60-gate-on-create-8-pods")
	ex := transcript(t, "69-gate-on-watchlist-shard-0")[0]
	before := c.mustDo(200, "GET", shardPods, nil)["items"].([]any)
	st := c.watch(ex.Path)
	shard := members(t, shardOf(t, ex), before)
	var initial []frame
	for range len(shard) + 1 {
		initial = append(initial, st.next())
	}
	var want []string
	for _, n := range shard {
		want = append(want, "ADDED "+n)
	}
	if got := shape(initial); !slices.Equal(got, append(want, "BOOKMARK ")) {
		t.Errorf("initial events %v, want %v then the bookmark", got, want)
	}
	i := slices.IndexFunc(ex.Events, func(f frame) bool { return f.Type == "BOOKMARK" })
	recorded := ex.Events[i]
	if diff := cmp.Diff(norm(recorded.Object), norm(initial[len(initial)-1].Object)); diff != "" {
		t.Errorf("bookmark differs (-real +workshop):\n%s", diff)
	}

	// 69b's changes; the stream must carry exactly those of shard pods.
	for _, ch := range transcript(t, "69b-changes-during-watch") {
		c.mustDo(ch.Code, ch.Method, ch.Path, ch.Request)
	}
	after := c.mustDo(200, "GET", shardPods, nil)["items"].([]any)
	var expect []string
	for _, n := range members(t, shardOf(t, ex), after) {
		if !slices.Contains(shard, n) {
			expect = append(expect, "ADDED "+n)
		}
	}
	if slices.Contains(shard, "web-1") {
		expect = append(expect, "MODIFIED web-1", "DELETED web-1")
	}
	// A marker outside the shard would not come; one in it ends the
	// wait: create pods until one lands in the shard.
	var marker string
	for i := 0; marker == ""; i++ {
		name := fmt.Sprintf("marker-%d", i)
		pod := c.mustDo(201, "POST", shardPods, map[string]any{"metadata": map[string]any{"name": name}, "spec": map[string]any{"containers": []any{map[string]any{"name": "c", "image": "nginx:1.27"}}}})
		if len(members(t, shardOf(t, ex), []any{pod})) == 1 {
			marker = name
		}
	}
	var got []string
	for {
		fr := shape([]frame{st.next()})[0]
		if fr == "ADDED "+marker {
			break
		}
		got = append(got, fr)
	}
	t.Logf("shard 0 held %v, then saw %v", shard, got)
	if !slices.Equal(got, expect) {
		t.Errorf("live events %v, want %v", got, expect)
	}
}

// TestBadShardSelector: with the gate on, a selector kube-apiserver cannot
// parse is answered 500 with "invalid shard selector: …" and no reason,
// not 400 (66 an unsupported field, 67 start not below end, 68 not CEL).
// A watch is refused the same way, before its stream begins (the
// registry's Watch parses it as List does).
func TestBadShardSelector(t *testing.T) {
	c := newShardCapture(t, gateOn, "60-gate-on-create-8-pods")
	for _, name := range []string{"66-gate-on-bad-field-path", "67-gate-on-bad-range", "68-gate-on-bad-syntax"} {
		ex := transcript(t, name)[0]
		want := decode(t, ex.Body)
		for _, path := range []string{ex.Path, ex.Path + "&watch=true"} {
			code, got := c.do("GET", path, nil)
			if code != ex.Code {
				t.Errorf("%s: GET %s: HTTP %d, want %d", name, path, code, ex.Code)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s: GET %s: Status differs (-real +workshop):\n%s", name, path, diff)
			}
		}
	}
}

// TestShardGateOff: without the gate (kube-apiserver's default, and the
// workshop cluster's: the zero Options) the parameter is ignored, even a
// malformed one: every "shard" is the whole list, with no shardInfo (74,
// 75). A watch-list is the whole too.
func TestShardGateOff(t *testing.T) {
	c := newShardCapture(t, Options{}, "73-gate-off-create-8-pods")
	for _, name := range []string{"74-gate-off-list-shard-0-ignored", "75-gate-off-bad-syntax-ignored"} {
		ex := transcript(t, name)[0]
		got := c.mustDo(ex.Code, ex.Method, ex.Path, nil)
		sameJSON(t, name, got, decode(t, ex.Body))
	}
	st := c.watch(transcript(t, "69-gate-on-watchlist-shard-0")[0].Path)
	var got []string
	for range 9 {
		got = append(got, shape([]frame{st.next()})[0])
	}
	want := []string{"ADDED web-1", "ADDED web-2", "ADDED web-3", "ADDED web-4", "ADDED web-5", "ADDED web-6", "ADDED web-7", "ADDED web-8", "BOOKMARK "}
	if !slices.Equal(got, want) {
		t.Errorf("gate off, a sharded watch-list sent %v, want the whole %v", got, want)
	}
}

// TestShardGateOffDefault: the zero Options, which chapters 01-11 use,
// answer a malformed shardSelector on a list and on a watch as if it
// were absent, never with the 500 of the gate on (75).
func TestShardGateOffDefault(t *testing.T) {
	c := newShardCapture(t, Options{}, "73-gate-off-create-8-pods")
	bad := transcript(t, "68-gate-on-bad-syntax")[0].Path
	list := c.mustDo(200, "GET", bad, nil)
	if _, ok := list["metadata"].(map[string]any)["shardInfo"]; ok {
		t.Errorf("gate off, a list answered shardInfo: %v", list["metadata"])
	}
	if items, _ := list["items"].([]any); len(items) != 8 {
		t.Errorf("gate off, a list with a malformed shardSelector held %d pods, want all 8", len(items))
	}
	st := c.watch(bad + "&watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true")
	if got := shape([]frame{st.next()})[0]; got != "ADDED web-1" {
		t.Errorf("gate off, a watch with a malformed shardSelector began %q, want ADDED web-1", got)
	}
}
