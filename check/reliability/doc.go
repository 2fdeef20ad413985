// Package reliability holds the tests that the course keeps its promises
// when things go wrong (issue 9). Its own code is all in _test.go files.
//
// Every chapter as a learner runs it (the chapters are built once, while
// the other tests run; see build):
//   - bad input: wrong flags and kubeconfigs, an unreachable or untrusted
//     server, expired credentials, missing RBAC grants; each is one line
//     on stderr that says what to fix, exit status 1, within 15 s, and
//     nothing left behind (badinput_test.go);
//   - Ctrl-C in the middle of a run, on a real cluster and on the
//     embedded one (interrupt_test.go);
//   - credentials at client-go's highest log verbosity, the embedded
//     server on loopback only, and the README's RBAC Role against what
//     the chapters do (security_test.go);
//   - on a real cluster, when REAL_KUBECONFIG names one: every chapter
//     twice, its golden output but for numbers and declared skips, and
//     nothing left behind (realcluster_test.go; hack/realk8s starts a
//     kube-apiserver to run it on).
//
// The embedded workshop cluster with unmodified client-go:
//   - convergence under faults: seeded random writes across namespaces,
//     dropped watches, outages, 410 Expired, a slow handler; the informer
//     must end up with the server's state (convergence_test.go);
//   - load: many objects, watchers and writes; no watcher misses an event
//     or holds up the others; memory bounded by the history window
//     (load_test.go).
//
// The normal run is quick. More:
//
//	go test ./check/reliability -run Source -source.instrumented   # --source's build (CI runs it)
//	go test ./check/reliability -run Convergence -convergence.seeds=1000
//	go test ./check/reliability -run Convergence -convergence.seed=42 -v
//	go test ./check/reliability -run 'Watchers|Memory' -load.big -v
package reliability
