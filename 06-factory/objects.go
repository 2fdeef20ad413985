package main

// The objects every step of chapter 06 looks at: paused deployments and
// gated pods (internal/fixture), which nothing on a real cluster acts on.

import (
	"context"
	"fmt"
	"io"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/informer-walkthrough/informer-walkthrough/internal/cluster"
	"github.com/informer-walkthrough/informer-walkthrough/internal/fixture"
)

// setup creates the objects every step looks at. The deployments are
// paused with 0 replicas and the pods carry a scheduling gate, so on a
// real cluster no controller, scheduler or kubelet acts on them.
func setup(ctx context.Context, out io.Writer, c *cluster.Cluster) error {
	fmt.Fprintln(out, "Setup. Two paused deployments, three gated pods")
	for _, d := range []*appsv1.Deployment{
		fixture.PausedDeployment("web", "nginx:1.27"), fixture.PausedDeployment("api", "httpd:2.4"),
	} {
		d, err := c.Client.AppsV1().Deployments(c.Namespace).Create(ctx, d, metav1.CreateOptions{})
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "  created deployment/%s  gen=%d  rv=%s\n",
			d.Name, d.Generation, d.ResourceVersion)
	}
	for _, p := range []*corev1.Pod{
		fixture.GatedPod("web-1", cluster.Labels("app", "web")),
		fixture.GatedPod("web-2", cluster.Labels("app", "web")),
		fixture.GatedPod("api-1", cluster.Labels("app", "api")),
	} {
		p, err := c.Client.CoreV1().Pods(c.Namespace).Create(ctx, p, metav1.CreateOptions{})
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "  created pod/%s  rv=%s\n", p.Name, p.ResourceVersion)
	}
	return nil
}
