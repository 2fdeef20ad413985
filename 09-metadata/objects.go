package main

// The pods the chapter creates for its owner, a paused deployment
// (fixture.PausedDeployment): pods shaped like the pods of a production
// deployment (pod.go).

import (
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/informer-walkthrough/informer-walkthrough/internal/cluster"
)

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
