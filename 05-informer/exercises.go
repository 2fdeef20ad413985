//go:build !solution

// Exercises of chapter 05 that ask for code: write your answers here,
// in the bodies of the functions below, then check them with
//
//	go test ./05-informer -run Exercise -v
//
// A function that still returns errors.ErrUnsupported counts as not
// written yet, and its check is skipped. The reference answers are in
// exercises_solution.go; run them with -tags solution. Nothing in
// main.go calls these functions: the chapter prints the same whatever
// you write here.

package main

import (
	"errors"

	corev1 "k8s.io/api/core/v1"
)

// Exercise 1. deletedConfigMap is the first line of every OnDelete
// handler, done right. From what the informer passed to OnDelete it
// returns the deleted object's namespace/name key and its last known
// state: the *corev1.ConfigMap itself, or, for a
// cache.DeletedFinalStateUnknown, the ConfigMap it holds, which is nil
// when the tombstone holds none. For anything else, an error.
func deletedConfigMap(obj any) (key string, last *corev1.ConfigMap,
	err error) {
	return "", nil, errors.ErrUnsupported // replace with your code
}
