//go:build !solution

// Exercises of chapter 01 that ask for code: write your answers here,
// in the bodies of the functions below, then check them with
//
//	go test ./01-watch -run Exercise -v
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

	"k8s.io/apimachinery/pkg/watch"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
)

// Exercise 1. frontTier watches the pods labelled tier=front, from
// resourceVersion rv on: step 2's watch with a label selector.
func frontTier(ctx context.Context, pods typedcorev1.PodInterface,
	rv string) (watch.Interface, error) {
	return nil, errors.ErrUnsupported // replace with your code
}
