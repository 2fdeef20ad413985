package tap

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"path"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"

	"github.com/informer-walkthrough/informer-walkthrough/internal/apiserver"
	"github.com/informer-walkthrough/informer-walkthrough/internal/trace"
)

// Transport returns a copy of cfg whose clients record each API request
// they send, and what the server answered, as a Request on lane (the
// component that sends them: trace.Workers for a controller's client).
// A step can hold a request before it leaves (Recorder.Hold).
//
// The wire and the server's answers are already on the trace (the
// chapters' transport, internal/cluster): this tap adds, for the steps,
// which of them this client sent.
func Transport(cfg *rest.Config, rec *Recorder, lane trace.Lane) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripper{next: rt, rec: rec, lane: lane}
	})
	return cfg
}

type roundTripper struct {
	next http.RoundTripper
	rec  *Recorder
	lane trace.Lane
}

// Request is one API request a client sent.
type Request struct {
	apiserver.Request
	Name string // the object named in the path, if any
	// Obj is the object the request carried (a create's or an
	// update's), decoded as client-go's scheme knows it, or nil.
	Obj runtime.Object
	// Code and Reason are the server's answer: 201, or 409 and
	// "Conflict". Code is 0 while the request is held, or if it failed.
	Code   int
	Reason string
	Err    error
	Held   bool // a step held it before it left
	lane   trace.Lane
}

func (t roundTripper) RoundTrip(r *http.Request) (*http.Response, error) {
	req := Request{Request: apiserver.NewRequest(r), lane: t.lane}
	if req.Verb == "" { // discovery, /version: not an API request
		return t.next.RoundTrip(r)
	}
	if req.Verb != "list" && req.Verb != "watch" && req.Verb != "create" {
		req.Name = path.Base(r.URL.Path)
	}
	if r.GetBody != nil {
		if body, err := r.GetBody(); err == nil {
			raw, _ := io.ReadAll(body)
			_ = body.Close()
			req.Obj, _, _ = scheme.Codecs.UniversalDeserializer().Decode(raw, nil, nil)
		}
	}
	if m, err := meta.Accessor(req.Obj); err == nil && req.Name == "" {
		req.Name = m.GetName() // a create's
	}
	// A hold happens before the request leaves: what the server holds
	// then is what the held request will meet.
	if g := t.rec.holding(req); g != nil {
		req.Held = true
		t.rec.emit(Held{Event: req})
		g.wait(t.rec.done)
	}
	resp, err := t.next.RoundTrip(r)
	req.Err = err
	if err == nil {
		req.Code, req.Reason = resp.StatusCode, reason(resp)
	}
	t.rec.emit(req)
	return resp, err
}

// reason is the reason of the Status an error answer carries
// ("Conflict", "NotFound"), read from a copy of its body; "" for a
// success.
func reason(resp *http.Response) string {
	if resp.StatusCode < 300 || resp.Body == nil {
		return ""
	}
	raw, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(raw))
	if err != nil {
		return ""
	}
	// JSON or protobuf, as the client asked.
	obj, _, err := scheme.Codecs.UniversalDeserializer().Decode(raw, nil, nil)
	if status, ok := obj.(*metav1.Status); ok && err == nil {
		return string(status.Reason)
	}
	return ""
}

// String is the request as the request log shows it, and its answer.
func (r Request) String() string {
	s := r.Request.String()
	if r.Code != 0 {
		s += " " + strings.TrimSpace(fmt.Sprintf("→ %d %s", r.Code, r.Reason))
	}
	return s
}

// Trace is the request on its client's lane.
func (r Request) Trace() (trace.Event, any) {
	text := fmt.Sprintf("%s %s/%s", r.Verb, r.Resource, r.Name)
	if r.Code != 0 {
		text += " " + strings.TrimSpace(fmt.Sprintf("→ %d %s", r.Code, r.Reason))
	}
	return trace.Event{Lane: r.lane, Verb: r.Method, Text: text}, nil
}
