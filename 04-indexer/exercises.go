//go:build !solution

// Exercises of chapter 04 that ask for code: write your answers here,
// in the bodies of the functions below, then check them with
//
//	go test ./04-indexer -run Exercise -v
//
// A function that still returns errors.ErrUnsupported counts as not
// written yet, and its check is skipped. The reference answers are in
// exercises_solution.go; run them with -tags solution. Nothing in
// main.go calls these functions: the chapter prints the same whatever
// you write here.

package main

import "errors"

// Exercise 1. phaseIndex is an IndexFunc that files a pod under its
// status.phase. A pod whose phase is empty is filed nowhere; anything
// that is not a *corev1.Pod is an error, as for the chapter's own
// index functions.
func phaseIndex(obj any) ([]string, error) {
	return nil, errors.ErrUnsupported // replace with your code
}
