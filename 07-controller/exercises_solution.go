//go:build solution

// Reference answers to the exercises in exercises.go. They are built
// only with the solution tag:
//
//	go test -tags solution ./07-controller -run Exercise -v

package main

import (
	"fmt"

	"k8s.io/client-go/util/workqueue"
)

// Exercise 2. NumRequeues counts the AddRateLimited calls since the
// last Forget. Forget on a drop matters as much as on success: without
// it, the next event for this key would start at the longest delay.
func finish[T comparable](q workqueue.TypedRateLimitingInterface[T], key T,
	syncErr error, maxRetries int) error {
	if syncErr == nil {
		q.Forget(key)
		return nil
	}
	if q.NumRequeues(key) < maxRetries {
		q.AddRateLimited(key)
		return nil
	}
	q.Forget(key)
	return fmt.Errorf("dropping %v after %d retries: %w",
		key, maxRetries, syncErr)
}
