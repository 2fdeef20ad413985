package main

// The chapter's objects, built in plain Go: the Deployments the steps
// create and change to give the controller work, and the summary
// ConfigMap the controller keeps for each.

import (
	"fmt"
	"maps"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"

	"github.com/informer-walkthrough/informer-walkthrough/internal/cluster"
)

// newDeployment is a Deployment that no real cluster will run: it is
// paused with 0 replicas, so the deployment controller creates no
// ReplicaSet (it only writes the status), and its pod template carries
// a scheduling gate in case a pod were ever made.
func newDeployment(name string) *appsv1.Deployment {
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{
			Name:   name,
			Labels: cluster.Labels("app", name, "release", "v1"),
		},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](0),
			Paused:   true,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: cluster.Labels("app", name)},
				Spec: corev1.PodSpec{
					SchedulingGates: []corev1.PodSchedulingGate{{Name: "walkthrough/hold"}},
					Containers:      []corev1.Container{{Name: name, Image: "nginx:1.27"}},
				},
			},
		},
	}
}

// releasePatch is a merge patch that sets the release label. It
// carries no resourceVersion: on a real cluster the deployment
// controller writes the status meanwhile, and an Update could conflict.
func releasePatch(release string) []byte {
	return fmt.Appendf(nil, `{"metadata":{"labels":{"release":%q}}}`, release)
}

func key(namespace, name string) string { return namespace + "/" + name }

// summaryOf is the ConfigMap data for d: its replicas and its labels
// (the course's own label left out, it is on everything).
func summaryOf(d *appsv1.Deployment) map[string]string {
	l := labels.Set(maps.Clone(d.Labels))
	delete(l, cluster.ManagedByLabel)
	return map[string]string{
		"replicas": strconv.Itoa(int(ptr.Deref(d.Spec.Replicas, 1))),
		"labels":   l.String(),
	}
}

// newSummary is the ConfigMap for d. Its ownerReference names d as its
// controller, so a real cluster's garbage collector deletes it with d.
// (No BlockOwnerDeletion: nothing here deletes in the foreground, and
// setting it can need extra RBAC.)
func newSummary(d *appsv1.Deployment, name string, data map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{
			Name:   name,
			Labels: cluster.Labels("summary-of", d.Name),
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "apps/v1", Kind: "Deployment",
				Name: d.Name, UID: d.UID, Controller: ptr.To(true),
			}},
		},
		Data: data,
	}
}
