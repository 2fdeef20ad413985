//go:build !solution

// Exercises of chapter 02 that ask for code: write your answers here,
// in the bodies of the functions below, then check them with
//
//	go test ./02-deltafifo -run Exercise -v
//
// A function that still returns errors.ErrUnsupported counts as not
// written yet, and its check is skipped. The reference answers are in
// exercises_solution.go; run them with -tags solution. Nothing in
// main.go calls these functions: the chapter prints the same whatever
// you write here.

package main

import (
	"errors"

	"k8s.io/client-go/tools/cache"
)

// Exercise 3. drainBatches closes q, then calls q.PopBatch until it
// returns cache.ErrFIFOClosed. It returns one line per PopBatch call:
// "batch" or "single", for the function PopBatch called, then the
// deltas it handed over, printed with show.Deltas (internal/show), e.g.
//
//	single [Updated pod-1 v2]
func drainBatches(q cache.QueueWithBatch) ([]string, error) {
	return nil, errors.ErrUnsupported // replace with your code
}
