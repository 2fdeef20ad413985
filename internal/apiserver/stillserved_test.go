package apiserver

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// TestStillServed: a request routed to a resource that a CRD's update
// or delete has since replaced or removed gets kube-apiserver's 404, not
// a write into a store nobody reads, nor a watch that never ends.
func TestStillServed(t *testing.T) {
	s := newStore(func() metav1.Time { return metav1.NewTime(FixedTime) }, 100)
	r := &Resource{
		GVR: schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "gadgets"}, Kind: "ConfigMap",
		Namespaced: true,
		New:        func() runtime.Object { return &corev1.ConfigMap{} },
		NewList:    func() runtime.Object { return &corev1.ConfigMapList{} },
	}
	if err := s.reg.add(r); err != nil {
		t.Fatal(err)
	}
	s.reg.remove(r)
	obj := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "g"}}
	if _, err := s.create(r, "ns", "test", obj, false); !apierrors.IsNotFound(err) {
		t.Errorf("create after the resource was removed: %v, want 404", err)
	}
	if _, err := s.list(r, listOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("list after the resource was removed: %v, want 404", err)
	}
	if _, err := s.watch(r, watchOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("watch after the resource was removed: %v, want 404", err)
	}
}
