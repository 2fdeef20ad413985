//go:build !solution

// Exercises of chapter 13 that ask for code: write your answers here,
// in the bodies of the functions below, then check them with
//
//	go test ./13-generated -run Exercise -v
//
// A function that still returns errors.ErrUnsupported counts as not
// written yet, and its check is skipped. The reference answers are in
// exercises_solution.go; run them with -tags solution. Nothing in
// main.go calls these functions: the chapter prints the same whatever
// you write here.

package main

import (
	"errors"

	"k8s.io/client-go/tools/cache"

	"github.com/informer-walkthrough/informer-walkthrough/13-generated/generated/clientset/versioned"
)

// Exercise 1. teamInformer returns an informer, not started, that
// caches only the memos of namespace ns labelled team=<team>, with the
// namespace index: the server must do the filtering (one request with
// the selector), not a handler. Use the generated code.
func teamInformer(client versioned.Interface, ns, team string) (cache.SharedIndexInformer, error) {
	return nil, errors.ErrUnsupported // replace with your code
}

// Exercise 2. byTeam is an index function (chapter 04) for the memo
// informer: it files each memo under the value of its "team" label, and
// a memo without one under nothing. With it, step 3's informer could
// answer "the memos of team a" from its index, without a scan.
func byTeam(obj any) ([]string, error) {
	return nil, errors.ErrUnsupported // replace with your code
}
