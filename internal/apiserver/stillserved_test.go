package apiserver

import (
	"context"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
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
	if _, err := s.create(context.Background(), r, "ns", "test", obj, false); !apierrors.IsNotFound(err) {
		t.Errorf("create after the resource was removed: %v, want 404", err)
	}
	if _, err := s.list(r, listOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("list after the resource was removed: %v, want 404", err)
	}
	if _, err := s.watch(r, watchOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("watch after the resource was removed: %v, want 404", err)
	}
}

// TestStillServedApplyScale: a server-side apply and the scale
// subresource's read and write check it too (an object of the removed
// resource is still in the store here, so that a missing check shows).
func TestStillServedApplyScale(t *testing.T) {
	s := newStore(func() metav1.Time { return metav1.NewTime(FixedTime) }, 100)
	r := s.reg.lookup(appsv1.SchemeGroupVersion.WithResource("deployments"))
	if r == nil {
		t.Fatal("no deployments")
	}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "d"},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "d"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "d"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i"}}},
			},
		},
	}
	ns := s.reg.lookup(corev1.SchemeGroupVersion.WithResource("namespaces"))
	if _, err := s.create(context.Background(), ns, "", "test", &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ns"}}, false); err != nil {
		t.Fatal(err)
	}
	if _, err := s.create(context.Background(), r, "ns", "test", d, false); err != nil {
		t.Fatal(err)
	}
	s.reg.remove(r)
	intent := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "d"}, "spec": map[string]any{"replicas": int64(2)},
	}}
	if _, _, err := s.apply(context.Background(), r, "ns", "d", "", "test", true, intent, false); !apierrors.IsNotFound(err) {
		t.Errorf("apply after the resource was removed: %v, want 404", err)
	}
	if _, err := s.getScale(r, "ns", "d"); !apierrors.IsNotFound(err) {
		t.Errorf("get scale after the resource was removed: %v, want 404", err)
	}
	if _, err := s.updateScale(context.Background(), r, "ns", "d", "test", false, func(sc *autoscalingv1.Scale) (runtime.Object, error) {
		sc.Spec.Replicas = 3
		return sc, nil
	}, false); !apierrors.IsNotFound(err) {
		t.Errorf("update scale after the resource was removed: %v, want 404", err)
	}
}
