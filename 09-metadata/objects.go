package main

// The objects the chapter creates: a paused deployment, and pods shaped
// like the pods of a production deployment (pod.go).

import (
	"encoding/json"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/informer-walkthrough/informer-walkthrough/internal/cluster"
	"github.com/informer-walkthrough/informer-walkthrough/internal/show"
)

// pausedDeployment is a deployment that no controller acts on, even on
// a real cluster: paused, with 0 replicas.
func pausedDeployment(name, image string) *appsv1.Deployment {
	labels := cluster.Labels("app", name)
	pod := show.GatedPod("", labels)
	pod.Spec.Containers[0].Image = image
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](0),
			Paused:   true,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       pod.Spec,
			},
		},
	}
}

// shapedPod is pod number i of podJSON's shape, owned by owner, and the
// status to write once it exists.
func shapedPod(i int, owner metav1.OwnerReference) (*corev1.Pod, corev1.PodStatus, error) {
	var pod corev1.Pod
	if err := json.Unmarshal([]byte(podJSON), &pod); err != nil {
		return nil, corev1.PodStatus{}, fmt.Errorf("podJSON: %w", err)
	}
	pod.Name = fmt.Sprintf("shop-%02d", i)
	pod.Labels[cluster.ManagedByLabel] = cluster.ManagedByValue
	pod.OwnerReferences = []metav1.OwnerReference{owner}
	status := pod.Status
	pod.Status = corev1.PodStatus{}
	return &pod, status, nil
}
