//go:build !solution

// Exercises of chapter 06 that ask for code: write your answers here,
// in the bodies of the functions below, then check them with
//
//	go test ./06-factory -run Exercise -v
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

	"k8s.io/client-go/informers"
	corev1listers "k8s.io/client-go/listers/core/v1"
)

// Exercise 1. syncedPodLister returns a lister of the pods in namespace
// ns, read from factory's shared pod informer, once that informer's
// cache is synced. The factory may already have been started, with
// other informers (step 4b's pitfall). ctx ends the informers.
func syncedPodLister(ctx context.Context, factory informers.SharedInformerFactory,
	ns string) (corev1listers.PodNamespaceLister, error) {
	return nil, errors.ErrUnsupported // replace with your code
}
