package main

// The pods the chapter indexes, the names of its indices and the
// IndexFuncs it indexes them with: what main.go hands to client-go.

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/informer-walkthrough/informer-walkthrough/internal/cluster"
	"github.com/informer-walkthrough/informer-walkthrough/internal/fixture"
)

// The chapter's index names. cache.NamespaceIndex ("namespace") is
// client-go's own. Names are free strings: they only have to match
// between the Indexers map and the queries.
const (
	byApp   = "app"
	byNode  = "node"
	byImage = "image"
	byNsApp = "namespace/app"
)

// !+appIndex
// appIndex indexes a pod by its app label. A pod without the label
// yields no value: it is absent from this index, which is not an
// error. An error is for objects the function cannot handle at all,
// and the store panics on it (step 4).
func appIndex(obj any) ([]string, error) {
	p, ok := obj.(*corev1.Pod)
	if !ok {
		return nil, fmt.Errorf("app index: want *v1.Pod, got %T", obj)
	}
	if app, ok := p.Labels["app"]; ok {
		return []string{app}, nil
	}
	return nil, nil
}

// !-appIndex

// nodeIndex indexes a pod by spec.nodeName; a pod not yet scheduled
// has none and yields no value.
func nodeIndex(obj any) ([]string, error) {
	p, ok := obj.(*corev1.Pod)
	if !ok {
		return nil, fmt.Errorf("node index: want *v1.Pod, got %T", obj)
	}
	if p.Spec.NodeName == "" {
		return nil, nil
	}
	return []string{p.Spec.NodeName}, nil
}

// imageIndex is multi-valued: a pod is filed under every image it
// runs. A repeated value (two containers, one image) is harmless: the
// index holds a set of keys per value.
func imageIndex(obj any) ([]string, error) {
	p, ok := obj.(*corev1.Pod)
	if !ok {
		return nil, fmt.Errorf("image index: want *v1.Pod, got %T", obj)
	}
	var imgs []string
	for _, ctr := range p.Spec.Containers {
		imgs = append(imgs, ctr.Image)
	}
	return imgs, nil
}

// nsAppIndex files a pod under "namespace/app": a composite value.
func nsAppIndex(obj any) ([]string, error) {
	p, ok := obj.(*corev1.Pod)
	if !ok {
		return nil, fmt.Errorf("ns/app index: want *v1.Pod, got %T", obj)
	}
	if app, ok := p.Labels["app"]; ok {
		return []string{p.Namespace + "/" + app}, nil
	}
	return nil, nil
}

// podIndexers are the indices of step 6's stores.
func podIndexers() cache.Indexers {
	return cache.Indexers{
		cache.NamespaceIndex: cache.MetaNamespaceIndexFunc,
		byApp:                appIndex,
		byImage:              imageIndex,
	}
}

// examplePods are the in-memory pods of steps 1 to 4: two namespaces,
// three nodes, three apps and a pod with neither app label nor node.
// They never reach a server, so they carry no course label.
func examplePods() []*corev1.Pod {
	return []*corev1.Pod{
		newPod("shop", "web-1", "web", "node-a", "nginx:1.27", "envoy:1.31"),
		newPod("shop", "web-2", "web", "node-b", "nginx:1.27", "envoy:1.31"),
		newPod("shop", "api-1", "api", "node-a", "api:2.4", "envoy:1.31"),
		newPod("shop", "job-1", "", "", "busybox:1.37"),
		newPod("blog", "web-1", "web", "node-b", "nginx:1.27"),
		newPod("blog", "db-1", "db", "node-c", "postgres:17"),
	}
}

// relistedPods are what a relist would bring after step 3's writes:
// shop/job-1 and blog/db-1 gone, shop/web-1 and shop/web-2 as step 3
// left them.
func relistedPods() []any {
	return []any{
		newPod("shop", "web-1", "blue", "node-a", "nginx:1.27", "envoy:1.31"),
		newPod("shop", "web-2", "canary", "node-b", "nginx:1.28", "envoy:1.31"),
		newPod("shop", "api-1", "api", "node-a", "api:2.4", "envoy:1.31"),
		newPod("blog", "web-1", "web", "node-b", "nginx:1.27"),
	}
}

// serverPods are the pods step 5 creates on the server for its
// informer to index.
func serverPods() []*corev1.Pod {
	return []*corev1.Pod{
		gatedPod("web-1", "web", "nginx:1.27", "envoy:1.31"),
		gatedPod("web-2", "web", "nginx:1.27", "envoy:1.31"),
		gatedPod("api-1", "api", "api:2.4", "envoy:1.31"),
	}
}

func newPod(ns, name, app, node string, imgs ...string) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       corev1.PodSpec{NodeName: node, Containers: containers(imgs)},
	}
	if app != "" {
		p.Labels = map[string]string{"app": app}
	}
	return p
}

// gatedPod is a pod for the server: its scheduling gate keeps any
// scheduler or kubelet away, and it carries the course's label.
func gatedPod(name, app string, imgs ...string) *corev1.Pod {
	p := fixture.GatedPod(name, cluster.Labels("app", app))
	p.Spec.Containers = containers(imgs)
	return p
}

func containers(imgs []string) []corev1.Container {
	var ctrs []corev1.Container
	for i, img := range imgs {
		ctrs = append(ctrs, corev1.Container{Name: fmt.Sprintf("c%d", i), Image: img})
	}
	return ctrs
}
