// Package shardparse turns on the workshop cluster's ShardedListAndWatch
// gate: Parse is kube-apiserver's own parser of the shardSelector
// parameter (k8s.io/apiserver pkg/sharding), for
// apiserver.Options.ShardSelectors.
//
// It is a package of its own so that only the programs that serve shard
// selectors (chapter 12, cmd/workshop-cluster, hack/scalesync; a user of
// package workshop passes one in) link
// k8s.io/apiserver's parser and what it is built on (cel-go, antlr,
// protobuf); chapters 01-11 run without them, and start faster.
package shardparse

import (
	apisharding "k8s.io/apimachinery/pkg/sharding"
	"k8s.io/apiserver/pkg/sharding"
)

// Parse parses a shard selector as kube-apiserver v1.36 does, e.g.
// shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000').
func Parse(expr string) (apisharding.Selector, error) { return sharding.Parse(expr) }
