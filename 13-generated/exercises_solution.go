//go:build solution

// Reference answers to the exercises in exercises.go. They are built
// only with the solution tag:
//
//	go test -tags solution ./13-generated -run Exercise -v

package main

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"

	coursev1alpha1 "github.com/informer-walkthrough/informer-walkthrough/13-generated/apis/course/v1alpha1"
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

// Exercise 2. The informer calls an index function with what it caches:
// here always a *Memo (a tombstone never reaches the indexer). Any
// other type is a mistake worth an error, which the indexer panics on
// (chapter 04), so it shows at once in a test.
func byTeam(obj any) ([]string, error) {
	memo, ok := obj.(*coursev1alpha1.Memo)
	if !ok {
		return nil, fmt.Errorf("byTeam: not a memo: %T", obj)
	}
	if team, ok := memo.Labels["team"]; ok {
		return []string{team}, nil
	}
	return nil, nil
}
