//go:build solution

package main

import (
	"strconv"

	"k8s.io/apimachinery/pkg/sharding"
)

// shardOf: the hash, as a number, divided by the width of a shard.
func shardOf(uid string, n int) (int, error) {
	h, err := strconv.ParseUint(sharding.HashField(uid), 16, 64)
	if err != nil {
		return 0, err
	}
	if n == 1 {
		return 0, nil // one shard: the whole space (its width, 2^64, overflows)
	}
	width := ^uint64(0)/uint64(n) + 1
	return int(h / width), nil
}
