package trace

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/informer-walkthrough/informer-walkthrough/check/leakcheck"
)

func pod(name, rv string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, ResourceVersion: rv,
		ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl"}}}}
}

// record makes a small run: two steps, one object through four lanes.
func record(s *Session) {
	out := s.Writer(io.Discard)
	io.WriteString(out, "Setup. a pod\n")
	Record(Event{Lane: Wire, Verb: "ADDED", Text: "pod/a rv=2"}, pod("a", "2"))
	io.WriteString(out, "Step 1. it moves\n  OnAdd pod/a\n")
	Record(Event{Lane: FIFO, Verb: "Added", Func: "cache.(*RealFIFO).Add"}, pod("a", "2"))
	Record(Event{Lane: Store, Verb: "Add", Func: "cache.(*cache).Add"}, pod("a", "2"))
	Record(Event{Lane: Handlers, Verb: "OnAdd"}, pod("a", "2"))
}

// readTrace reads the trace back out of a written page.
func readTrace(t *testing.T, page []byte) Trace {
	t.Helper()
	tr, err := ReadHTML(page)
	if err != nil {
		t.Fatalf("%v:\n%.300s", err, page)
	}
	return tr
}

func TestTraceFile(t *testing.T) {
	leakcheck.Verify(t)
	path := filepath.Join(t.TempDir(), "t.html")
	s, err := Start(Options{Chapter: "00-test", ViewPort: -1, File: path}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	record(s)
	if err := s.Finish(); err != nil {
		t.Fatal(err)
	}
	if On() {
		t.Error("a recorder is still installed after Finish")
	}
	page, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(page, []byte("<!--TRACE-->")) {
		t.Error("the page still has its marker")
	}
	tr := readTrace(t, page)
	if !tr.Done || tr.Chapter != "00-test" || len(tr.Steps) != 2 || len(tr.Events) != 4 || len(tr.Output) != 3 {
		t.Fatalf("read back %+v", tr)
	}
	// One object, recorded once, whole; its key and rv taken from it;
	// the function linked.
	if len(tr.Objects) != 1 || !bytes.Contains(tr.Objects[0], []byte(`"resourceVersion":"2"`)) {
		t.Errorf("objects: %s", tr.Objects)
	}
	e := tr.Events[1]
	if e.Step != 1 || e.Key != "ns/a" || e.RV != "2" || e.Obj != 0 ||
		e.Src != "https://github.com/kubernetes/client-go/blob/v0.37.2/tools/cache/the_real_fifo.go#L337" {
		t.Errorf("event %+v", e)
	}
	if tr.Events[0].Step != 0 || tr.Steps[1].Title != "Step 1. it moves" {
		t.Errorf("steps %+v, first event %+v", tr.Steps, tr.Events[0])
	}
	want := `trace of 00-test: 2 steps, 4 events not on a timer (client-go v0.37.2)
Setup. a pod
  wire       ADDED pod/a rv=N
Step 1. it moves
  FIFO       Added  [cache.(*RealFIFO).Add]
  store      Add  [cache.(*cache).Add]
  handlers   OnAdd
`
	if got := Format(tr); got != want {
		t.Errorf("Format:\n%s\nwant:\n%s", got, want)
	}
}

// TestFormatCounts: a line that repeats is counted, a timed one is not.
func TestFormatCounts(t *testing.T) {
	r := New("00-test")
	r.Output("Step 1. resync")
	for range 3 {
		r.Record(Event{Lane: Handlers, Verb: "OnUpdate", Text: "a rv=7"}, nil)
		r.Record(Event{Lane: Reflector, Verb: "resync", Timed: true}, nil)
	}
	got := Format(r.Trace())
	for _, want := range []string{"handlers   OnUpdate a rv=N  ×3\n", "reflector  resync  (on a timer: ×n varies)\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("Format has no %q:\n%s", want, got)
		}
	}
}

// TestFormatLeavesMaybeOut: an event a documented race makes on some
// runs only is not in the golden text, which must read the same on every
// run; an event on a timer is, once.
func TestFormatLeavesMaybeOut(t *testing.T) {
	r := New("00-test")
	r.Output("Step 1. leader election")
	r.Record(Event{Lane: APIServer, Verb: "200", Text: "update leases", Timed: true}, nil)
	r.Record(Event{Lane: APIServer, Verb: "409", Text: "update leases", Timed: true, Maybe: true}, nil)
	got := Format(r.Trace())
	if !strings.Contains(got, "200 update leases  (on a timer") || strings.Contains(got, "409") {
		t.Errorf("Format should list the timed 200 and leave the maybe 409 out:\n%s", got)
	}
}

func TestInstallOneAtATime(t *testing.T) {
	un, err := Install(New("a"))
	if err != nil {
		t.Fatal(err)
	}
	defer un()
	if _, err := Install(New("b")); err != ErrInstalled {
		t.Errorf("a second Install: %v, want ErrInstalled", err)
	}
}

// TestBadFlags: a trace that cannot be written and a port that cannot
// be bound are refused before the chapter runs, with one line, and
// leave nothing behind.
func TestBadFlags(t *testing.T) {
	leakcheck.Verify(t)
	_, err := Start(Options{Chapter: "00-test", ViewPort: -1, File: filepath.Join(t.TempDir(), "no", "such", "dir", "t.html")}, io.Discard)
	if err == nil || !strings.HasPrefix(err.Error(), "--trace: cannot write the trace: ") || strings.Contains(err.Error(), "\n") {
		t.Errorf("unwritable trace: %v", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	file := filepath.Join(t.TempDir(), "t.html")
	_, err = Start(Options{Chapter: "00-test", ViewPort: port, File: file}, io.Discard)
	if err == nil || !strings.HasPrefix(err.Error(), "--view: cannot serve the page: ") {
		t.Errorf("busy port: %v", err)
	}
	if entries, _ := os.ReadDir(filepath.Dir(file)); len(entries) != 0 {
		t.Errorf("a refused --view left a file behind: %v", entries)
	}
	if On() {
		t.Error("a refused Start left a recorder installed")
	}
}

// TestLive follows a run on the live page: the page, then the stream
// from the start, each message as it is recorded, the end; then the
// server is gone. Loopback only, and only for a loopback Host.
func TestLive(t *testing.T) {
	leakcheck.Verify(t)
	var stderr bytes.Buffer
	s, err := Start(Options{Chapter: "00-test", ViewPort: 0}, &stderr)
	if err != nil {
		t.Fatal(err)
	}
	url := s.URL()
	if !strings.HasPrefix(url, "http://127.0.0.1:") {
		t.Fatalf("URL %q is not on loopback", url)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()

	page := get(t, ctx, url, "")
	if !strings.Contains(page, `window.TRACE_LIVE = "/events"`) {
		t.Errorf("the live page does not say where its stream is:\n%.300s", page)
	}
	for _, c := range []struct {
		what         string
		method, host string
		header       http.Header
		want         int
	}{
		{"a request for another Host", "GET", "evil.example:80", nil, http.StatusForbidden},
		{"a request from another site's page", "GET", "", http.Header{"Sec-Fetch-Site": {"cross-site"}}, http.StatusForbidden},
		{"a POST", "POST", "", nil, http.StatusMethodNotAllowed},
	} {
		req, _ := http.NewRequestWithContext(ctx, c.method, url+"events", nil)
		if c.host != "" {
			req.Host = c.host
		}
		maps.Copy(req.Header, c.header)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Errorf("%s: %v", c.what, err)
			continue
		}
		resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Errorf("%s: %s, want %d", c.what, resp.Status, c.want)
		}
	}

	// Before the page: something recorded already.
	io.WriteString(s.Writer(io.Discard), "Setup. before the page\n")
	req, _ := http.NewRequestWithContext(ctx, "GET", url+"events", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := s.WaitForPage(ctx); err != nil {
		t.Fatal(err)
	}
	msgs := make(chan Message)
	go func() {
		defer close(msgs)
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			data, ok := strings.CutPrefix(sc.Text(), "data: ")
			if !ok {
				continue
			}
			var m Message
			if err := json.Unmarshal([]byte(data), &m); err != nil {
				t.Error(err)
			}
			msgs <- m
		}
	}()
	next := func(want string) Message {
		t.Helper()
		select {
		case m, ok := <-msgs:
			if !ok {
				t.Fatalf("the stream ended; want a %q message", want)
			}
			if m.Type != want {
				t.Fatalf("message %+v, want a %q", m, want)
			}
			return m
		case <-ctx.Done():
			t.Fatalf("no %q message", want)
		}
		return Message{}
	}
	next("meta")
	next("step")
	next("output")
	Record(Event{Lane: Store, Verb: "Add"}, pod("a", "2"))
	next("object")
	if m := next("event"); m.Event.Key != "ns/a" {
		t.Errorf("event %+v", m.Event)
	}
	done := make(chan error)
	go func() { done <- s.Finish() }()
	next("end")
	if _, ok := <-msgs; ok {
		t.Error("the stream went on after its end")
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if _, err := http.Get(url); err == nil {
		t.Error("the page is still served after the run")
	}
	if stderr.Len() > 0 {
		t.Errorf("stderr: %s", stderr.String())
	}
}

// TestWaitForPageCancelled: Ctrl-C while --view waits for its page.
func TestWaitForPageCancelled(t *testing.T) {
	leakcheck.Verify(t)
	s, err := Start(Options{Chapter: "00-test", ViewPort: 0}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := s.WaitForPage(ctx); err != context.Canceled {
		t.Errorf("WaitForPage: %v, want context.Canceled", err)
	}
	if err := s.Finish(); err != nil {
		t.Fatal(err)
	}
}

func get(t *testing.T, ctx context.Context, url, host string) string {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
	if host != "" {
		req.Host = host
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %s", url, resp.Status)
	}
	return string(b)
}

// lines is a writer that hands each write to a channel.
type lines chan string

func (l lines) Write(p []byte) (int, error) { l <- string(p); return len(p), nil }

// TestPageDisconnects: a page that goes away mid-run costs one line on
// stderr; the run goes on, and its trace is whole.
func TestPageDisconnects(t *testing.T) {
	leakcheck.Verify(t)
	stderr := make(lines, 10)
	s, err := Start(Options{Chapter: "00-test", ViewPort: 0}, stderr)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	req, _ := http.NewRequestWithContext(ctx, "GET", s.URL()+"events", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.WaitForPage(t.Context()); err != nil {
		t.Fatal(err)
	}
	cancel()
	resp.Body.Close()
	Record(Event{Lane: Store, Verb: "Add"}, nil) // wakes the stream, if it waits
	select {
	case line := <-stderr:
		if line != "00-test: --view: the page disconnected; the run goes on (reload the page to follow it again)\n" {
			t.Errorf("stderr: %q", line)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no line on stderr after the page went away")
	}
	Record(Event{Lane: Store, Verb: "Add"}, nil)
	if err := s.Finish(); err != nil {
		t.Fatal(err)
	}
	if n := len(s.Recorder().Trace().Events); n != 2 {
		t.Errorf("%d events recorded, want 2", n)
	}
}

// TestTenThousandEvents: the bound, a trace of 10 000 events is
// under 2 MB as a page. The objects are pods as a chapter's are, each
// through five lanes at two resourceVersions.
func TestTenThousandEvents(t *testing.T) {
	r := New("00-test")
	r.Output("Step 1. many pods")
	lanes := []Lane{Wire, FIFO, Store, Handlers, Workqueue}
	for i := 0; len(r.t.Events) < 10000; i++ {
		p := pod("web-"+strconv.Itoa(i/2), strconv.Itoa(i+2))
		p.Labels = map[string]string{"app.kubernetes.io/managed-by": "informer-walkthrough", "app": "web"}
		p.Spec.Containers = []corev1.Container{{Name: "web", Image: "registry.k8s.io/pause:3.10"}}
		p.Spec.NodeName = "node-1"
		p.Status.Phase = corev1.PodRunning
		for _, l := range lanes {
			r.Record(Event{Lane: l, Verb: "Add", Text: "pod/" + p.Name + " rv=" + p.ResourceVersion, Func: "cache.(*cache).Add"}, p)
		}
	}
	var b bytes.Buffer
	if err := WriteHTML(&b, r.Trace()); err != nil {
		t.Fatal(err)
	}
	t.Logf("10 000 events, %d objects: %d bytes", len(r.t.Objects), b.Len())
	if b.Len() > 2<<20 {
		t.Errorf("a trace of 10 000 events is %d bytes, over 2 MB", b.Len())
	}
}

// TestTraceFileKeptUntilWhole: FILE is replaced only by a whole trace;
// until Finish, and if the run never finishes, it is as it was.
func TestTraceFileKeptUntilWhole(t *testing.T) {
	leakcheck.Verify(t)
	path := filepath.Join(t.TempDir(), "t.html")
	if err := os.WriteFile(path, []byte("an earlier trace"), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := Start(Options{Chapter: "00-test", ViewPort: -1, File: path}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	record(s)
	if b, _ := os.ReadFile(path); string(b) != "an earlier trace" {
		t.Errorf("during the run FILE holds %.40q", b)
	}
	if err := s.Finish(); err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if tr := readTrace(t, page); len(tr.Events) != 4 {
		t.Errorf("the trace has %d events, want 4", len(tr.Events))
	}
	if entries, _ := os.ReadDir(filepath.Dir(path)); len(entries) != 1 {
		t.Errorf("files left beside the trace: %v", entries)
	}
}
