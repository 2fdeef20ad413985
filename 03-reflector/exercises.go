//go:build !solution

// Exercises of chapter 03 that ask for code: write your answers here,
// in the bodies of the functions below, then check them with
//
//	go test ./03-reflector -run Exercise -v
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

	"k8s.io/client-go/tools/cache"
)

// Exercise 4. listAndWatch is a reflector's classic path in miniature.
// It lists with lw, puts the items into store with Replace (passing the
// list's resourceVersion), watches from that resourceVersion, and
// applies each event to store: ADDED with Add, MODIFIED with Update,
// DELETED with Delete; a BOOKMARK changes nothing. An ERROR event
// becomes the error it carries (apierrors.FromObject). It returns when
// ctx ends (nil error) or the watch closes, with the last
// resourceVersion it saw, and it stops its watch before it returns.
func listAndWatch(ctx context.Context, lw cache.ListerWatcherWithContext,
	store cache.Store) (lastRV string, err error) {
	return "", errors.ErrUnsupported // replace with your code
}
