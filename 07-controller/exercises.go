//go:build !solution

// Exercises of chapter 07 that ask for code: write your answers here,
// in the bodies of the functions below, then check them with
//
//	go test ./07-controller -run Exercise -v
//
// A function that still returns errors.ErrUnsupported counts as not
// written yet, and its check is skipped. The reference answers are in
// exercises_solution.go; run them with -tags solution. Nothing in
// main.go calls these functions: the chapter prints the same whatever
// you write here.

package main

import (
	"errors"

	"k8s.io/client-go/util/workqueue"
)

// Exercise 2. finish ends a worker's turn with key (of whatever type
// the queue holds: cache.ObjectName in main.go), whose sync returned
// syncErr; the caller calls Done afterwards. On success it calls
// Forget and returns nil. On failure it requeues the key with
// AddRateLimited and returns nil, unless the key has already been
// requeued maxRetries times: then it calls Forget, does not requeue,
// and returns an error that says the key was dropped and wraps syncErr.
func finish[T comparable](q workqueue.TypedRateLimitingInterface[T], key T,
	syncErr error, maxRetries int) error {
	return errors.ErrUnsupported // replace with your code
}
