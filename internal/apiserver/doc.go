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
//     zz_generated.kinds.go, one named row per kind) and client-go's
//     scheme (its Go types), and each server's registry of them, which
//     can gain kinds at run time.
//   - What each kind does differently, as kube-apiserver keeps it per
//     kind in pkg/registry/<group>/<kind>/strategy.go: strategies.go
//     defines the [strategy], the named hooks the generic store calls
//     (Default, PrepareForCreate, ValidateObject, Validate,
//     ValidateUpdate, PrepareForUpdate, PrepareStatusUpdate, AfterCreate,
//     PrepareForDelete, DeleteContents, field selectors, the Table
//     printer...), and gathers the groups' strategies. Each group's file,
//     registry_<group>.go, holds everything of its kinds together: the
//     strategy, the defaults, the validation, the built-in admission
//     plugins that act on them, and the printer (registry_core.go,
//     registry_core_pods.go, registry_core_services.go, registry_apps.go,
//     registry_batch.go, ... registry_certificates.go,
//     registry_admissionregistration.go). To find where a kind's behaviour
//     lives, open its group's file.
//   - The store, store.go: every object, one global resourceVersion
//     counter (etcd's revision), and the history of changes. It is
//     generic, as kube-apiserver's registry/generic/registry/store.go:
//     it names no kind, and calls the kind's strategy at fixed points.
//     Every write goes through commit, which stamps the next
//     resourceVersion, records the event and hands it to the open
//     watches. Lists are sorted by name and page with continue tokens (a
//     list at resourceVersion=0 is answered whole, as kube-apiserver's
//     watch cache answers it); a list or watch at an old resourceVersion
//     is served from the history (stateAt, replay) until the history is
//     compacted, then it answers 410 Expired. Beside it,
//     store_admission.go is admission's place in the write path, in
//     kube-apiserver's order (the decoder's defaults, mutating admission
//     with the built-in plugins first, the kind's create or update
//     strategy and validation, validating admission, storage): the store
//     calls it at points marked "Admission:" in create, update and
//     delete. bootstrap.go makes what
//     a real cluster starts with (Options.Bootstrap).
//   - Watch fan-out, watch.go: each open watch is a watcher with its own
//     queue of frames; commit appends to every queue and never blocks on
//     a slow client (one too far behind is closed, as kube-apiserver
//     closes it). A watcher turns the store's events into what its
//     selector sees (an object that stops matching arrives as DELETED),
//     and a watch-list ends its initial events with a bookmark.
//   - The HTTP handlers, server.go: ServeHTTP routes a request (the
//     paths that are not resources, then the resource's path parsed,
//     the media type negotiated, the subresources with handlers of their
//     own); serveVerb hands the rest to the verb's handler (serveCreate,
//     serveUpdate, servePatch, serveDelete, serveList, serveWatch,
//     serveDeleteCollection), which parses the query, calls the store and
//     encodes the answer or the Status error; serveWatch writes one frame
//     per event and flushes it. They do protocol work only. Beside them: encode.go (content negotiation: JSON, and the
//     protobuf client-go's typed clients ask for), metadata.go (as=PartialObjectMetadata), table.go
//     (as=Table, for kubectl get), apply.go and fields.go (server-side
//     apply and managedFields), scale.go (the scale subresource),
//     podsubresources.go, token.go and registry_certificates.go (pods/binding and
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
// # Adding a built-in kind
//
// A kind kube-apiserver v1.36.3 serves, whose Go type is in client-go's
// scheme, is added in four steps, from a clone (nothing outside the
// repository is read):
//
//  1. In openapi/gen.go, add its resource to served, under its
//     group-version's document (a new line for a group-version not yet
//     served, named as the file in
//     openapi/testdata/kube-apiserver-v1.36.3: "apis-node.k8s.io-v1").
//     Then, in internal/apiserver/openapi, run
//
//     go run gen.go
//
//     It writes the group-version's document, filtered to the served
//     resources (openapi.go embeds it), and the kind's row in
//     zz_generated.kinds.go: with it the kind is served, with the generic
//     store's behaviour, and listed in discovery.
//
//  2. In its group's registry_<group>.go (for a new group, a new file,
//     whose map is added to strategiesOf's list in strategies.go), add
//     the kind's strategy: its Table printer, copied from kubernetes
//     pkg/printers/internalversion/printers.go (<kind>ColumnDefinitions
//     and print<Kind>), or defaultConvertorTable where its registry has
//     none; and whatever its upstream strategy does that the generic
//     store does not (short names, generation, defaults, status reset,
//     field selectors, validation: the [strategy] fields), each beside
//     the upstream code it copies.
//
//  3. In registry_tables_test.go, add its upstream column definitions to
//     upstreamColumns.
//
//  4. Run go test ./internal/apiserver/: TestBuiltinKindsMatchOpenAPI
//     checks the row against the document, TestTableColumnsEveryKind the
//     printer against the upstream columns. kinds_recipe_test.go follows
//     these steps for node.k8s.io/v1 RuntimeClass, and checks that the
//     kind is served, listed in discovery and printed as a Table.
//
// There is no mutable global state: each [Start] makes a server with a store of its
// own, so two servers in one test process do not interfere. The clock is
// fixed ([FixedTime]), names are sequential and uids derived from a
// counter (nthUID), so that a chapter's output is the same at every run.
package apiserver
