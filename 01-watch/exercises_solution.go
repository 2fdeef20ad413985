//go:build solution

// Reference answers to the exercises in exercises.go. They are built
// only with the solution tag:
//
//	go test -tags solution ./01-watch -run Exercise -v

package main

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
)

// Exercise 1. The selector is applied by the server: a pod that starts
// to match arrives as ADDED, one that stops matching as DELETED.
func frontTier(ctx context.Context, pods typedcorev1.PodInterface,
	rv string) (watch.Interface, error) {
	return pods.Watch(ctx, metav1.ListOptions{
		ResourceVersion: rv,
		LabelSelector:   "tier=front",
	})
}
