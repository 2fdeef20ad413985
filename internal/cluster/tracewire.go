package cluster

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/informer-walkthrough/informer-walkthrough/internal/apiserver"
	"github.com/informer-walkthrough/informer-walkthrough/internal/trace"
)

// The trace's two lanes nearest the server are recorded here, in the
// transport every client of the chapter goes through, so they read the
// same on a real cluster: the wire (each request as it leaves, each
// watch event or bookmark as it arrives) and the API server (each
// answer: its status, and the object or list it carried).

// tracedRequest is a request the trace follows: what the request log
// knows of it, and the client-go function that sent it ("" for a
// request sent by hand, e.g. with rest.HTTPClientFor, as 01 does to
// show the wire).
type tracedRequest struct {
	apiserver.Request
	sender string
}

// traceRequest records a request as it leaves the client; nil for one
// that is not an API request (discovery, /version), as the request log
// leaves those out too. It runs on the sender's goroutine (a transport's
// RoundTrip does), so the call stack names the client-go function that
// sent it.
func traceRequest(r *http.Request) *tracedRequest {
	req := logRequest(r)
	if req.Verb == "" {
		return nil
	}
	sender, _ := trace.Caller(func(name string) bool {
		switch name {
		case "rest.(*Request).Do", "rest.(*Request).Watch", "rest.(*Request).Stream", "rest.(*Request).DoRaw":
			return true
		}
		return false
	})
	text := strings.TrimPrefix(req.String(), req.Method+" ")
	trace.Record(trace.Event{Lane: trace.Wire, Verb: req.Method, Text: req.Verb + " " + text, Func: sender}, nil)
	return &tracedRequest{Request: req, sender: sender}
}

// traceResult records the answer to req when client-go has read it,
// and, for a watch, each event as it arrives; or that no answer came.
// An answer the client's own transport made (ClientFaults: synthetic)
// is recorded on the wire as that, never as the API server's.
//
// A request whose context ended before its answer (a chapter stopping
// an informer, a leader elector stopping mid-renewal) is the client
// giving up, not the wire failing; and whether it was still in flight
// when its caller stopped is a race: it is not recorded.
func traceResult(ctx context.Context, req tracedRequest, resp *http.Response, err error, synthetic *answer) {
	if err != nil {
		if ctx.Err() == nil { // not a request its caller gave up on
			trace.Record(trace.Event{Lane: trace.Wire, Verb: "ERR", Text: req.Verb + " " + req.Resource + ": no answer: " + err.Error()}, nil)
		}
		return
	}
	if synthetic != nil {
		st := synthetic.err.Status()
		text := fmt.Sprintf("%s %s answered by the client's own transport, not the server: %d %s", req.Verb, req.Resource, st.Code, statusText(string(st.Reason), st.Message))
		if synthetic.inStream {
			text = fmt.Sprintf("%s %s answered by the client's own transport, not the server: 200, then one ERROR event: %s", req.Verb, req.Resource, statusText(string(st.Reason), st.Message))
		}
		trace.Record(trace.Event{Lane: trace.Wire, Verb: "FAULT", Text: text}, nil)
		return
	}
	watching := req.Verb == "watch" || req.Query.Get("watch") == "true"
	if watching && resp.StatusCode == http.StatusOK {
		trace.Record(trace.Event{Lane: trace.APIServer, Verb: "200", Text: "watch " + req.Resource + ": stream open"}, nil)
		// Only a stream that rest's Watch opened is read by a
		// StreamWatcher; one read by hand is read by its sender.
		receiver := ""
		if req.sender == "rest.(*Request).Watch" {
			receiver = "watch.(*StreamWatcher).receive"
		}
		resp.Body = &tracedStream{ReadCloser: resp.Body, json: isJSON(resp), protobuf: isProtobuf(resp), receiver: receiver}
		return
	}
	resp.Body = &tracedAnswer{ReadCloser: resp.Body, req: req.Request, status: resp.StatusCode, json: isJSON(resp)}
}

func isProtobuf(resp *http.Response) bool {
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	return mt == runtime.ContentTypeProtobuf
}

func isJSON(resp *http.Response) bool {
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	return mt == "application/json"
}

// maxTraced bounds what a traced answer keeps to describe it.
const maxTraced = 8 << 20

// tracedAnswer is an answer's body: once read to its end (or closed), it
// records what it carried.
type tracedAnswer struct {
	io.ReadCloser
	req    apiserver.Request
	status int
	json   bool

	buf  bytes.Buffer
	once sync.Once
}

func (a *tracedAnswer) Read(p []byte) (int, error) {
	n, err := a.ReadCloser.Read(p)
	if a.buf.Len() < maxTraced {
		a.buf.Write(p[:n])
	}
	if err == io.EOF {
		a.once.Do(a.record)
	}
	return n, err
}

func (a *tracedAnswer) Close() error {
	a.once.Do(a.record)
	return a.ReadCloser.Close()
}

// tracedBody is what a traced answer's JSON may hold: an object, a list, or
// a Status.
type tracedBody struct {
	Kind     string `json:"kind"`
	Metadata struct {
		Name            string            `json:"name"`
		Namespace       string            `json:"namespace"`
		ResourceVersion string            `json:"resourceVersion"`
		Continue        string            `json:"continue"`
		Annotations     map[string]string `json:"annotations"`
	} `json:"metadata"`
	Items   []json.RawMessage `json:"items"`
	Rows    []json.RawMessage `json:"rows"`
	Reason  string            `json:"reason"`
	Message string            `json:"message"`
}

func (a *tracedAnswer) record() {
	verb := a.req.Verb
	if verb == "" {
		verb = a.req.Method
	}
	e := trace.Event{Lane: trace.APIServer, Verb: fmt.Sprint(a.status), Text: verb + " " + a.req.Resource}
	var obj any
	var ans tracedBody
	switch {
	case !a.json:
		e.Text += ": " + describeProtobuf(a.buf.Bytes(), &e, &obj)
	case json.Unmarshal(a.buf.Bytes(), &ans) != nil:
		e.Text += ": (not read whole)"
	case ans.Kind == "Status":
		e.Text += ": " + statusText(ans.Reason, ans.Message)
	case strings.HasSuffix(ans.Kind, "List"):
		e.Text += fmt.Sprintf(": %d items, rv=%s", len(ans.Items), ans.Metadata.ResourceVersion)
		if ans.Metadata.Continue != "" {
			e.Text += ", continue"
		}
	case ans.Kind == "Table":
		e.Text += fmt.Sprintf(": Table, %d rows, rv=%s", len(ans.Rows), ans.Metadata.ResourceVersion)
	default:
		e.Text += ": " + strings.ToLower(ans.Kind) + "/" + ans.Metadata.Name + " rv=" + ans.Metadata.ResourceVersion
		e.Key, e.RV = key(ans), ans.Metadata.ResourceVersion
		obj = json.RawMessage(a.buf.Bytes())
	}
	trace.Record(e, obj)
}

// tracedStream is a watch's body: each event is recorded as it arrives
// whole (kube-apiserver, like the workshop cluster, ends each JSON
// event with a newline), then the stream's end. Not who ended it: when
// a chapter stops a watch, the server's end, the client's close and the
// cancelled read race, and which comes first is beside the point.
//
// Nor what a read returns once its reader closed the stream: closing a
// response body does not end a read already under way on another
// goroutine (a StreamWatcher's receive), and the server sends to a
// watch until it sees the connection go, so such a read can still return
// an event of the chapter's next step (the first write after a step
// stopped its informers). Nobody gets it: StreamWatcher.Stop closes done
// before it closes the body, and receive, finding done closed and its
// consumer gone, drops what it decodes then (apimachinery v0.37.2,
// pkg/watch/streamwatcher.go#L103-L104 and #L137). Whether it is read at
// all is a race; it is not recorded.
type tracedStream struct {
	io.ReadCloser
	json     bool
	protobuf bool
	receiver string // the client-go function that reads the stream, or ""
	partial  []byte
	once     sync.Once
	closed   atomic.Bool // its reader closed it
}

func (s *tracedStream) Read(p []byte) (int, error) {
	n, err := s.ReadCloser.Read(p)
	if s.closed.Load() { // relayed, not recorded; Close recorded the end
		return n, err
	}
	switch {
	case s.json:
		s.partial = append(s.partial, p[:n]...)
		for {
			i := bytes.IndexByte(s.partial, '\n')
			if i < 0 {
				break
			}
			recordFrame(s.partial[:i], s.receiver)
			s.partial = s.partial[i+1:]
		}
	case s.protobuf:
		// Each event is a frame: its length (4 bytes, big-endian), then
		// a WatchEvent (apimachinery's LengthDelimitedFramer).
		s.partial = append(s.partial, p[:n]...)
		for len(s.partial) >= 4 {
			size := int(binary.BigEndian.Uint32(s.partial))
			if len(s.partial) < 4+size {
				break
			}
			if !protobufFrame(s.partial[4:4+size], s.receiver) {
				trace.Record(trace.Event{Lane: trace.Wire, Verb: "EVENT", Text: fmt.Sprintf("%d bytes of protobuf, not decoded", size), Func: s.receiver}, nil)
			}
			s.partial = s.partial[4+size:]
		}
	}
	if err != nil {
		s.once.Do(s.end)
	}
	return n, err
}

func (s *tracedStream) Close() error {
	s.closed.Store(true) // before the close: a read it ends returns after
	s.once.Do(s.end)
	return s.ReadCloser.Close()
}

func (s *tracedStream) end() {
	trace.Record(trace.Event{Lane: trace.Wire, Verb: "END", Text: "watch stream ended"}, nil)
}

// frame is one watch event on the wire.
type frame struct {
	Type   string          `json:"type"`
	Object json.RawMessage `json:"object"`
}

// traceCodecs decode what the wire carries in protobuf: client-go's
// scheme, and the meta types a metadata-only client asks for
// (PartialObjectMetadata, its list; client-go's scheme has not them).
var traceCodecs = func() serializer.CodecFactory {
	s := runtime.NewScheme()
	utilruntime.Must(scheme.AddToScheme(s))
	utilruntime.Must(metav1.AddMetaToScheme(s))
	metav1.AddToGroupVersion(s, schema.GroupVersion{Version: "v1"})
	return serializer.NewCodecFactory(s)
}()

// protobufEvents decodes a protobuf watch stream's events, as client-go's
// watch decoder does (rest/watch.Decoder): the frame is a WatchEvent,
// its object an object of traceCodecs' scheme.
var protobufEvents = func() runtime.Serializer {
	info, _ := runtime.SerializerInfoForMediaType(traceCodecs.SupportedMediaTypes(), runtime.ContentTypeProtobuf)
	return info.StreamSerializer.Serializer
}()

// protobufFrame records a protobuf watch event, described from the
// decoded object itself (not from JSON made of it and read back); false
// if it cannot be decoded.
func protobufFrame(b []byte, receiver string) bool {
	var ev metav1.WatchEvent
	if _, _, err := protobufEvents.Decode(b, nil, &ev); err != nil {
		return false
	}
	obj, err := runtime.Decode(traceCodecs.UniversalDeserializer(), ev.Object.Raw)
	if err != nil {
		return false
	}
	var o tracedBody
	o.Kind = obj.GetObjectKind().GroupVersionKind().Kind
	if st, ok := obj.(*metav1.Status); ok {
		o.Kind, o.Reason, o.Message = "Status", string(st.Reason), st.Message
	} else if m, err := meta.Accessor(obj); err == nil {
		o.Metadata.Name, o.Metadata.Namespace = m.GetName(), m.GetNamespace()
		o.Metadata.ResourceVersion, o.Metadata.Annotations = m.GetResourceVersion(), m.GetAnnotations()
	}
	raw, err := json.Marshal(obj)
	if err != nil {
		return false
	}
	recordEvent(ev.Type, o, raw, receiver)
	return true
}

func recordFrame(line []byte, receiver string) {
	var f frame
	if json.Unmarshal(line, &f) != nil {
		return
	}
	var o tracedBody
	_ = json.Unmarshal(f.Object, &o)
	recordEvent(f.Type, o, f.Object, receiver)
}

// recordEvent records a watch event on the wire: its type, what its
// object says of itself, the object (raw JSON), the function reading it.
func recordEvent(typ string, o tracedBody, raw json.RawMessage, receiver string) {
	e := trace.Event{Lane: trace.Wire, Verb: typ, Key: key(o), RV: o.Metadata.ResourceVersion, Func: receiver}
	var obj any = raw
	switch typ {
	case "BOOKMARK":
		e.Text = "rv=" + o.Metadata.ResourceVersion
		if o.Metadata.Annotations["k8s.io/initial-events-end"] == "true" {
			e.Text += " k8s.io/initial-events-end"
		}
		obj = nil
	case "ERROR":
		e.Text = o.Reason + ": " + o.Message
	default:
		e.Text = strings.ToLower(o.Kind) + "/" + o.Metadata.Name + " rv=" + o.Metadata.ResourceVersion
	}
	trace.Record(e, obj)
}

// key is an object's cache key: namespace/name, or name.
func key(a tracedBody) string {
	if a.Metadata.Namespace == "" {
		return a.Metadata.Name
	}
	return a.Metadata.Namespace + "/" + a.Metadata.Name
}

// describeProtobuf describes an answer in protobuf, which client-go's
// typed clients ask for: decoded with client-go's scheme, as they
// decode it. It sets e's key and rv, and *obj, for an object.
func describeProtobuf(body []byte, e *trace.Event, obj *any) string {
	o, _, err := traceCodecs.UniversalDeserializer().Decode(body, nil, nil)
	if err != nil {
		return fmt.Sprintf("%d bytes of protobuf", len(body))
	}
	if st, ok := o.(*metav1.Status); ok {
		return statusText(string(st.Reason), st.Message)
	}
	if meta.IsListType(o) {
		l, _ := meta.ListAccessor(o)
		n := meta.LenList(o)
		s := fmt.Sprintf("%d items, rv=%s", n, l.GetResourceVersion())
		if l.GetContinue() != "" {
			s += ", continue"
		}
		return s
	}
	m, err := meta.Accessor(o)
	if err != nil {
		return fmt.Sprintf("%d bytes of protobuf", len(body))
	}
	kind := o.GetObjectKind().GroupVersionKind().Kind
	e.Key, e.RV = m.GetName(), m.GetResourceVersion()
	if m.GetNamespace() != "" {
		e.Key = m.GetNamespace() + "/" + e.Key
	}
	*obj = o
	return strings.ToLower(kind) + "/" + m.GetName() + " rv=" + m.GetResourceVersion()
}

// statusText is a Status as one line: its reason and message, or
// Success (a delete's answer).
func statusText(reason, message string) string {
	if reason == "" && message == "" {
		return "Success"
	}
	return reason + ": " + message
}
