package main

// The objects the steps make to give the controller work, built in
// plain Go: the Deployments, the patches that change them, and the
// patch with which someone else changes a summary in step 3.

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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

// editedBy is the annotation someone else writes on a summary in
// step 3: any change gives the ConfigMap a new resourceVersion.
const editedBy = "walkthrough/edited-by"

// editPatch is a merge patch that someone else makes to a summary.
func editPatch(n int) []byte {
	return fmt.Appendf(nil, `{"metadata":{"annotations":{%q:"someone else, edit %d"}}}`, editedBy, n)
}
