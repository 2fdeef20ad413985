//go:build solution

// Reference answers to the exercises in exercises.go. They are built
// only with the solution tag:
//
//	go test -tags solution ./10-lifecycle -run Exercise -v

package main

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/cache"
)

// Exercise 1. A handler replaces the default one entirely, so it calls
// DefaultWatchErrorHandler itself to keep the log line. Expired watches
// (410) and dropped connections also come here: those the reflector
// heals by itself.
func failFast(informer cache.SharedInformer, stop context.CancelCauseFunc) error {
	return informer.SetWatchErrorHandlerWithContext(
		func(ctx context.Context, r *cache.Reflector, err error) {
			cache.DefaultWatchErrorHandler(ctx, r, err)
			if apierrors.IsUnauthorized(err) || apierrors.IsForbidden(err) {
				stop(err)
			}
		})
}

// Exercise 2. Step 5's pattern as one call. The store may be past the
// write (someone wrote again): what it holds is then newer, which is
// what a controller wants.
func updateAndRead(ctx context.Context, pods typedcorev1.PodInterface, store cache.Store,
	name, release string) (*corev1.Pod, error) {
	patch := fmt.Appendf(nil, `{"metadata":{"labels":{"release":%q}}}`, release)
	written, err := pods.Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{})
	if err != nil {
		return nil, err
	}
	if err := waitForStore(ctx, store, written.ResourceVersion); err != nil {
		return nil, err
	}
	obj, ok, err := store.Get(written)
	if err != nil || !ok {
		return nil, fmt.Errorf("pod %s not in the store (%v)", name, err)
	}
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return nil, fmt.Errorf("the store holds a %T", obj)
	}
	return pod, nil
}
