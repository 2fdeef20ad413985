//go:build !solution

// Exercises of chapter 09 that ask for code: write your answers here,
// in the bodies of the functions below, then check them with
//
//	go test ./09-metadata -run Exercise -v
//
// A function that still returns errors.ErrUnsupported counts as not
// written yet, and its check is skipped. The reference answers are in
// exercises_solution.go; run them with -tags solution. Nothing in
// main.go calls these functions: the chapter prints the same whatever
// you write here.

package main

import (
	"errors"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Exercise 1. replicasAndImages reads a deployment's spec.replicas and
// the image of each of its containers from an Unstructured, without
// converting it to a typed Deployment. A missing or mistyped field is
// an error.
func replicasAndImages(u *unstructured.Unstructured) (int64, []string, error) {
	return 0, nil, errors.ErrUnsupported // replace with your code
}

// Exercise 2. byOwner is an index function for any informer, typed,
// dynamic or metadata-only: it files each object under the UID of each
// of its owners, so that ByIndex("owner", uid) finds what an object
// owns without a scan.
func byOwner(obj any) ([]string, error) {
	return nil, errors.ErrUnsupported // replace with your code
}

// Exercise 3. keepPhaseAndNode is a Transform for a typed pod informer
// whose handlers read only a pod's metadata (less managedFields), its
// node and its phase: it drops everything else from spec and status.
// It must be idempotent, and leave anything that is not a pod as it is.
func keepPhaseAndNode(obj any) (any, error) {
	return nil, errors.ErrUnsupported // replace with your code
}
