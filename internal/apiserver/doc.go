// Package apiserver is the workshop cluster: a small Kubernetes API server
// that runs inside a chapter's process, on a loopback port, and that the
// unmodified client-go talks to over real HTTP, as it talks to
// kube-apiserver. It serves the built-in kinds a controller commonly
// touches (core, apps, batch, coordination.k8s.io, events.k8s.io,
// networking.k8s.io, policy, rbac and a few more: zz_generated.kinds.go
// lists them; admissionregistration.k8s.io's webhook configurations and
// policies are acted on only by a server started with Options.Admission:
// admission.go, and package admission, which runs kube-apiserver's own
// webhook and policy plugins), and answers as kube-apiserver v1.36 does: every behaviour
// copied from it has a test that names the recorded transcript it matches
// (testdata/transcripts, copied from a real server's answers).
//
// It is written to be read. To see how a request becomes an answer, and
// how a watch really streams, read it in this order:
//
//   - The resource table, resources.go: one [Resource] per kind (group,
//     version, resource, kind, namespaced, which subresources it has),
//     read from kube-apiserver's OpenAPI documents (openapi/gen.go writes
//     zz_generated.kinds.go) and client-go's scheme (its Go types), and
//     each server's registry of them, which can gain kinds at run time.
//     Then strategies.go: what each kind does differently, as
//     kube-apiserver's per-kind strategies do (defaults, what admission
//     and the create strategy add, generation, a Service's cluster IP,
//     field selectors, printer columns). Adding a built-in kind is a
//     line in gen.go and, if it differs, an entry there; nothing else is
//     per kind.
//   - The store, store.go: every object, one global resourceVersion
//     counter (etcd's revision), and the history of changes. Every write
//     goes through commit, which stamps the next resourceVersion, records
//     the event and hands it to the open watches. Lists are sorted by
//     name and page with continue tokens (a list at resourceVersion=0
//     is answered whole, as kube-apiserver's watch cache answers it);
//     a list or watch at an old
//     resourceVersion is served from the history (stateAt, replay) until
//     the history is compacted, then it answers 410 Expired.
//   - Watch fan-out, watch.go: each open watch is a watcher with its own
//     queue of frames; commit appends to every queue and never blocks on
//     a slow client (one too far behind is closed, as kube-apiserver
//     closes it). A watcher turns the store's events into what its
//     selector sees (an object that stops matching arrives as DELETED),
//     and a watch-list ends its initial events with a bookmark.
//   - The HTTP handlers, server.go: ServeHTTP parses the path and the
//     query, calls the store and encodes the answer or the Status error;
//     serveWatch writes one frame per event and flushes it. They do
//     protocol work only. Beside them: encode.go (content negotiation: JSON, and the
//     protobuf client-go's typed clients ask for), metadata.go (as=PartialObjectMetadata), table.go
//     (as=Table, for kubectl get), apply.go and fields.go (server-side
//     apply and managedFields), scale.go (the scale subresource),
//     podsubresources.go, token.go and certificates.go (pods/binding and
//     pods/eviction, serviceaccounts/token and the OpenID documents, a
//     CertificateSigningRequest's approval and status),
//     openapi.go (what kubectl and apply read), discovery (legacy
//     in server.go, aggregated in discovery.go), and tls.go (HTTPS with
//     a CA made at start, Options.TLS, for cmd/workshop-cluster's
//     kubeconfig; the chapters speak plain HTTP). gc.go is the garbage
//     collector (Options.GarbageCollection, off by default): what
//     kube-apiserver does with a DELETE's propagationPolicy, and what
//     kube-controller-manager's collector does with ownerReferences.
//   - Faults and the request log, faults.go: what the chapters call to
//     show a failure or to count requests: [Server.Requests],
//     [Server.InjectFault] (matching requests get an API error),
//     [Server.HoldWatches], [Server.DropWatches], [Server.CompactHistory],
//     [Server.SendBookmarks]. They are explicit methods, never hidden
//     switches.
//
// There is no mutable global state: each [Start] makes a server with a store of its
// own, so two servers in one test process do not interfere. The clock is
// fixed ([FixedTime]), names are sequential and uids derived from a
// counter (nthUID), so that a chapter's output is the same at every run.
package apiserver
