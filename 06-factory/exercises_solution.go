//go:build solution

// Reference answers to the exercises in exercises.go. They are built
// only with the solution tag:
//
//	go test -tags solution ./06-factory -run Exercise -v

package main

import (
	"context"
	"fmt"

	"k8s.io/client-go/informers"
	corev1listers "k8s.io/client-go/listers/core/v1"
)

// Exercise 1. Lister() makes the informer if the factory has none for
// *v1.Pod yet. Start runs the informers not started yet, and is safe to
// call again: the informers already running are left alone. Only then
// does WaitForCacheSync wait for the pods.
func syncedPodLister(ctx context.Context, factory informers.SharedInformerFactory,
	ns string) (corev1listers.PodNamespaceLister, error) {
	pods := factory.Core().V1().Pods()
	lister := pods.Lister()
	factory.Start(ctx.Done())
	if err := factory.WaitForCacheSyncWithContext(ctx).AsError(); err != nil {
		return nil, fmt.Errorf("pod cache: %w", err)
	}
	return lister.Pods(ns), nil
}
