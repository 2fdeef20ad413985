//go:build solution

// Reference answers to the exercises in exercises.go. They are built
// only with the solution tag:
//
//	go test -tags solution ./05-informer -run Exercise -v

package main

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"
)

// Exercise 1. The tombstone's Key is certain; its Obj is the last state
// the informer cached, possibly stale, possibly nil. The key comes from
// DeletionHandlingMetaNamespaceKeyFunc, which reads Key from a
// tombstone: MetaNamespaceKeyFunc would fail on one.
func deletedConfigMap(obj any) (key string, last *corev1.ConfigMap,
	err error) {
	switch o := obj.(type) {
	case *corev1.ConfigMap:
		last = o
	case cache.DeletedFinalStateUnknown:
		last, _ = o.Obj.(*corev1.ConfigMap) // nil if it holds none
	default:
		return "", nil, fmt.Errorf("OnDelete got a %T", obj)
	}
	key, err = cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
	return key, last, err
}
