package main

// The objects the steps act on, and the changes they make to them: two
// ConfigMaps and a gated pod (step 1 onwards), the deployment's release
// label and the ConfigMap it owns (step 6).

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/informer-walkthrough/informer-walkthrough/internal/cluster"
	"github.com/informer-walkthrough/informer-walkthrough/internal/fixture"
)

// createFixtures creates the chapter's objects: two ConfigMaps and a pod
// that no scheduler or kubelet will touch.
func createFixtures(ctx context.Context, c *cluster.Cluster) error {
	cms := c.Client.CoreV1().ConfigMaps(c.Namespace)
	for _, nt := range [][2]string{{"web", "blue"}, {"db", "red"}} {
		cm := &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: nt[0], Labels: cluster.Labels("team", nt[1])},
			Data:       map[string]string{"mode": "v1"},
		}
		if _, err := cms.Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			return err
		}
	}
	_, err := c.Client.CoreV1().Pods(c.Namespace).Create(ctx, fixture.GatedPod("web-1", cluster.Labels()), metav1.CreateOptions{})
	return err
}

// ownedConfigMap is a ConfigMap whose controller is the deployment, as a
// reconciler would create it (controllerutil.SetControllerReference):
// the controller reference is what Owns maps back to the owner's key.
func ownedConfigMap(owner *appsv1.Deployment) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
		Name:   owner.Name + "-config",
		Labels: cluster.Labels(),
		OwnerReferences: []metav1.OwnerReference{{
			APIVersion: "apps/v1", Kind: "Deployment", Name: owner.Name, UID: owner.UID,
			Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
		}},
	}}
}

// setRelease sets deployment/web's release label, one event. A merge
// patch carries no resourceVersion, so it cannot conflict.
func setRelease(ctx context.Context, c *cluster.Cluster, release string) error {
	patch := fmt.Appendf(nil, `{"metadata":{"labels":{"release":%q}}}`, release)
	_, err := c.Client.AppsV1().Deployments(c.Namespace).Patch(ctx, "web", types.MergePatchType, patch, metav1.PatchOptions{})
	return err
}
