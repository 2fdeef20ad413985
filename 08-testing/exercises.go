//go:build !solution

// Exercises of chapter 08 that ask for code: write your answers here,
// in the bodies of the functions below, then check them with
//
//	go test ./08-testing -run Exercise -v
//
// A function that still returns errors.ErrUnsupported counts as not
// written yet, and its check is skipped. The reference answers are in
// exercises_solution.go; run them with -tags solution. Nothing in
// main.go calls these functions: the chapter prints the same whatever
// you write here.

package main

import (
	"errors"

	"k8s.io/client-go/kubernetes/fake"
)

// Exercise 2. stampResourceVersions makes client behave like an API
// server in two ways, with reactors: every create and update stores
// the object with a new resourceVersion ("1", "2", … across all
// resources), and an update that names a resourceVersion other than
// the stored one fails with a 409 Conflict (apierrors.NewConflict) and
// changes nothing.
func stampResourceVersions(client *fake.Clientset) error {
	return errors.ErrUnsupported // replace with your code
}

// Exercise 3. honourLabelSelector makes client's watches deliver only
// the events of objects that match the watch's label selector, as an
// API server does (the fake's List already filters by label; its Watch
// does not).
func honourLabelSelector(client *fake.Clientset) error {
	return errors.ErrUnsupported // replace with your code
}
