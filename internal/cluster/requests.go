package cluster

import (
	"context"
	"net/http"
	"sync"

	"k8s.io/client-go/rest"

	"github.com/informer-walkthrough/informer-walkthrough/internal/apiserver"
)

// recorder is a client-side request log: every request that a client
// built from Cluster.Config sends, recorded in the same form as the
// embedded server's log. Being on the client side, it reads the same on a
// real cluster.
type recorder struct {
	mu   sync.Mutex
	reqs []apiserver.Request
	deny context.CancelCauseFunc // see stopOnForbidden
}

type recordingTransport struct {
	next     http.RoundTripper
	rec      *recorder
	faults   *ClientFaults
	allow403 bool // see ConfigExpecting403
}

func (t recordingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	t.rec.add(r)
	resp, err := t.faults.roundTrip(t.next, r)
	if err == nil && resp.StatusCode == http.StatusForbidden && !t.allow403 {
		t.rec.forbidden(r, resp)
	}
	return resp, err
}

func (rec *recorder) add(r *http.Request) {
	req := apiserver.NewRequest(r)
	if req.Verb == "" { // discovery, /version
		return
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	rec.reqs = append(rec.reqs, req)
}

// Requests returns the API requests this chapter's clients have sent since
// the cluster was connected or since the last ResetRequests.
func (c *Cluster) Requests() []apiserver.Request {
	c.rec.mu.Lock()
	defer c.rec.mu.Unlock()
	return append([]apiserver.Request(nil), c.rec.reqs...)
}

// ResetRequests empties the client-side request log.
func (c *Cluster) ResetRequests() {
	c.rec.mu.Lock()
	defer c.rec.mu.Unlock()
	c.rec.reqs = nil
}

// ConfigExpecting403 is a copy of Config for a client that a chapter
// means to be refused (10-lifecycle teaches what a 403 does to an
// informer): its requests are recorded like any other, but a 403 it gets
// does not end the run (see stopOnForbidden).
func (c *Cluster) ConfigExpecting403() *rest.Config {
	cfg := rest.CopyConfig(c.Config)
	cfg.WrapTransport = c.base
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return recordingTransport{next: rt, rec: &c.rec, faults: &c.faults, allow403: true}
	})
	return cfg
}
