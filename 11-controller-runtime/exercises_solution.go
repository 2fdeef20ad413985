//go:build solution

// Reference answers to the exercises in exercises.go. They are built
// only with the solution tag:
//
//	go test -tags solution ./11-controller-runtime -run Exercise -v

package main

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	crcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Exercise 1. IndexField is chapter 04's AddIndexers under another name:
// the extract function is the IndexFunc, its values prefixed with the
// namespace by the cache. An empty result puts the object in no entry.
func indexByTeam(ctx context.Context, cache crcache.Cache) error {
	return cache.IndexField(ctx, &corev1.ConfigMap{}, "team", func(o client.Object) []string {
		if team := o.GetLabels()["team"]; team != "" {
			return []string{team}
		}
		return nil
	})
}

// Exercise 2. Without the deep copy, cm shares its maps with the cache's
// object: copy before writing, or the write lands in the cache.
func withMode(ctx context.Context, reader client.Reader, key client.ObjectKey,
	mode string) (*corev1.ConfigMap, error) {
	var cm corev1.ConfigMap
	if err := reader.Get(ctx, key, &cm, client.UnsafeDisableDeepCopy); err != nil {
		return nil, err
	}
	edited := cm.DeepCopy()
	if edited.Data == nil {
		edited.Data = map[string]string{}
	}
	edited.Data["mode"] = mode
	return edited, nil
}
