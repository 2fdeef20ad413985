//go:build solution

// Reference answers to the exercises in exercises.go. They are built
// only with the solution tag:
//
//	go test -tags solution ./04-indexer -run Exercise -v

package main

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
)

// Exercise 1. Returning []string{""} for an empty phase would file
// every pod without a status under the value "": a real but useless
// bucket, which ByIndex(phase, "") then answers with.
func phaseIndex(obj any) ([]string, error) {
	p, ok := obj.(*corev1.Pod)
	if !ok {
		return nil, fmt.Errorf("phase index: want *v1.Pod, got %T", obj)
	}
	if p.Status.Phase == "" {
		return nil, nil
	}
	return []string{string(p.Status.Phase)}, nil
}
