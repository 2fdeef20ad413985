//go:build solution

// Reference answers to the exercises in exercises.go. They are built
// only with the solution tag:
//
//	go test -tags solution ./09-metadata -run Exercise -v

package main

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Exercise 1. The Nested helpers walk the map and check each type on
// the way; found is false for a field that is absent, and the error
// says which field had the wrong type. A list comes back as []any.
func replicasAndImages(u *unstructured.Unstructured) (int64, []string, error) {
	replicas, found, err := unstructured.NestedInt64(u.Object, "spec", "replicas")
	if err != nil {
		return 0, nil, err
	}
	if !found {
		return 0, nil, fmt.Errorf("%s has no spec.replicas", u.GetName())
	}
	containers, _, err := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers")
	if err != nil {
		return 0, nil, err
	}
	var images []string
	for i, c := range containers {
		m, ok := c.(map[string]any)
		if !ok {
			return 0, nil, fmt.Errorf("container %d is a %T", i, c)
		}
		image, _, err := unstructured.NestedString(m, "image")
		if err != nil {
			return 0, nil, err
		}
		images = append(images, image)
	}
	return replicas, images, nil
}

// Exercise 2. meta.Accessor reads the metadata of a typed object, an
// Unstructured and a PartialObjectMetadata alike. An index function
// must not fail (the store panics on an error): an object it cannot
// read, or without owners, has no index value.
func byOwner(obj any) ([]string, error) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, nil
	}
	var uids []string
	for _, o := range m.GetOwnerReferences() {
		uids = append(uids, string(o.UID))
	}
	return uids, nil
}

// Exercise 3. Build the lean pod from the fields kept, rather than
// clearing the others one by one: nothing added to the Pod type later
// slips through. Applied to its own output it gives the same pod.
func keepPhaseAndNode(obj any) (any, error) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return obj, nil
	}
	lean := &corev1.Pod{
		ObjectMeta: pod.ObjectMeta,
		Spec:       corev1.PodSpec{NodeName: pod.Spec.NodeName},
		Status:     corev1.PodStatus{Phase: pod.Status.Phase},
	}
	lean.ManagedFields = nil
	return lean, nil
}
