package cluster

import (
	"context"
	"testing"
)

// ForTest connects a test to a fresh embedded workshop cluster, closed
// when the test ends. Chapters' golden tests use it to call run exactly as
// main does.
// Deprecated: use clustertest.Start, which also checks for leaked goroutines.
func ForTest(t testing.TB) *Cluster {
	t.Helper()
	c, err := Connect(context.Background(), Options{Namespace: DefaultNamespace})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}
