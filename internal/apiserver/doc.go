// Package apiserver is the workshop cluster: a small Kubernetes API server
// that runs inside a chapter's process, on a loopback port, and that the
// unmodified client-go talks to over real HTTP, as it talks to
// kube-apiserver. It serves namespaces, nodes, pods, configmaps and
// deployments, and answers as kube-apiserver v1.36 does: every behaviour
// copied from it has a test that names the recorded transcript it matches
// (testdata/transcripts, copied from a real server's answers).
//
// It is written to be read. To see how a request becomes an answer, and
// how a watch really streams, read it in this order:
//
//   - The resource table, resources.go: one [Resource] per kind (group,
//     version, resource, kind, namespaced, its Go types, which
//     subresources it has, its field-selector fields) and the defaults
//     and admission kube-apiserver applies on create. Adding a kind is
//     one entry there; nothing else is per kind.
//   - The store, store.go: every object, one global resourceVersion
//     counter (etcd's revision), and the history of changes. Every write
//     goes through commit, which stamps the next resourceVersion, records
//     the event and hands it to the open watches. Lists are sorted by
//     name and page with continue tokens; a list or watch at an old
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
//     openapi.go (what kubectl and apply read), and discovery.
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
