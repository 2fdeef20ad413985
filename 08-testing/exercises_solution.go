//go:build solution

// Reference answers to the exercises in exercises.go. They are built
// only with the solution tag:
//
//	go test -tags solution ./08-testing -run Exercise -v

package main

import (
	"errors"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
)

// Exercise 2. A reactor that returns false passes the action on down
// the chain, and every reactor of one call gets the same copy of the
// action: so a change to its object is what the tracker then stores.
// Reactors run one at a time, under the fake's lock, so last needs no
// lock of its own; and they may call the tracker, never the clientset.
func stampResourceVersions(client *fake.Clientset) error {
	var last int64
	stamp := func(obj runtime.Object) {
		if m, err := meta.Accessor(obj); err == nil {
			last++
			m.SetResourceVersion(strconv.FormatInt(last, 10))
		}
	}
	client.PrependReactor("create", "*", func(a clienttesting.Action) (bool, runtime.Object, error) {
		stamp(a.(clienttesting.CreateAction).GetObject())
		return false, nil, nil
	})
	client.PrependReactor("update", "*", func(a clienttesting.Action) (bool, runtime.Object, error) {
		obj := a.(clienttesting.UpdateAction).GetObject()
		m, err := meta.Accessor(obj)
		if err != nil {
			return false, nil, nil
		}
		stored, err := client.Tracker().Get(a.GetResource(), a.GetNamespace(), m.GetName())
		if err != nil {
			return false, nil, nil // the tracker answers NotFound itself
		}
		sm, err := meta.Accessor(stored)
		if err == nil && m.GetResourceVersion() != "" && m.GetResourceVersion() != sm.GetResourceVersion() {
			return true, nil, apierrors.NewConflict(a.GetResource().GroupResource(), m.GetName(),
				errors.New("the object has been modified; please apply your changes to the latest version and try again"))
		}
		stamp(obj)
		return false, nil, nil
	})
	return nil
}

// Exercise 3. A watch reactor that answers the watch itself: the
// tracker's watch, through watch.Filter. (An API server does more: an
// object that stops matching comes as DELETED, one that starts
// matching as ADDED. Try it.)
func honourLabelSelector(client *fake.Clientset) error {
	client.PrependWatchReactor("*", func(a clienttesting.Action) (bool, watch.Interface, error) {
		wa, ok := a.(clienttesting.WatchActionImpl)
		if !ok || wa.ListOptions.LabelSelector == "" {
			return false, nil, nil
		}
		sel, err := labels.Parse(wa.ListOptions.LabelSelector)
		if err != nil {
			return true, nil, apierrors.NewBadRequest(err.Error())
		}
		w, err := client.Tracker().Watch(a.GetResource(), a.GetNamespace(), wa.ListOptions)
		if err != nil {
			return true, nil, err
		}
		return true, watch.Filter(w, func(ev watch.Event) (watch.Event, bool) {
			m, err := meta.Accessor(ev.Object)
			return ev, err == nil && sel.Matches(labels.Set(m.GetLabels()))
		}), nil
	})
	return nil
}
