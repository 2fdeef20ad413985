//go:build !solution

// Exercises of chapter 10 that ask for code: write your answers here,
// in the bodies of the functions below, then check them with
//
//	go test ./10-lifecycle -run Exercise -v
//
// A function that still returns errors.ErrUnsupported counts as not
// written yet, and its check is skipped. The reference answers are in
// exercises_solution.go; run them with -tags solution. Nothing in
// main.go calls these functions: the chapter prints the same whatever
// you write here.

package main

import (
	"context"
	"errors"

	corev1 "k8s.io/api/core/v1"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/cache"
)

// Exercise 1. failFast gives informer (not started yet) a watch error
// handler that ends the wait for it, through stop, when retrying cannot
// help: the server refused the client's credentials (401) or its
// permission (403). Any other error is logged as by default and
// retried. The cause given to stop is the error the handler got.
func failFast(informer cache.SharedInformer, stop context.CancelCauseFunc) error {
	return errors.ErrUnsupported // replace with your code
}

// Exercise 2. updateAndRead sets the label release=release on the pod
// name, through pods, and returns the pod as store (a synced informer's
// store of those pods) has it once it has caught up with that write:
// never an older version. It gives up when ctx ends.
func updateAndRead(ctx context.Context, pods typedcorev1.PodInterface, store cache.Store,
	name, release string) (*corev1.Pod, error) {
	return nil, errors.ErrUnsupported // replace with your code
}
