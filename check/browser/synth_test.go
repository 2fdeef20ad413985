package browser

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"strconv"
)

// The synthetic trace: a hand-made run shaped like a real chapter's, to check
// the page without the Go side: every lane, three steps (and an event before
// the first heading), a Replace, then Adds, Updates and Deletes on the store.

var lanes = []string{"API server", "wire", "reflector", "FIFO", "store", "handlers", "workqueue", "workers"}

const (
	lAPI = iota
	lWire
	lReflector
	lFIFO
	lStore
	lHandlers
	lQueue
	lWorkers
)

const ns = "informer-walkthrough"

type tStep struct {
	Seq   int    `json:"seq"`
	Title string `json:"title"`
}

type tLine struct {
	Seq  int    `json:"seq"`
	Text string `json:"text"`
}

type tEvent struct {
	Seq  int      `json:"seq"`
	Step int      `json:"step"`
	Lane int      `json:"lane"`
	Verb string   `json:"verb"`
	Text string   `json:"text"`
	Key  string   `json:"key"`
	RV   string   `json:"rv"`
	Obj  int      `json:"obj"`
	Func string   `json:"func"`
	Src  string   `json:"src"`
	Keys []string `json:"keys,omitempty"`
}

type tTrace struct {
	Chapter  string   `json:"chapter"`
	ClientGo string   `json:"clientGo"`
	Lanes    []string `json:"lanes"`
	Steps    []tStep  `json:"steps"`
	Output   []tLine  `json:"output"`
	Objects  []any    `json:"objects"`
	Events   []tEvent `json:"events"`
	Done     bool     `json:"done"`
}

type synth struct {
	tr    tTrace
	seq   int
	step  int
	rv    int
	store map[string]string
	count map[string]int
}

// src is a made-up link: the page only shows it (the course's real
// links are internal/trace's, checked against the source).
func src(file string, line int) string {
	return fmt.Sprintf("https://example.invalid/client-go/%s#L%d", file, line)
}

func (s *synth) next() int { s.seq += 1 + s.seq%3; return s.seq } // strictly increasing, not dense

func (s *synth) heading(title string) {
	seq := s.next()
	s.tr.Steps = append(s.tr.Steps, tStep{seq, title})
	s.tr.Output = append(s.tr.Output, tLine{seq, title})
	s.step = len(s.tr.Steps) - 1
}

func (s *synth) print(text string) { s.tr.Output = append(s.tr.Output, tLine{s.next(), text}) }

func (s *synth) obj(name string, rv int, data map[string]string) int {
	s.tr.Objects = append(s.tr.Objects, map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{
			"name": name, "namespace": ns, "resourceVersion": strconv.Itoa(rv),
			"labels": map[string]string{"informer-walkthrough/chapter": "05-informer"},
		},
		"data": data,
	})
	return len(s.tr.Objects) - 1
}

func (s *synth) ev(lane int, verb, text, key, rv string, obj int, fn, source string) *tEvent {
	s.tr.Events = append(s.tr.Events, tEvent{
		Seq: s.next(), Step: s.step, Lane: lane, Verb: verb, Text: text, Key: key, RV: rv, Obj: obj, Func: fn, Src: source,
	})
	s.count[lanes[lane]]++
	if lane == lStore {
		switch verb {
		case "Add", "Update":
			s.store[key] = rv
		case "Delete":
			delete(s.store, key)
		}
	}
	return &s.tr.Events[len(s.tr.Events)-1]
}

// change is one object's trip down the pipeline, from the request to the worker.
func (s *synth) change(op string, i int) {
	name := fmt.Sprintf("cm-%03d", i)
	key := ns + "/" + name
	s.rv++
	rv := strconv.Itoa(s.rv)
	o := s.obj(name, s.rv, map[string]string{"op": op, "n": strconv.Itoa(i)})
	method, watch, delta, store, handler := "POST", "ADDED", "Added", "Add", "OnAdd"
	switch op {
	case "update":
		method, watch, delta, store, handler = "PUT", "MODIFIED", "Updated", "Update", "OnUpdate"
	case "delete":
		method, watch, delta, store, handler = "DELETE", "DELETED", "Deleted", "Delete", "OnDelete"
	}
	s.ev(lAPI, method, method+" /api/v1/namespaces/"+ns+"/configmaps/"+name, key, rv, o, "", "")
	s.ev(lWire, watch, watch+" configmap "+key+" rv="+rv, key, rv, o, "watch.(*StreamWatcher).receive", src("tools/watch/streamwatcher.go", 104))
	s.ev(lReflector, "watch", watch+" "+key+" rv="+rv, key, rv, o, "cache.handleAnyWatch", src("tools/cache/reflector.go", 940))
	s.ev(lFIFO, delta, delta+" "+key, key, rv, o, "cache.(*RealFIFO).Add", src("tools/cache/the_real_fifo.go", 120))
	s.ev(lFIFO, "Pop", "pop 1 delta of "+key, key, rv, -1, "cache.(*RealFIFO).Pop", src("tools/cache/the_real_fifo.go", 300))
	s.ev(lStore, store, key+" rv="+rv, key, rv, o, "cache.processDeltas", src("tools/cache/controller.go", 560))
	s.ev(lHandlers, handler, handler+" configmap/"+name, key, rv, o, "cache.ResourceEventHandlerFuncs."+handler, src("tools/cache/controller.go", 250))
	s.print("  " + handler + " configmap/" + name + " rv=" + rv)
	s.ev(lQueue, "add", "add "+key, key, "", -1, "workqueue.(*Typed).Add", src("util/workqueue/queue.go", 200))
	s.ev(lWorkers, "get", "worker 1 got "+key, key, "", -1, "workqueue.(*Typed).Get", src("util/workqueue/queue.go", 250))
	s.ev(lQueue, "done", "done "+key, key, "", -1, "workqueue.(*Typed).Done", src("util/workqueue/queue.go", 300))
}

// makeTrace builds a run of three steps with n changes in all (about ten
// events each), and what the page must show at its end.
func makeTrace(n int) ([]byte, Expect) {
	s := &synth{step: -1, store: map[string]string{}, count: map[string]int{}}
	for _, l := range lanes {
		s.count[l] = 0
	}
	s.tr = tTrace{Chapter: "00-synthetic", ClientGo: "v0.37.2", Lanes: lanes, Done: true}
	s.ev(lAPI, "GET", "GET /version", "", "", -1, "", "") // before the first heading

	s.heading("Step 1. NewInformer: list, watch, handlers")
	s.rv = 10
	var keys []string
	s.ev(lAPI, "GET", "GET /api/v1/namespaces/"+ns+"/configmaps?limit=500&resourceVersion=0", "", "", -1, "", "")
	s.ev(lWire, "LIST", "list configmaps limit=500 resourceVersion=0", "", "", -1, "cache.(*Reflector).list", src("tools/cache/reflector.go", 540))
	for i := range 3 {
		keys = append(keys, fmt.Sprintf("%s/cm-%03d", ns, 900+i))
	}
	s.ev(lReflector, "list", "listed 3 items at rv=10", "", "10", -1, "cache.(*Reflector).list", src("tools/cache/reflector.go", 540))
	r := s.ev(lStore, "Replace", "replace, keys: "+keys[0]+" rv=10, "+keys[1]+" rv=10, "+keys[2]+" rv=10", "", "", -1, "cache.(*threadSafeMap).Replace", src("tools/cache/thread_safe_store.go", 330))
	r.Keys = keys
	s.store = map[string]string{}
	for _, k := range keys {
		s.store[k] = "" // Replace names the keys; the rvs come from later events
	}
	s.ev(lStore, "Update", keys[0]+" rv=10", keys[0], "10", -1, "", "")
	s.store[keys[0]] = "10"
	s.ev(lAPI, "WATCH", "GET .../configmaps?watch=true&resourceVersion=10", "", "", -1, "", "")
	s.ev(lWire, "BOOKMARK", "BOOKMARK rv=10", "", "10", -1, "", "")
	third := max(1, n/3)
	for i := range third {
		s.change("add", i)
	}
	s.heading("Step 2. Updates: each one a MODIFIED event, an Update in the store")
	for i := range n - 2*third {
		s.change("update", i%third)
	}
	s.heading("Step 3. Deletes: the last state is gone from the store")
	for i := range third {
		if i%2 == 0 {
			s.change("delete", i)
		}
	}
	s.ev(lStore, "Delete", keys[2], keys[2], "", -1, "", "")
	delete(s.store, keys[2])
	s.print("done")
	// Replace's keys carried no rv: the page shows "" and so does the Expect.
	// (The Go side may add "rvs"; see the report.)

	b, err := json.Marshal(s.tr)
	if err != nil {
		panic(err)
	}
	want := Expect{Lanes: maps.Clone(s.count), Store: maps.Clone(s.store)}
	for _, st := range s.tr.Steps {
		want.Steps = append(want.Steps, st.Title)
	}
	return b, want
}

// offlineHTML is the --trace file: the page with the trace gzipped and
// base64-encoded in its script element (made here with the standard library,
// not with page.Offline, so the test checks the format, not the helper).
func offlineHTML(pageHTML func(string) []byte, trace []byte) []byte {
	var z bytes.Buffer
	w, _ := gzip.NewWriterLevel(&z, gzip.BestCompression)
	w.Write(trace)
	w.Close()
	return pageHTML(`<script id="trace-data" type="application/gzip+base64">` + base64.StdEncoding.EncodeToString(z.Bytes()) + `</script>`)
}
