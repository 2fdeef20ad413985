//go:build !solution

// Exercises of chapter 12 that ask for code: write your answers here,
// in the bodies of the functions below, then check them with
//
//	go test ./12-scale -run Exercise -v
//
// A function that still returns errors.ErrUnsupported counts as not
// written yet, and its check is skipped. The reference answers are in
// exercises_solution.go; run them with -tags solution. Nothing in
// main.go calls these functions: the chapter prints the same whatever
// you write here.

package main

import "errors"

// Exercise 1. shardOf returns which of n equal shards (as shardRanges(n)
// cuts the hash space) holds an object whose uid is uid: the 64-bit
// FNV-1a hash of the uid, as apimachinery's sharding.HashField computes
// it, tells. n is at least 1.
func shardOf(uid string, n int) (int, error) {
	return 0, errors.ErrUnsupported // replace with your code
}
