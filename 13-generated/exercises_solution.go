//go:build solution

// Reference answers to the exercises in exercises.go. They are built
// only with the solution tag:
//
//	go test -tags solution ./13-generated -run Exercise -v

package main

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"

	"github.com/informer-walkthrough/informer-walkthrough/13-generated/generated/clientset/versioned"
	memoinformers "github.com/informer-walkthrough/informer-walkthrough/13-generated/generated/informers/externalversions/course/v1alpha1"
)

// Exercise 1. NewFilteredMemoInformer takes the tweak that step 2 uses
// for the course's label: here it sets a selector on team, which the
// server applies to the watch-list (and to any LIST a relist sends). The
// namespace index is not added for you outside a factory: the factory's
// defaultInformer passes it, the constructor takes what it is given.
func teamInformer(client versioned.Interface, ns, team string) (cache.SharedIndexInformer, error) {
	selector := labels.Set{"team": team}.String()
	return memoinformers.NewFilteredMemoInformer(client, ns, 0,
		cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc},
		func(o *metav1.ListOptions) { o.LabelSelector = selector }), nil
}
