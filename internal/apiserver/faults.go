package apiserver

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
)

// Request is one API request as the request log records it.
type Request struct {
	Verb     string // get list watch create update patch delete, or "" if unroutable
	Resource string // "pods", "deployments.apps"
	Method   string
	Path     string
	// Query holds the parameters that matter to the lessons (see
	// loggedParams), not timeoutSeconds, which client-go randomises.
	Query url.Values
	// Accept is the Accept header: which encoding, and which shape (a
	// metadata-only client asks "as=PartialObjectMetadata").
	Accept string
}

// loggedParams are the query parameters the request log keeps.
var loggedParams = []string{
	"watch", "resourceVersion", "resourceVersionMatch", "sendInitialEvents",
	"allowWatchBookmarks", "labelSelector", "fieldSelector", "limit", "continue",
}

// String renders a request as "GET /api/v1/namespaces/ns/pods?watch=true&…",
// parameters in the order of loggedParams.
func (r Request) String() string {
	var b strings.Builder
	b.WriteString(r.Method + " " + r.Path)
	sep := "?"
	for _, k := range loggedParams {
		for _, v := range r.Query[k] {
			b.WriteString(sep + k + "=" + url.QueryEscape(v))
			sep = "&"
		}
	}
	return b.String()
}

type requestLog struct {
	mu   sync.Mutex
	reqs []Request
}

// maxLogged bounds the request log, so that a workshop cluster left
// running all day keeps bounded memory: past it, the older half goes.
const maxLogged = 100000

func (l *requestLog) add(r *http.Request) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.reqs) >= maxLogged {
		l.reqs = append([]Request(nil), l.reqs[len(l.reqs)-maxLogged/2:]...)
	}
	l.reqs = append(l.reqs, NewRequest(r))
}

// NewRequest describes an HTTP request to the API as the request log
// records it. Verb is "" for requests that name no resource (discovery).
func NewRequest(r *http.Request) Request {
	q := url.Values{}
	for _, k := range loggedParams {
		if v, ok := r.URL.Query()[k]; ok {
			q[k] = v
		}
	}
	out := Request{Method: r.Method, Path: r.URL.Path, Query: q, Accept: r.Header.Get("Accept")}
	// The built-in resources: a client has no server's table to read.
	if req, err := parsePath(builtinRegistry(), r); err == nil {
		out.Verb, out.Resource = req.verb, req.res.String()
	}
	return out
}

// Requests returns every API request served since the server started or
// since the last ResetRequests, in arrival order (at most the last
// 100 000).
func (s *Server) Requests() []Request {
	s.log.mu.Lock()
	defer s.log.mu.Unlock()
	return append([]Request(nil), s.log.reqs...)
}

// ResetRequests empties the request log.
func (s *Server) ResetRequests() {
	s.log.mu.Lock()
	defer s.log.mu.Unlock()
	s.log.reqs = nil
}

// DropWatches ends every open watch stream, as a kube-apiserver restart or
// a load balancer timeout would. It returns how many it ended.
func (s *Server) DropWatches() int { return s.store.dropWatches() }

// CompactHistory forgets every change up to now, as etcd compaction does
// once the watch cache has moved past it: a watch from an older
// resourceVersion then gets 410 Expired. It returns the resourceVersion
// compacted to.
func (s *Server) CompactHistory() string { return fmt.Sprint(s.store.compact()) }

// SendBookmarks sends a BOOKMARK at the current resourceVersion to every
// watch that allowed bookmarks. kube-apiserver sends them on a timer; the
// workshop cluster only when asked. It returns how many it sent.
func (s *Server) SendBookmarks() int { return s.store.bookmark() }

// OpenWatches is the number of watch streams open now.
func (s *Server) OpenWatches() int { return s.store.openWatches() }

// Fault makes matching requests fail with Err.
type Fault struct {
	Verb     string // "" matches every verb
	Resource string // "pods", "deployments.apps"; "" matches every resource
	Name     string // "" matches every name
	Times    int    // how many requests fail; 0 means every one until cleared
	Err      error  // an API error (apierrors.New…) answered as its Status
}

type faults struct {
	mu   sync.Mutex
	list []*Fault
	hold chan struct{} // non-nil while watches are held
	held int           // watch requests waiting on hold
}

// InjectFault makes the next matching requests fail, e.g. a Conflict on an
// update or a Forbidden on a list.
func (s *Server) InjectFault(f Fault) {
	s.faults.mu.Lock()
	defer s.faults.mu.Unlock()
	s.faults.list = append(s.faults.list, &f)
}

// ClearFaults removes every injected fault.
func (s *Server) ClearFaults() {
	s.faults.mu.Lock()
	defer s.faults.mu.Unlock()
	s.faults.list = nil
}

func (f *faults) check(req request) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i, ft := range f.list {
		if (ft.Verb != "" && ft.Verb != req.verb) || (ft.Resource != "" && ft.Resource != req.res.String()) ||
			(ft.Name != "" && ft.Name != req.name) {
			continue
		}
		if ft.Times > 0 {
			ft.Times--
			if ft.Times == 0 {
				f.list = append(f.list[:i], f.list[i+1:]...)
			}
		}
		return ft.Err
	}
	return nil
}

// HoldWatches makes new watch requests wait, unanswered, until
// ReleaseWatches. With DropWatches it stages an outage deterministically:
// the clients' re-watches wait while the chapter changes (and compacts)
// the cluster, then all proceed at once.
func (s *Server) HoldWatches() {
	s.faults.mu.Lock()
	defer s.faults.mu.Unlock()
	if s.faults.hold == nil {
		s.faults.hold = make(chan struct{})
	}
}

// ReleaseWatches lets held watch requests proceed.
func (s *Server) ReleaseWatches() {
	s.faults.mu.Lock()
	defer s.faults.mu.Unlock()
	if s.faults.hold != nil {
		close(s.faults.hold)
		s.faults.hold = nil
	}
}

// HeldWatches is the number of watch requests waiting on HoldWatches.
func (s *Server) HeldWatches() int {
	s.faults.mu.Lock()
	defer s.faults.mu.Unlock()
	return s.faults.held
}

// waitWhileHeld blocks a watch request while watches are held. It
// reports false if the request or the server ended first.
func (f *faults) waitWhileHeld(done, closing <-chan struct{}) bool {
	f.mu.Lock()
	hold := f.hold
	if hold != nil {
		f.held++
	}
	f.mu.Unlock()
	if hold == nil {
		return true
	}
	defer func() {
		f.mu.Lock()
		f.held--
		f.mu.Unlock()
	}()
	select {
	case <-hold:
		return true
	case <-done:
	case <-closing:
	}
	return false
}
