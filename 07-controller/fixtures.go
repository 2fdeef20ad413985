package main

// What the steps make and change on the cluster to give the controller
// work, and what they check at the end. None of it is the controller.

import (
	"context"
	"fmt"
	"io"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	appsclient "k8s.io/client-go/kubernetes/typed/apps/v1"
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

// patchRelease sets the release label with a merge patch, which
// carries no resourceVersion: on a real cluster the deployment
// controller writes the status meanwhile, and an Update could conflict.
func patchRelease(ctx context.Context, deploys appsclient.DeploymentInterface,
	name, release string) (string, error) {
	patch := fmt.Sprintf(`{"metadata":{"labels":{"release":%q}}}`, release)
	d, err := deploys.Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
	if err != nil {
		return "", err
	}
	return d.ResourceVersion, nil
}

func key(namespace, name string) string { return namespace + "/" + name }

// printLeftBehind lists the summaries still on the cluster.
func printLeftBehind(ctx context.Context, out io.Writer, c *cluster.Cluster) error {
	left, err := c.Client.CoreV1().ConfigMaps(c.Namespace).List(ctx,
		metav1.ListOptions{LabelSelector: cluster.OwnSelector})
	if err != nil {
		return err
	}
	for _, cm := range left.Items {
		fmt.Fprintf(out, "  left behind: configmap/%s  labels=%s  replicas=%s\n",
			cm.Name, cm.Data["labels"], cm.Data["replicas"])
	}
	return nil
}
