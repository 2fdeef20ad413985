// Package workshop starts the course's workshop cluster in your own
// tests: a Kubernetes API server that runs inside the test process, on a
// loopback port, and that unmodified client-go talks to over real HTTP.
// It starts in a millisecond or two and needs nothing installed.
//
//	func TestMyController(t *testing.T) {
//		c := workshop.Start(t) // stopped when the test ends
//		client := c.Client()
//		// ... a factory on client, Start, WaitForCacheSync, changes ...
//	}
//
// What a test gets that a fake clientset does not give: resourceVersions
// on every write, 409 Conflict on a stale update, label and field
// selectors on watches, watch-list streams with their bookmark, a pod
// deleted in two events, defaults filled in, generated names, managedFields
// and server-side apply, and a watch that resumes from a resourceVersion by
// replaying history, deletes included.
//
// Which Kubernetes it is: its behaviour is checked, by the course's own
// tests, against recorded answers of a real kube-apiserver v1.36.3. Its
// /version reports v1.37.2-workshop, a version chosen to match the
// client-go it is built with (v0.37.2), not one it was checked against
// answer by answer (the course's chapters also run on a real
// kube-apiserver v1.37.2, hack/realk8s).
//
// What it does not implement:
//
//   - Resources: it serves the built-in kinds a controller commonly
//     touches: core (namespaces, nodes, pods, configmaps, services,
//     endpoints, secrets, serviceaccounts, events,
//     persistentvolumeclaims, persistentvolumes, limitranges,
//     resourcequotas, podtemplates), apps, batch, autoscaling/v2,
//     coordination.k8s.io (leases), discovery.k8s.io (endpointslices),
//     events.k8s.io, networking.k8s.io, policy (poddisruptionbudgets),
//     rbac.authorization.k8s.io (stored as objects, never enforced),
//     certificates.k8s.io (CertificateSigningRequests, with their approval
//     and status subresources; no signer: a request's certificate is set
//     only by a status write, as a signer would set it),
//     admissionregistration.k8s.io (webhook configurations and validating
//     admission policies, acted on with package workshop/webhooks: see
//     Admission),
//     scheduling.k8s.io and storage.k8s.io (storageclasses), with their
//     defaults, a Service's cluster IP and node ports, a Job's selector,
//     the field selectors each kind supports, and the status and scale
//     subresources where the kind has them. CustomResourceDefinitions,
//     with package workshop/crds (crds.Served, crds.Install): a CRD's kind is served once it is
//     Established, its objects pruned, defaulted and validated by
//     kube-apiserver's own structural-schema code, with the status and
//     scale subresources, printer columns, CEL x-kubernetes-validations,
//     selectableFields and several served versions, converted by the
//     CRD's converter (strategy None, or Webhook: kube-apiserver's
//     webhook converter calls the CRD's conversion webhook at its url). Of
//     the other subresources, pods/binding, pods/eviction and
//     serviceaccounts/token (a JWT as kube-apiserver signs it, verifiable
//     with the key at /openid/v1/jwks; no pods/log or exec).
//     events.k8s.io and core Events are stored apart, where
//     kube-apiserver stores them as one.
//   - Admission, unless package workshop/webhooks's Served is given:
//     without it no webhooks are called and no admission policies
//     evaluated (their configurations are stored, nothing acts on them:
//     a test that relies on a webhook refusing or defaulting a write
//     fails here). With it, kube-apiserver's webhook and
//     ValidatingAdmissionPolicy plugins run, a webhook reached at its
//     url. Never: MutatingAdmissionPolicies, quota or limit ranges,
//     no authentication or authorization (anyone on 127.0.0.1 may do
//     anything; a ServiceAccount token it issues is accepted as any other
//     request is, so it proves nothing), and only a few validations.
//   - Garbage collection, unless GarbageCollection is given: by default
//     ownerReferences are stored, never acted on, and a DELETE's
//     propagationPolicy changes nothing, as on kube-apiserver with
//     --enable-garbage-collector=false. (envtest runs no collector
//     either, but its kube-apiserver keeps that flag's default, true, and
//     adds the finalizer a Foreground or Orphan DELETE asks for: no one
//     removes it, and the object is never deleted.)
//   - Controllers, a scheduler or kubelets: a Deployment makes no
//     ReplicaSet, a Job no pod, a pod stays Pending, a Service gets no
//     Endpoints, a namespace is deleted at once. (It does make each
//     namespace's "default" ServiceAccount, as the controller-manager
//     would, since tests rely on it.)
//
// For those, use envtest (a real kube-apiserver and etcd) or a cluster.
//
// # Using it from your module
//
// The package is the workshop directory of the course's module,
// github.com/informer-walkthrough/informer-walkthrough. Add it to your
// module (go get writes the require line in your go.mod):
//
//	go get github.com/informer-walkthrough/informer-walkthrough/workshop
//
// Take it that way, not as a copy of the directory: it uses the module's
// internal/apiserver, which Go lets only that module import. The module
// needs Go 1.26 and requires k8s.io/client-go, k8s.io/api,
// k8s.io/apimachinery, k8s.io/apiserver and k8s.io/apiextensions-apiserver
// v0.37.2 and sigs.k8s.io/controller-runtime v0.25.2 (for the course's
// chapter 11), so go get raises your go line to at least 1.26.0 and
// those modules to at least those versions; your binaries compile only
// the packages they import (this one does not import controller-runtime,
// CEL or apiextensions-apiserver; package workshop/crds brings the last).
//
// Stop the informers before you wait for them. A factory's Shutdown waits
// until every informer it started has returned, and an informer returns
// only when the context (or stop channel) given to Start ends. Deferred
// calls and t.Cleanup functions run last-in first-out, so register
// Shutdown first and cancel second:
//
//	ctx, cancel := context.WithCancel(context.Background())
//	factory := informers.NewSharedInformerFactory(c.Client(), 0)
//	defer factory.Shutdown() // runs second: waits for the informers
//	defer cancel()           // runs first: stops them
//	factory.Start(ctx.Done())
//
// In the other order Shutdown runs while the context is still live, and
// waits for ever. (A context from t.Context() ends before the Cleanup
// functions run, but not before the test function's own defers.)
//
// # Plain HTTP
//
// The cluster speaks plain HTTP (URL is http://127.0.0.1:PORT): a client
// built on Config or Client needs nothing more, and what a test's
// transport sees stays readable. cmd/workshop-cluster serves HTTPS
// instead, with a CA made at start in its kubeconfig, for clients that
// refuse a kubeconfig naming http://. Here HTTPS would cost every
// cluster about 1.5 ms, for nothing a Go test gains: a warm start, a
// first request and Close took 0.5-0.8 ms in plain HTTP and 2.0-3.2 ms
// over HTTPS (five processes each, on a shared 2-core machine), about
// 0.5 ms of it the keys and certificates and the rest the TLS handshake.
//
// # Shard selectors
//
// Like kube-apiserver by default, the cluster ignores a list's or
// watch's shardSelector (KEP-5866). To have it served as kube-apiserver
// v1.36 serves it with --feature-gates=ShardedListAndWatch=true, give it
// kube-apiserver's own parser, k8s.io/apiserver/pkg/sharding's Parse:
//
//	c := workshop.Start(t, workshop.ShardSelectors(sharding.Parse))
//
// The parser is yours to pass, not this package's to import, because it
// brings cel-go, antlr and protobuf into every test binary that links it;
// your go.mod then requires k8s.io/apiserver as well.
//
// The API of this package is small on purpose and will stay so: Start,
// New, ShardSelectors, GarbageCollection, and the four methods of Cluster; CRDs are in
// package workshop/crds, which brings in k8s.io/apiextensions-apiserver
// (kube-apiserver's schema code) only for the tests that use it.
package workshop

import (
	"testing"

	apisharding "k8s.io/apimachinery/pkg/sharding"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/informer-walkthrough/informer-walkthrough/internal/apiserver"
)

// Cluster is a running workshop cluster.
type Cluster struct {
	srv    *apiserver.Server
	client kubernetes.Interface
}

// Option configures a cluster that Start or New starts.
type Option func(*apiserver.Options)

// ShardSelectors turns the ShardedListAndWatch gate on, with parse as
// the parser of shardSelector: pass k8s.io/apiserver/pkg/sharding.Parse,
// kube-apiserver's own (see the package documentation).
func ShardSelectors(parse func(string) (apisharding.Selector, error)) Option {
	return func(o *apiserver.Options) { o.ShardSelectors = parse }
}

// GarbageCollection runs a garbage collector, as kube-controller-manager
// runs one on a real cluster: an object whose owners (ownerReferences)
// are all gone is deleted, and a DELETE's propagationPolicy is honoured:
// Background (the default) deletes the owner at once and its dependents
// after; Foreground marks the owner (deletionTimestamp, the
// foregroundDeletion finalizer) and deletes it once its dependents with
// blockOwnerDeletion are gone; Orphan marks it with the orphan
// finalizer, removes its references from its dependents, then deletes
// it. The collector runs after the writes, as on a real cluster: wait
// for what it does (a watch, or an informer) rather than expect it done
// when Delete returns. Off by default, as envtest has no collector.
func GarbageCollection() Option {
	return func(o *apiserver.Options) { o.GarbageCollection = true }
}

// Start starts a workshop cluster for the test tb and stops it when tb
// ends (with tb.Cleanup). It fails tb if the cluster cannot start.
func Start(tb testing.TB, opts ...Option) *Cluster {
	tb.Helper()
	c, err := New(opts...)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = c.Close() })
	return c
}

// New starts a workshop cluster with what every cluster has from the
// start: the namespaces default, kube-system, kube-public and
// kube-node-lease, the default/kubernetes Service, and a "default"
// ServiceAccount in every namespace (one is made with each namespace you
// create). Close stops it. In a test, Start is simpler; New is for
// TestMain and for programs.
func New(opts ...Option) (*Cluster, error) {
	o := apiserver.Options{Bootstrap: true}
	for _, opt := range opts {
		opt(&o)
	}
	srv, err := apiserver.Start(o)
	if err != nil {
		return nil, err
	}
	c := &Cluster{srv: srv}
	if c.client, err = kubernetes.NewForConfig(srv.Config()); err != nil {
		_ = srv.Close()
		return nil, err
	}
	return c, nil
}

// Client is a clientset for the cluster.
func (c *Cluster) Client() kubernetes.Interface { return c.client }

// Config returns a rest.Config for the cluster, a new one on each call,
// for clients of your own (dynamic, metadata, a wrapped transport).
func (c *Cluster) Config() *rest.Config { return c.srv.Config() }

// URL is the cluster's address: http://127.0.0.1:PORT (see Plain HTTP).
func (c *Cluster) URL() string { return c.srv.URL() }

// Close stops the cluster: it ends every watch, and returns once every
// goroutine of the server has ended. It is safe to call more than once.
func (c *Cluster) Close() error { return c.srv.Close() }
