// Package realcluster runs every chapter against a real cluster, the one
// the kubeconfig in REAL_KUBECONFIG names, as a learner would: go run,
// twice in a row. Each run must exit 0, print its golden output but for
// numbers and for the steps that say they are skipped on a real cluster,
// and leave nothing labelled by the course behind. Without
// REAL_KUBECONFIG the test is skipped: CI has no cluster.
// hack/realk8s builds and starts kube-apiserver and
// kube-controller-manager of the pinned Kubernetes release to run it on.
package realcluster
