// Package clustertest gives a chapter's tests a fresh embedded workshop
// cluster, exactly as main would connect to it, and checks that the test
// leaves no goroutine behind.
package clustertest

import (
	"context"
	"testing"

	"github.com/informer-walkthrough/informer-walkthrough/internal/cluster"
	"github.com/informer-walkthrough/informer-walkthrough/internal/leakcheck"
)

// Start connects t to a new workshop cluster, closed when t ends. It
// also fails t if goroutines started during it are still running once
// the cluster is closed.
func Start(t testing.TB) *cluster.Cluster {
	t.Helper()
	leakcheck.Verify(t) // first, so its check runs after Close
	c, err := cluster.Connect(context.Background(), cluster.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}
