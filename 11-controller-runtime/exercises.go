//go:build !solution

// Exercises of chapter 11 that ask for code: write your answers here,
// in the bodies of the functions below, then check them with
//
//	go test ./11-controller-runtime -run Exercise -v
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
	crcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Exercise 1. indexByTeam adds to cache (started) an index of
// ConfigMaps by their "team" label, so that a List of ConfigMaps with
// client.MatchingFields{"team": "blue"} is answered from that index.
// A ConfigMap without the label is in no entry of the index.
func indexByTeam(ctx context.Context, cache crcache.Cache) error {
	return errors.ErrUnsupported // replace with your code
}

// Exercise 2. withMode reads the ConfigMap key through reader with
// client.UnsafeDisableDeepCopy (a hot path that mostly only reads) and
// returns it with data.mode set to mode, without changing what the
// cache holds.
func withMode(ctx context.Context, reader client.Reader, key client.ObjectKey,
	mode string) (*corev1.ConfigMap, error) {
	return nil, errors.ErrUnsupported // replace with your code
}
