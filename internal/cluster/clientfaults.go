package cluster

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/informer-walkthrough/informer-walkthrough/internal/apiserver"
)

// ClientFaults are faults the chapter's own client makes: every client
// built from Cluster.Config sends its requests through one transport,
// which can end the watch streams it carries, hold back their bytes, or
// answer a request itself. Being on the client side, they work the same
// on the workshop cluster and on a real one, so a step that uses them
// prints the same on both; it says that the client made the fault.
//
// client-go is not changed: it sees what it would see if the network or
// the server did the same (a stream that ends, events that arrive late,
// a Status error).
type ClientFaults struct {
	mu      sync.Mutex
	watches map[*watchBody]struct{} // open watch streams
	release chan struct{}           // non-nil while held; closed by ReleaseWatches
	answers []answer                // in the order Answer was called
}

type answer struct {
	match    func(apiserver.Request) bool
	err      *apierrors.StatusError
	inStream bool // 200 and one ERROR event, as a watch is refused
}

// Faults returns the faults of this cluster's clients.
func (c *Cluster) Faults() *ClientFaults { return &c.faults }

// EndWatches ends every watch stream open now, from the client: its next
// read returns io.EOF, as when a server closes a watch, and its
// connection's stream is closed. Bytes held back (HoldWatches) and not
// yet delivered are dropped: client-go never sees those events. It
// returns how many streams it ended.
func (f *ClientFaults) EndWatches() int {
	f.mu.Lock()
	ws := make([]*watchBody, 0, len(f.watches))
	for w := range f.watches {
		ws = append(ws, w)
	}
	clear(f.watches)
	f.mu.Unlock()
	for _, w := range ws {
		w.end()
	}
	return len(ws)
}

// OpenWatches is the number of watch streams open now.
func (f *ClientFaults) OpenWatches() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.watches)
}

// HoldWatches holds back, in the transport, the bytes of every watch
// stream (open now or opened later) that arrive from now on, until
// ReleaseWatches: nothing behind the transport (a watch's result
// channel, a reflector, a store, a handler) sees those events. Each
// stream holds the one read it is in; the server's further events wait
// behind it (in the connection, then in the server's buffer for that
// watcher), so a hold is for the few events of a step: a long one makes
// kube-apiserver close the watch as too slow.
func (f *ClientFaults) HoldWatches() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.release == nil {
		f.release = make(chan struct{})
	}
}

// ReleaseWatches delivers what HoldWatches held back, in order, and lets
// the streams flow again.
func (f *ClientFaults) ReleaseWatches() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.release != nil {
		close(f.release)
		f.release = nil
	}
}

// Answer makes the transport answer, itself, the next request that match
// accepts, with err's Status encoded as kube-apiserver encodes it (and a
// Retry-After header when err carries RetryAfterSeconds, as
// kube-apiserver sends with a 429), without sending the request to the
// server. Each Answer answers one request; the request log records the
// request as sent.
func (f *ClientFaults) Answer(match func(apiserver.Request) bool, err *apierrors.StatusError) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.answers = append(f.answers, answer{match: match, err: err})
}

// AnswerWatch makes the transport answer, itself, the next watch request
// that match accepts as kube-apiserver answers a watch it cannot serve
// from the resourceVersion asked (its watch cache's "too old resource
// version"): 200 OK, then one ERROR event carrying err's Status, then the
// end of the stream. Answer, by contrast, refuses the request itself.
func (f *ClientFaults) AnswerWatch(match func(apiserver.Request) bool, err *apierrors.StatusError) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.answers = append(f.answers, answer{match: match, err: err, inStream: true})
}

// roundTrip is the faults' part of clientTransport. synthetic is the
// answer it made itself, if it did (for the trace, which must not show
// it as the server's).
func (f *ClientFaults) roundTrip(next http.RoundTripper, r *http.Request) (resp *http.Response, synthetic *answer, err error) {
	if a, ok := f.answerFor(apiserver.NewRequest(r)); ok {
		if r.Body != nil {
			_ = r.Body.Close() // a RoundTripper closes the body, sent or not
		}
		return a.response(r), &a, nil
	}
	resp, err = next.RoundTrip(r)
	if err != nil || resp.StatusCode != http.StatusOK || r.URL.Query().Get("watch") != "true" {
		return resp, nil, err
	}
	w := &watchBody{ReadCloser: resp.Body, f: f, ended: make(chan struct{}), closed: make(chan struct{}),
		cancelled: r.Context().Done()}
	f.mu.Lock()
	if f.watches == nil {
		f.watches = map[*watchBody]struct{}{}
	}
	f.watches[w] = struct{}{}
	f.mu.Unlock()
	resp.Body = w
	return resp, nil, nil
}

// answerFor takes the first answer whose match accepts req, if any.
func (f *ClientFaults) answerFor(req apiserver.Request) (answer, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i, a := range f.answers {
		if a.match(req) {
			f.answers = append(f.answers[:i], f.answers[i+1:]...)
			return a, true
		}
	}
	return answer{}, false
}

// held returns the channel ReleaseWatches closes, or nil when nothing is
// held.
func (f *ClientFaults) held() <-chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.release
}

func (f *ClientFaults) forget(w *watchBody) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.watches, w)
}

// response is the answer as kube-apiserver would give it: the Status as
// JSON with its code, or, in a watch's stream, 200 and one ERROR event.
func (a answer) response(r *http.Request) *http.Response {
	st := a.err.Status()
	st.Kind, st.APIVersion = "Status", "v1"
	body, _ := json.Marshal(st) // a Status always marshals
	code := int(st.Code)
	h := http.Header{"Content-Type": {"application/json"}}
	if a.inStream {
		code = http.StatusOK
		body, _ = json.Marshal(metav1.WatchEvent{Type: string(watch.Error), Object: runtime.RawExtension{Raw: body}})
		body = append(body, '\n')
	} else if st.Details != nil && st.Details.RetryAfterSeconds > 0 {
		h.Set("Retry-After", strconv.Itoa(int(st.Details.RetryAfterSeconds)))
	}
	return &http.Response{
		Status:        strconv.Itoa(code) + " " + http.StatusText(code),
		StatusCode:    code,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        h,
		Body:          io.NopCloser(bytes.NewReader(body)),
		ContentLength: int64(len(body)),
		Request:       r,
	}
}

// watchBody is a watch response's body as the client reads it.
type watchBody struct {
	io.ReadCloser
	f                  *ClientFaults
	ended, closed      chan struct{}   // closed by end (EndWatches), by Close
	cancelled          <-chan struct{} // the request's context's Done
	endOnce, closeOnce sync.Once
}

// Read reads the stream; bytes that arrive while watches are held wait
// here until they are released, or dropped if the stream is ended.
func (w *watchBody) Read(p []byte) (int, error) {
	select {
	case <-w.ended:
		return 0, io.EOF
	default:
	}
	n, err := w.ReadCloser.Read(p)
	if release := w.f.held(); release != nil {
		select {
		case <-release:
		case <-w.ended:
		case <-w.closed:
		case <-w.cancelled: // the request's context ended: nobody reads on
		}
	}
	select {
	case <-w.ended:
		return 0, io.EOF // what was read after the end never arrived
	default:
	}
	if err != nil {
		w.f.forget(w)
	}
	return n, err
}

// end ends the stream from the client: the next Read returns io.EOF.
func (w *watchBody) end() {
	w.endOnce.Do(func() {
		close(w.ended)
		_ = w.ReadCloser.Close() // unblocks a Read waiting for the server
	})
}

// Close is client-go closing the stream (the watch's Stop).
func (w *watchBody) Close() error {
	w.closeOnce.Do(func() { close(w.closed) })
	w.f.forget(w)
	return w.ReadCloser.Close()
}
