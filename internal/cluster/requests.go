package cluster

import (
	"context"
	"net/http"
	"sync"

	"github.com/informer-walkthrough/informer-walkthrough/internal/apiserver"
	"github.com/informer-walkthrough/informer-walkthrough/internal/trace"
)

// requestLog is a client-side request log: every request that a client
// built from Cluster.Config sends, recorded in the same form as the
// embedded server's log. Being on the client side, it reads the same on a
// real cluster.
type requestLog struct {
	mu   sync.Mutex
	reqs []apiserver.Request
	deny context.CancelCauseFunc // see stopOnForbidden
}

// clientTransport is the transport every client built from
// Cluster.Config goes through: it logs each request, makes the faults the
// chapter asked for (ClientFaults), and stops the run at the first 403
// (stopOnForbidden) unless the config is UnguardedConfig's.
type clientTransport struct {
	next     http.RoundTripper
	reqLog   *requestLog
	faults   *ClientFaults
	allow403 bool // see UnguardedConfig
}

func (t clientTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	t.reqLog.add(r)
	var traced *tracedRequest
	if trace.On() {
		traced = traceRequest(r)
	}
	resp, synthetic, err := t.faults.roundTrip(t.next, r)
	if traced != nil {
		traceResult(r.Context(), *traced, resp, err, synthetic)
	}
	if err == nil && resp.StatusCode == http.StatusForbidden && !t.allow403 {
		t.reqLog.forbidden(r, resp)
	}
	return resp, err
}

func (l *requestLog) add(r *http.Request) {
	req := logRequest(r)
	if req.Verb == "" { // discovery, /version
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.reqs = append(l.reqs, req)
}

// Requests returns the API requests this chapter's clients have sent since
// the cluster was connected or since the last ResetRequests.
func (c *Cluster) Requests() []apiserver.Request {
	c.reqLog.mu.Lock()
	defer c.reqLog.mu.Unlock()
	return append([]apiserver.Request(nil), c.reqLog.reqs...)
}

// ResetRequests empties the client-side request log.
func (c *Cluster) ResetRequests() {
	c.reqLog.mu.Lock()
	defer c.reqLog.mu.Unlock()
	c.reqLog.reqs = nil
}
