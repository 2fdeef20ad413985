package apiserver

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternal "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metainternalscheme "k8s.io/apimachinery/pkg/apis/meta/internalversion/scheme"
	metainternalvalidation "k8s.io/apimachinery/pkg/apis/meta/internalversion/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	apisharding "k8s.io/apimachinery/pkg/sharding"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
)

// Options configure a workshop cluster. The zero value is what chapters use.
type Options struct {
	// Now is the server's clock for creationTimestamp and
	// deletionTimestamp. Default: a fixed instant, so output is
	// deterministic.
	Now func() time.Time
	// MaxHistory bounds the event history (kube-apiserver's watch cache
	// window). Default 100000 events.
	MaxHistory int
	// Port to listen on, on 127.0.0.1 only. Default 0: a free port.
	Port int
	// Bootstrap starts the server with what a real cluster has before
	// anyone writes to it (transcript 91): the namespaces default,
	// kube-system, kube-public and kube-node-lease, the default/kubernetes
	// Service (10.0.0.1, port 443 "https"), and a "default"
	// ServiceAccount in every namespace, made as the namespace is (as
	// kube-controller-manager's serviceaccounts controller makes it, a
	// moment later). The workshop package turns it on; the chapters
	// leave it off, so that their resourceVersions count from an empty
	// cluster.
	Bootstrap bool
	// ShardSelectors, if set, turns on the ShardedListAndWatch gate: it
	// parses a list's or watch's shardSelector parameter (package
	// shardparse supplies kube-apiserver's own parser). Default nil: the
	// gate is off, kube-apiserver's default, and the parameter is ignored
	// (sharding.go). The parser is an option so that only what uses it
	// (chapter 12, cmd/workshop-cluster, hack/scalesync; a workshop user
	// passes it in) links
	// k8s.io/apiserver and the CEL libraries it brings.
	ShardSelectors func(string) (apisharding.Selector, error)
	// Admission, if set, makes the server's admission (admission.go):
	// package internal/apiserver/admission's Enabled runs
	// kube-apiserver's webhook and policy plugins. Default nil: every
	// write is admitted as it is, and k8s.io/apiserver is not linked.
	Admission func(*Server) (Admission, error)
	// Extend, if set, runs once before the server answers its first
	// request, to serve more than the built-in kinds: crd.Serve adds
	// CustomResourceDefinitions (custom.go).
	Extend func(*Server) error
	// TLS serves HTTPS instead of plain HTTP, with a certificate
	// authority made at start (tls.go): Config and CA carry its
	// certificate, for clients that trust it as a kubeconfig's
	// certificate-authority-data. Default false: the chapters talk plain
	// HTTP, so that what they show on the wire stays readable;
	// cmd/workshop-cluster turns it on, for clients that refuse a
	// kubeconfig naming http://.
	TLS bool
	// GarbageCollection acts on ownerReferences, as a cluster with
	// kube-controller-manager does (gc.go): a DELETE's propagationPolicy
	// (Background, Foreground, Orphan) is honoured, and an object whose
	// owners are gone is deleted. Default false: as kube-apiserver with
	// --enable-garbage-collector=false, ownerReferences are stored and
	// never acted on, and no policy adds a finalizer.
	GarbageCollection bool
}

// FixedTime is the instant the workshop cluster's clock shows by default.
var FixedTime = time.Date(2026, time.January, 1, 0, 0, 0, 0, time.UTC)

// Server is a running workshop cluster: an in-process Kubernetes API server
// on a loopback port, spoken to over real HTTP by unmodified client-go.
type Server struct {
	store    *store
	http     *http.Server
	listener net.Listener
	url      string
	tls      *serverTLS // nil: plain HTTP
	log      requestLog
	faults   faults

	closing chan struct{}
	wg      sync.WaitGroup
	once    sync.Once

	connMu sync.Mutex
	unused map[net.Conn]bool // no request in hand (http.StateNew, StateIdle)
	grace  time.Duration     // how long Close lets requests in flight finish

	// parseShard parses shardSelector; nil: the ShardedListAndWatch
	// gate is off.
	parseShard func(string) (apisharding.Selector, error)
}

// Start starts a workshop cluster on a random port of 127.0.0.1.
func Start(opts Options) (*Server, error) {
	now := opts.Now
	if now == nil {
		now = func() time.Time { return FixedTime }
	}
	if opts.MaxHistory == 0 {
		opts.MaxHistory = 100000
	}
	// Loopback only: the workshop cluster has no authentication.
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(opts.Port)))
	if err != nil {
		return nil, fmt.Errorf("workshop cluster: %w", err)
	}
	s := &Server{
		store:    newStore(func() metav1.Time { return metav1.NewTime(now().UTC().Truncate(time.Second)) }, opts.MaxHistory),
		listener: ln,
		url:      "http://" + ln.Addr().String(),
		closing:  make(chan struct{}),
		unused:   map[net.Conn]bool{},
		grace:    250 * time.Millisecond,

		parseShard: opts.ShardSelectors,
	}
	if opts.Bootstrap {
		if err := s.store.bootstrap(); err != nil {
			_ = ln.Close()
			return nil, fmt.Errorf("workshop cluster: %w", err)
		}
	}
	if opts.Admission != nil {
		if s.store.admission, err = opts.Admission(s); err != nil {
			_ = ln.Close()
			return nil, fmt.Errorf("workshop cluster: %w", err)
		}
	}
	if opts.Extend != nil {
		if err := opts.Extend(s); err != nil {
			_ = ln.Close()
			return nil, fmt.Errorf("workshop cluster: %w", err)
		}
	}
	s.http = &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second, ConnState: s.trackUnused}
	if opts.TLS {
		if s.tls, err = newServerTLS(); err != nil {
			_ = ln.Close()
			return nil, fmt.Errorf("workshop cluster: %w", err)
		}
		s.http.TLSConfig = s.tls.config()
		// A client that does not trust the CA is told so by its own
		// TLS check; the server's line about it ("TLS handshake error")
		// would only be noise in a test's output.
		s.http.ErrorLog = log.New(io.Discard, "", 0)
		s.url = "https://" + ln.Addr().String()
	}
	if opts.GarbageCollection {
		s.store.mu.Lock()
		s.store.gc = startCollector(s.store)
		s.store.mu.Unlock()
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		// Both return http.ErrServerClosed on Close.
		if opts.TLS {
			_ = s.http.ServeTLS(ln, "", "")
		} else {
			_ = s.http.Serve(ln)
		}
	}()
	return s, nil
}

// URL is the server's base URL, e.g. http://127.0.0.1:40123
// (https://127.0.0.1:40123 with Options.TLS).
func (s *Server) URL() string { return s.url }

// CA is the certificate of the CA that signed the server's serving
// certificate, in PEM, with Options.TLS: a kubeconfig's
// certificate-authority-data. Nil without.
func (s *Server) CA() []byte {
	if s.tls == nil {
		return nil
	}
	return slices.Clone(s.tls.caPEM)
}

// ClientCertificate is a user's certificate and key, in PEM, signed by
// the server's CA, with Options.TLS: a kubeconfig's
// client-certificate-data and client-key-data (tls.go says why a
// server without authentication hands one out). Nil without.
func (s *Server) ClientCertificate() (cert, key []byte) {
	if s.tls == nil {
		return nil, nil
	}
	return slices.Clone(s.tls.clientCert), slices.Clone(s.tls.clientKey)
}

// Config is a *rest.Config for this server, as a kubeconfig would give:
// with Options.TLS, it trusts the server's CA (and nothing else) and
// presents the client certificate.
func (s *Server) Config() *rest.Config {
	cert, key := s.ClientCertificate()
	return &rest.Config{Host: s.url, QPS: -1, TLSClientConfig: rest.TLSClientConfig{
		CAData: s.CA(), CertData: cert, KeyData: key,
	}}
}

// trackUnused keeps the connections that carry no request now: accepted
// with none read yet, and those between requests (net/http reports an
// HTTP/2 connection's to this hook only: its Shutdown does not know them
// idle, and would wait for them until it gives up). Once the server is
// closing, such a connection is closed as it becomes one: a watch that
// Close ends leaves its connection idle after Close has looked.
func (s *Server) trackUnused(c net.Conn, state http.ConnState) {
	s.connMu.Lock()
	defer s.connMu.Unlock()
	if state != http.StateNew && state != http.StateIdle {
		delete(s.unused, c)
		return
	}
	select {
	case <-s.closing:
		_ = c.Close() // no request can come on it now
	default:
		s.unused[c] = true
	}
}

// Close ends every watch and stops the server. It waits for every
// connection to finish, so no goroutine outlives it.
func (s *Server) Close() error {
	s.once.Do(func() {
		close(s.closing)
		s.store.dropWatches()
		// Shutdown lets requests in flight finish, but it would wait 5 s
		// for a connection accepted and never used: net/http's Transport
		// dials one when a request finds no idle connection, and keeps it
		// unused if another frees up first. It would wait, too, for an
		// HTTP/2 connection (Options.TLS) with no request open. No
		// request can come on such a connection now; close them, so
		// that Shutdown does not wait.
		s.connMu.Lock()
		for c := range s.unused {
			_ = c.Close()
		}
		s.connMu.Unlock()
		// What is left after a short grace, Close cuts.
		ctx, cancel := context.WithTimeout(context.Background(), s.grace)
		defer cancel()
		if err := s.http.Shutdown(ctx); err != nil {
			_ = s.http.Close()
		}
		if s.store.gc != nil {
			s.store.gc.close()
		}
		if s.store.admission != nil {
			s.store.admission.Close() // admission: its goroutines end
		}
		s.wg.Wait()
	})
	return nil
}

// ResourceVersion is the cluster's current resourceVersion.
func (s *Server) ResourceVersion() string {
	return fmt.Sprint(s.store.currentRV())
}

// request is one API request, parsed.
type request struct {
	verb        string // get list watch create update patch delete
	res         *Resource
	namespace   string
	name        string
	subresource string
}

// ServeHTTP routes a request by its path, kube-apiserver style:
//
//	/api/v1/namespaces/{ns}/{resource}[/{name}[/{subresource}]]
//	/api/v1/{resource}[/{name}[/{subresource}]]
//	/apis/{group}/{version}/... likewise
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if serveHealth(w, r) || s.serveDiscovery(w, r) || serveOpenAPI(w, r) || s.serveOpenIDMetadata(w, r) {
		return
	}
	s.log.add(r)
	req, err := parsePath(s.store.reg, r)
	if errors.Is(err, errNoHandler) {
		// No group-version served here claims the path: kube-apiserver's
		// last handler is net/http's NotFound (k8s.io/apiserver
		// pkg/util/notfoundhandler), a plain-text 404, which client-go
		// reports as "the server could not find the requested resource".
		http.NotFound(w, r)
		return
	}
	if err != nil {
		writeError(w, err)
		return
	}
	info, as, ok := negotiate(r)
	if !ok {
		// As kube-apiserver words it (transcript 48): no details.
		writeError(w, notAcceptable("only the following media types are accepted: "+strings.Join(supportedMediaTypes(), ", ")))
		return
	}
	if as != nil && as.kind == asTable {
		if as.table, err = parseTableOptions(r.URL.Query(), s.store.now); err != nil {
			writeError(w, err)
			return
		}
		as.res = req.res
	}
	rw := responder{w: w, info: info, as: as, res: req.res}
	// An injected fault is answered like a real error, in the media type
	// the client asked for.
	if err := s.faults.check(req); err != nil {
		rw.error(err)
		return
	}
	if req.subresource == "scale" {
		s.serveScale(rw, r, req)
		return
	}
	if podSubresource(req.res, req.subresource) {
		s.servePodSubresource(rw, r, req)
		return
	}
	if isTokenSubresource(req.res, req.subresource) {
		s.serveToken(rw, r, req)
		return
	}
	s.serveVerb(rw, r, req)
}

// serveVerb hands a request for a resource to its verb's handler.
func (s *Server) serveVerb(rw responder, r *http.Request, req request) {
	switch req.verb {
	case "get":
		obj, err := s.store.get(req.res, req.namespace, req.name)
		rw.respond(http.StatusOK, obj, err)
	case "list":
		s.serveList(rw, r, req)
	case "watch":
		s.serveWatch(rw, r, req)
	case "create":
		s.serveCreate(rw, r, req)
	case "update":
		s.serveUpdate(rw, r, req)
	case "patch":
		s.servePatch(rw, r, req)
	case "delete":
		s.serveDelete(rw, r, req)
	case "deletecollection":
		s.serveDeleteCollection(rw, r, req)
	default:
		rw.error(apierrors.NewMethodNotSupported(req.res.GroupResource(), r.Method))
	}
}

// serveCreate is a POST to a collection.
func (s *Server) serveCreate(rw responder, r *http.Request, req request) {
	opts := &metav1.CreateOptions{}
	ctx, warnings := withAdmission(r.Context(), opts) // admission: the options, its warnings
	dry, err := writeOptions(r.URL.Query(), opts)
	var obj runtime.Object
	if err == nil {
		obj, err = decodeBody(rw.w, r, req.res)
	}
	if err == nil {
		obj, err = s.store.create(ctx, req.res, req.namespace, fieldManager(r), obj, dry)
	}
	warn(rw.w, *warnings)
	rw.respond(http.StatusCreated, obj, err)
}

// serveUpdate is a PUT of an object or of its status (or approval).
func (s *Server) serveUpdate(rw responder, r *http.Request, req request) {
	opts := &metav1.UpdateOptions{}
	ctx, warnings := withAdmission(r.Context(), opts) // admission: the options, its warnings
	dry, err := writeOptions(r.URL.Query(), opts)
	var obj runtime.Object
	if err == nil {
		obj, err = decodeBody(rw.w, r, req.res)
	}
	if err == nil {
		obj, err = s.store.update(ctx, req.res, req.namespace, req.name, req.subresource, fieldManager(r), obj, dry)
	}
	warn(rw.w, *warnings)
	rw.respond(http.StatusOK, obj, err)
}

// servePatch is a PATCH: a server-side apply (apply.go), or a JSON,
// merge or strategic merge patch.
func (s *Server) servePatch(rw responder, r *http.Request, req request) {
	patchType := types.PatchType(strings.Split(r.Header.Get("Content-Type"), ";")[0])
	opts, err := parsePatchOptions(r.URL.Query(), patchType)
	if err != nil {
		rw.error(err)
		return
	}
	if patchType == types.ApplyYAMLPatchType {
		ctx, warnings := withAdmission(r.Context(), nil) // admission: its warnings
		obj, created, err := s.apply(r.WithContext(ctx), req, opts)
		warn(rw.w, *warnings)
		code := http.StatusOK
		if created {
			code = http.StatusCreated
		}
		rw.respond(code, obj, err)
		return
	}
	ctx, warnings := withAdmission(r.Context(), nil) // admission: its warnings
	obj, err := s.patch(ctx, rw.w, r, req, len(opts.DryRun) > 0)
	warn(rw.w, *warnings)
	rw.respond(http.StatusOK, obj, err)
}

// serveDelete is a DELETE of an object: the answer is the object, or a
// Status for kinds deleted at once.
func (s *Server) serveDelete(rw responder, r *http.Request, req request) {
	opts, err := deleteOptions(r)
	if err != nil {
		rw.error(err)
		return
	}
	ctx, warnings := withAdmission(r.Context(), opts) // admission: the options, its warnings
	res, err := s.store.delete(ctx, req.res, req.namespace, req.name, opts)
	warn(rw.w, *warnings)
	switch {
	case err != nil:
		rw.error(err)
	case res.Status != nil:
		rw.status(http.StatusOK, res.Status)
	//nolint:staticcheck // SA1019: 202 only for orphanDependents=false, as kube-apiserver's handler (transcript 128)
	case res.Pending && opts.OrphanDependents != nil && !*opts.OrphanDependents:
		rw.respond(http.StatusAccepted, res.Object, nil)
	default:
		rw.respond(http.StatusOK, res.Object, nil)
	}
}

// serveDeleteCollection deletes every object of the collection that the
// request's selectors match, one by one as kube-apiserver's
// Store.DeleteCollection does, and answers with the list of them
// (controller-runtime's DeleteAllOf, kubectl delete --all).
func (s *Server) serveDeleteCollection(rw responder, r *http.Request, req request) {
	opts, err := parseListOptions(r.URL.Query(), req.res, req.namespace)
	if err != nil {
		rw.error(err)
		return
	}
	del, err := deleteOptions(r)
	if err != nil {
		rw.error(err)
		return
	}
	ctx, warnings := withAdmission(r.Context(), del) // admission: the options, its warnings
	list, err := s.store.deleteCollection(ctx, req.res, listOptions{
		Namespace: req.namespace, Label: opts.LabelSelector, Field: opts.FieldSelector,
	}, del)
	warn(rw.w, *warnings)
	if err != nil {
		rw.error(err)
		return
	}
	gvk := req.res.GroupVersionKind()
	list.GetObjectKind().SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	rw.write(http.StatusOK, func(w io.Writer) error { return rw.info.Serializer.Encode(list, w) })
}

// errNoHandler: no served group-version claims the path.
var errNoHandler = errors.New("no handler")

// errNoRoute is kube-apiserver's answer to a path under a served
// group-version that names no resource, or no subresource, served there:
// go-restful finds no route, and kube-apiserver's serviceErrorHandler
// (k8s.io/apiserver pkg/server/handler.go) answers a 404 Status with no
// name and no details.
func errNoRoute() error {
	return apierrors.NewGenericServerResponse(http.StatusNotFound, "", schema.GroupResource{}, "", "", 0, false)
}

func parsePath(reg *registry, r *http.Request) (request, error) {
	var req request
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	var gv schema.GroupVersion
	switch {
	case len(parts) >= 2 && parts[0] == "api" && parts[1] == "v1":
		gv, parts = schema.GroupVersion{Version: "v1"}, parts[2:]
	case len(parts) >= 3 && parts[0] == "apis" && slices.Contains(reg.groupVersions(parts[1]), parts[2]):
		gv, parts = schema.GroupVersion{Group: parts[1], Version: parts[2]}, parts[3:]
	default:
		return req, errNoHandler
	}
	if len(parts) == 0 {
		return req, errNoRoute()
	}
	// /namespaces/{ns}/{resource}/... unless the path names a namespace
	// itself (/namespaces/{name}[/status]).
	if parts[0] == "namespaces" && len(parts) >= 3 && parts[2] != "status" && parts[2] != "finalize" {
		req.namespace, parts = parts[1], parts[2:]
	}
	req.res = reg.lookup(gv.WithResource(parts[0]))
	if req.res == nil {
		return req, errNoRoute()
	}
	if len(parts) > 1 {
		req.name = parts[1]
	}
	if len(parts) > 2 {
		req.subresource = parts[2]
	}
	subresourceServed := (req.subresource == "status" && req.res.StatusSubresource) || (req.subresource == "scale" && req.res.Scale) ||
		(req.subresource == "approval" && req.res.Approval != nil) || podSubresource(req.res, req.subresource) ||
		isTokenSubresource(req.res, req.subresource)
	if len(parts) == 3 && !subresourceServed && req.res.Hooks != nil && req.res.Hooks.SubresourceNotFound {
		return req, apierrors.NewNotFound(req.res.GroupResource(), req.name)
	}
	if len(parts) > 3 || (req.subresource != "" && !subresourceServed) {
		return req, errNoRoute()
	}
	if req.res.Namespaced != (req.namespace != "") && req.name != "" {
		return req, errNoRoute()
	}
	if !req.res.Namespaced && req.namespace != "" {
		return req, errNoRoute()
	}
	q := r.URL.Query()
	switch r.Method {
	case http.MethodGet:
		switch {
		case req.name != "":
			req.verb = "get"
		case q.Get("watch") == "true" || q.Get("watch") == "1":
			req.verb = "watch"
		default:
			req.verb = "list"
		}
	case http.MethodPost:
		req.verb = "create"
	case http.MethodPut:
		req.verb = "update"
	case http.MethodPatch:
		req.verb = "patch"
	case http.MethodDelete:
		req.verb = "delete"
		if req.name == "" && req.res.DeleteCollection {
			req.verb = "deletecollection"
		}
	}
	if req.verb == "" || (req.name == "" && req.verb != "list" && req.verb != "watch" && req.verb != "create" && req.verb != "deletecollection") ||
		(req.name != "" && req.verb == "create" && !podSubresource(req.res, req.subresource) && !isTokenSubresource(req.res, req.subresource)) {
		return req, apierrors.NewMethodNotSupported(req.res.GroupResource(), r.Method)
	}
	return req, nil
}

// parseListOptions decodes and validates list and watch parameters exactly
// as kube-apiserver does, with apimachinery's own decoder and validation
// (transcripts 19, 32).
func parseListOptions(q url.Values, res *Resource, namespace string) (metainternal.ListOptions, error) {
	var opts metainternal.ListOptions
	if err := metainternalscheme.ParameterCodec.DecodeParameters(q, metav1.SchemeGroupVersion, &opts); err != nil {
		return opts, apierrors.NewBadRequest(err.Error())
	}
	if errs := metainternalvalidation.ValidateListOptions(&opts, true); len(errs) > 0 {
		return opts, apierrors.NewInvalid(schema.GroupKind{Group: metav1.GroupName, Kind: "ListOptions"}, "", errs)
	}
	sel, err := res.convertFieldSelector(opts.FieldSelector)
	if err != nil {
		return opts, apierrors.NewBadRequest(err.Error())
	}
	opts.FieldSelector = sel
	return opts, nil
}

func (s *Server) serveList(rw responder, r *http.Request, req request) {
	opts, err := parseListOptions(r.URL.Query(), req.res, req.namespace)
	if err != nil {
		rw.error(err)
		return
	}
	shard, err := s.shardSelector(opts)
	if err != nil {
		rw.error(err)
		return
	}
	list, err := s.store.list(req.res, listOptions{
		Namespace: req.namespace, Label: opts.LabelSelector, Field: opts.FieldSelector,
		RV: opts.ResourceVersion, Match: opts.ResourceVersionMatch,
		Limit: opts.Limit, Continue: opts.Continue, Shard: shard,
	})
	if err != nil {
		rw.error(err)
		return
	}
	gvk := req.res.GroupVersionKind()
	list.GetObjectKind().SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	var answer runtime.Object = list
	if rw.as != nil {
		if answer, err = rw.as.transform(list); err != nil {
			rw.error(err)
			return
		}
	}
	rw.write(http.StatusOK, func(w io.Writer) error { return rw.info.Serializer.Encode(answer, w) })
}

// serveWatch streams a watch: HTTP 200 at once, then one JSON frame
// {"type":…,"object":…} per line, flushed per event. The stream ends when
// timeoutSeconds pass, the client goes away, or the server drops it. An
// error after the stream has begun (410 Expired) is an ERROR frame.
func (s *Server) serveWatch(rw responder, r *http.Request, req request) {
	opts, err := parseListOptions(r.URL.Query(), req.res, req.namespace)
	if err != nil {
		rw.error(err)
		return
	}
	shard, err := s.shardSelector(opts)
	if err != nil {
		rw.error(err)
		return
	}
	wo := watchOptions{
		listOptions: listOptions{
			Namespace: req.namespace, Label: opts.LabelSelector, Field: opts.FieldSelector,
			RV: opts.ResourceVersion, Match: opts.ResourceVersionMatch, Shard: shard,
		},
		SendInitialEvents: opts.SendInitialEvents,
		AllowBookmarks:    opts.AllowWatchBookmarks,
	}
	if rw.as != nil && rw.as.kind == asPartialList {
		rw.error(notAcceptable("you requested PartialObjectMetadataList, but the requested object is not a list (a watch event)"))
		return
	}
	if !s.faults.waitWhileHeld(r.Context().Done(), s.closing) {
		return
	}
	watcher, werr := s.store.watch(req.res, wo)
	if werr != nil && !apierrors.IsResourceExpired(werr) {
		rw.error(werr)
		return
	}
	w := rw.w
	w.Header().Set("Content-Type", watchContentType(rw.info))
	w.Header().Set("Cache-Control", "no-cache, private")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	if flusher != nil {
		flusher.Flush()
	}
	enc := newWatchEncoder(w, rw.info, rw.as, req.res)
	frame := func(typ watch.EventType, obj runtime.Object) error {
		if err := enc.encode(typ, obj); err != nil {
			return err
		}
		if flusher != nil {
			flusher.Flush()
		}
		return nil
	}
	if werr != nil {
		// kube-apiserver answers a watch from a resourceVersion it no
		// longer has with 200 and an ERROR event carrying a 410 Expired
		// Status (its watch cache's "too old resource version").
		st := werr.(apierrors.APIStatus).Status()
		st.Kind, st.APIVersion = "Status", "v1"
		_ = frame(watch.Error, &st)
		return
	}
	defer s.store.unwatch(watcher)

	var timeout <-chan time.Time
	if opts.TimeoutSeconds != nil && *opts.TimeoutSeconds > 0 {
		t := time.NewTimer(time.Duration(*opts.TimeoutSeconds) * time.Second)
		defer t.Stop()
		timeout = t.C
	}
	flush := func() bool {
		for _, ev := range watcher.take() {
			if err := frame(ev.Type, ev.Object); err != nil {
				return false
			}
		}
		return true
	}
	for {
		select {
		case <-watcher.ready:
			if !flush() {
				return
			}
		case <-watcher.done:
			// Dropped by the server: what was queued goes out first.
			flush()
			return
		case <-timeout:
			return
		case <-r.Context().Done():
			return
		case <-s.closing:
			return
		}
	}
}

// decodeBody reads a request body of the resource's kind, validating its
// fields as the request's fieldValidation asks; warnings go to w.
func decodeBody(w http.ResponseWriter, r *http.Request, res *Resource) (runtime.Object, error) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 3<<20))
	if err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	obj, warnings, err := decodeObject(body, r.Header.Get("Content-Type"), res, fieldValidation(r))
	var strict *strictFieldsError
	if errors.As(err, &strict) {
		return nil, strict.forBody()
	}
	warn(w, warnings)
	return obj, err
}

func (s *Server) patch(ctx context.Context, w http.ResponseWriter, r *http.Request, req request, dry bool) (runtime.Object, error) {
	patchBytes, err := io.ReadAll(io.LimitReader(r.Body, 3<<20))
	if err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	cur, err := s.store.get(req.res, req.namespace, req.name)
	if err != nil {
		return nil, err
	}
	gvk := req.res.GroupVersionKind()
	cur.GetObjectKind().SetGroupVersionKind(gvk)
	curJSON, err := json.Marshal(cur)
	if err != nil {
		return nil, err
	}
	obj, err := applyPatch(w, r, curJSON, patchBytes, req.res)
	if err != nil {
		return nil, err
	}
	return s.store.update(ctx, req.res, req.namespace, req.name, req.subresource, fieldManager(r), obj, dry)
}

// writeOptions decodes and validates a create's or an update's
// parameters (opts: a *metav1.CreateOptions or *metav1.UpdateOptions) as
// kube-apiserver's handlers do, with apimachinery's parameter codec and
// ValidateCreateOptions or ValidateUpdateOptions: a 422 Invalid
// CreateOptions (UpdateOptions) for a dryRun other than All, a bad
// fieldManager or fieldValidation. It reports whether the write is a
// dry run.
func writeOptions(q url.Values, opts runtime.Object) (dry bool, err error) {
	if err := metainternalscheme.ParameterCodec.DecodeParameters(q, metav1.SchemeGroupVersion, opts); err != nil {
		return false, apierrors.NewBadRequest(err.Error())
	}
	var errs field.ErrorList
	var kind string
	switch o := opts.(type) {
	case *metav1.CreateOptions:
		errs, kind, dry = metav1validation.ValidateCreateOptions(o), "CreateOptions", len(o.DryRun) > 0
	case *metav1.UpdateOptions:
		errs, kind, dry = metav1validation.ValidateUpdateOptions(o), "UpdateOptions", len(o.DryRun) > 0
	}
	if len(errs) > 0 {
		return false, apierrors.NewInvalid(schema.GroupKind{Group: metav1.GroupName, Kind: kind}, "", errs)
	}
	return dry, nil
}

// deleteOptions reads a DELETE's options as kube-apiserver's delete
// handler does: from the body when there is one (client-go sends them
// there), else from the query; then ValidateDeleteOptions.
func deleteOptions(r *http.Request) (*metav1.DeleteOptions, error) {
	opts := &metav1.DeleteOptions{}
	body, err := io.ReadAll(io.LimitReader(r.Body, 3<<20))
	if err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	if len(body) > 0 {
		gvk := metav1.SchemeGroupVersion.WithKind("DeleteOptions")
		obj, _, err := metainternalscheme.Codecs.UniversalDeserializer().Decode(body, &gvk, opts)
		if err != nil {
			return nil, apierrors.NewBadRequest(err.Error())
		}
		decoded, ok := obj.(*metav1.DeleteOptions)
		if !ok {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("expected DeleteOptions in the body, got %T", obj))
		}
		opts = decoded
	} else if err := metainternalscheme.ParameterCodec.DecodeParameters(r.URL.Query(), metav1.SchemeGroupVersion, opts); err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	if errs := metav1validation.ValidateDeleteOptions(opts); len(errs) > 0 {
		return nil, apierrors.NewInvalid(schema.GroupKind{Group: metav1.GroupName, Kind: "DeleteOptions"}, "", errs)
	}
	return opts, nil
}

// applyPatch applies the request's JSON, merge or strategic merge patch
// to cur, an object of res's kind in JSON, and decodes the result,
// validating its fields as the request's fieldValidation asks.
func applyPatch(w http.ResponseWriter, r *http.Request, cur, patchBytes []byte, res *Resource) (runtime.Object, error) {
	var patched []byte
	var err error
	switch types.PatchType(strings.Split(r.Header.Get("Content-Type"), ";")[0]) {
	case types.StrategicMergePatchType:
		patched, err = strategicpatch.StrategicMergePatch(cur, patchBytes, res.New())
	case types.MergePatchType:
		patched, err = jsonpatch.MergePatch(cur, patchBytes)
	case types.JSONPatchType:
		var p jsonpatch.Patch
		if p, err = jsonpatch.DecodePatch(patchBytes); err == nil {
			patched, err = p.Apply(cur)
		}
	default:
		// kube-apiserver's router refuses it before any handler runs,
		// with its own terse Status (transcript 45b).
		return nil, &apierrors.StatusError{ErrStatus: metav1.Status{
			Status: metav1.StatusFailure, Code: http.StatusUnsupportedMediaType,
			Reason: metav1.StatusReasonUnsupportedMediaType, Message: "415: Unsupported Media Type",
			Details: &metav1.StatusDetails{},
		}}
	}
	if err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	obj, warnings, err := decodeObject(patched, mediaJSON, res, fieldValidation(r))
	var strict *strictFieldsError
	if errors.As(err, &strict) {
		return nil, strict.forPatch()
	}
	if err != nil {
		return nil, err
	}
	warn(w, warnings)
	// A patch applies to what was read: it conflicts only if the patch
	// itself names a stale resourceVersion.
	var p struct {
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
	}
	_ = json.Unmarshal(patchBytes, &p)
	if p.Metadata.ResourceVersion == "" {
		metaOf(obj).SetResourceVersion("")
	}
	return obj, nil
}

// responder writes answers in the negotiated media type.
type responder struct {
	w    http.ResponseWriter
	info runtime.SerializerInfo
	as   *transformation // the answer as PartialObjectMetadata[List] or a Table, if asked
	res  *Resource
}

// respond writes obj (with kind and apiVersion) or err as a Status.
func (rw responder) respond(code int, obj runtime.Object, err error) {
	if err != nil {
		rw.error(err)
		return
	}
	rw.write(code, func(w io.Writer) error { return encodeObject(w, rw.info, rw.as, obj, rw.res) })
}

// error answers with a metav1.Status: the error's own when it is an API
// error, else a 500 InternalError.
func (rw responder) error(err error) {
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		status = apierrors.NewInternalError(err)
	}
	st := status.Status()
	rw.status(int(st.Code), &st)
}

func (rw responder) status(code int, st *metav1.Status) {
	st.Kind, st.APIVersion = "Status", "v1"
	rw.write(code, func(w io.Writer) error { return rw.info.Serializer.Encode(st, w) })
}

func (rw responder) write(code int, encode func(io.Writer) error) {
	var buf bytes.Buffer
	if err := encode(&buf); err != nil {
		code = http.StatusInternalServerError
		buf.Reset()
		fmt.Fprintf(&buf, `{"kind":"Status","apiVersion":"v1","status":"Failure","message":%q,"reason":"InternalError","code":500}`, err.Error())
	}
	rw.w.Header().Set("Content-Type", rw.info.MediaType)
	rw.w.WriteHeader(code)
	_, _ = rw.w.Write(buf.Bytes())
}

// writeError answers in JSON, for requests that never got as far as
// content negotiation.
func writeError(w http.ResponseWriter, err error) {
	info, _ := runtime.SerializerInfoForMediaType(codecs.SupportedMediaTypes(), mediaJSON)
	responder{w: w, info: info}.error(err)
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

// serveHealth answers kube-apiserver's health checks, /healthz, /livez
// and /readyz, as its healthz handler does when every check passes
// (k8s.io/apiserver pkg/server/healthz): a plain-text "ok". With
// ?verbose it lists the checks; the workshop cluster has one, ping.
func serveHealth(w http.ResponseWriter, r *http.Request) bool {
	switch r.URL.Path {
	case "/healthz", "/livez", "/readyz":
	default:
		return false
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		return false
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	if _, verbose := r.URL.Query()["verbose"]; !verbose {
		fmt.Fprint(w, "ok")
		return true
	}
	fmt.Fprintf(w, "[+]ping ok\n%s check passed\n", strings.TrimPrefix(r.URL.Path, "/"))
	return true
}

// serveDiscovery answers /version and the discovery documents, so that
// kubectl and discovery clients can talk to the workshop cluster: /api
// and /apis as aggregated discovery when Accept asks for it
// (discovery.go), the legacy documents otherwise.
func (s *Server) serveDiscovery(w http.ResponseWriter, r *http.Request) bool {
	if r.Method != http.MethodGet {
		return false
	}
	if (r.URL.Path == "/api" || r.URL.Path == "/apis") && wantsAggregated(r.Header.Get("Accept")) {
		s.serveAggregated(w, r, r.URL.Path == "/api")
		return true
	}
	switch r.URL.Path {
	case "/version":
		writeJSON(w, http.StatusOK, version.Info{Major: "1", Minor: "37", GitVersion: "v1.37.2-workshop", Platform: "linux/amd64"})
	case "/api":
		writeJSON(w, http.StatusOK, metav1.APIVersions{
			TypeMeta: metav1.TypeMeta{Kind: "APIVersions"}, Versions: []string{"v1"},
			ServerAddressByClientCIDRs: []metav1.ServerAddressByClientCIDR{{ClientCIDR: "0.0.0.0/0", ServerAddress: strings.TrimPrefix(s.url, "http://")}},
		})
	case "/apis":
		list := metav1.APIGroupList{TypeMeta: metav1.TypeMeta{Kind: "APIGroupList", APIVersion: "v1"}}
		seen := map[string]bool{}
		for _, res := range s.store.reg.all() {
			g := res.GVR.Group
			if g == "" || seen[g] {
				continue
			}
			seen[g] = true
			var gvs []metav1.GroupVersionForDiscovery
			for _, v := range s.store.reg.groupVersions(g) {
				gvs = append(gvs, metav1.GroupVersionForDiscovery{GroupVersion: g + "/" + v, Version: v})
			}
			list.Groups = append(list.Groups, metav1.APIGroup{Name: g, Versions: gvs, PreferredVersion: gvs[0]})
		}
		writeJSON(w, http.StatusOK, list)
	default:
		if group, ok := strings.CutPrefix(r.URL.Path, "/apis/"); ok && !strings.Contains(group, "/") {
			return s.serveGroup(w, group)
		}
		gv, ok := discoveryGroupVersion(r.URL.Path)
		if !ok {
			return false
		}
		list := metav1.APIResourceList{TypeMeta: metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"}, GroupVersion: gv.String()}
		for _, res := range s.store.reg.all() {
			if res.GVR.GroupVersion() != gv {
				continue
			}
			verbs := res.verbs()
			list.APIResources = append(list.APIResources, metav1.APIResource{
				Name: res.GVR.Resource, SingularName: strings.ToLower(res.Kind), Namespaced: res.Namespaced, Kind: res.Kind, ShortNames: res.ShortNames,
				Verbs: verbs, StorageVersionHash: storageVersionHash(res.storageGVK()),
			})
			for _, sub := range res.subresources() {
				// kubectl scale finds the Scale kind here.
				list.APIResources = append(list.APIResources, metav1.APIResource{
					Name: res.GVR.Resource + "/" + sub.name, Namespaced: res.Namespaced,
					Group: sub.kind.Group, Version: sub.kind.Version, Kind: sub.kind.Kind, Verbs: sub.verbs,
				})
			}
		}
		if len(list.APIResources) == 0 {
			return false
		}
		writeJSON(w, http.StatusOK, list)
	}
	return true
}

// serveGroup answers /apis/{group}: its versions (transcript 82).
func (s *Server) serveGroup(w http.ResponseWriter, group string) bool {
	versions := s.store.reg.groupVersions(group)
	if len(versions) == 0 {
		return false
	}
	g := metav1.APIGroup{TypeMeta: metav1.TypeMeta{Kind: "APIGroup", APIVersion: "v1"}, Name: group}
	for _, v := range versions {
		g.Versions = append(g.Versions, metav1.GroupVersionForDiscovery{GroupVersion: group + "/" + v, Version: v})
	}
	g.PreferredVersion = g.Versions[0]
	writeJSON(w, http.StatusOK, g)
	return true
}

// storageVersionHash is discovery's hash of the version a kind is stored
// in (k8s.io/apiserver
// pkg/endpoints/discovery/storageversionhash.go, StorageVersionHash).
func storageVersionHash(gvk schema.GroupVersionKind) string {
	sum := sha256.Sum256([]byte(gvk.Group + "/" + gvk.Version + "/" + gvk.Kind))
	return base64.StdEncoding.EncodeToString(sum[:8])
}

func discoveryGroupVersion(path string) (schema.GroupVersion, bool) {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	switch {
	case len(parts) == 2 && parts[0] == "api":
		return schema.GroupVersion{Version: parts[1]}, true
	case len(parts) == 3 && parts[0] == "apis":
		return schema.GroupVersion{Group: parts[1], Version: parts[2]}, true
	}
	return schema.GroupVersion{}, false
}
