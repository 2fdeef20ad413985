package workshop_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/informers"

	"github.com/informer-walkthrough/informer-walkthrough/workshop"
)

// An informer on a workshop cluster, as a test would use one: the same
// client-go code path as in production (here a watch-list), and the
// resourceVersions a real API server gives (the first nine went to what
// the cluster has from the start: its namespaces, their ServiceAccounts
// and the kubernetes Service).
func Example() {
	c, err := workshop.New()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	ctx, cancel := context.WithCancel(context.Background())
	factory := informers.NewSharedInformerFactoryWithOptions(c.Client(), 0,
		informers.WithNamespace(metav1.NamespaceDefault))
	defer factory.Shutdown() // after cancel: defers run last-in first-out
	defer cancel()

	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web-1"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx"}}},
	}
	created, err := c.Client().CoreV1().Pods(metav1.NamespaceDefault).Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	lister := factory.Core().V1().Pods().Lister()
	factory.Start(ctx.Done())
	if err := factory.WaitForCacheSyncWithContext(ctx).AsError(); err != nil {
		fmt.Println(err)
		return
	}
	cached, err := lister.List(labels.Everything())
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("created rv=%s, cached %d pod: %s rv=%s phase=%s\n", created.ResourceVersion,
		len(cached), cached[0].Name, cached[0].ResourceVersion, cached[0].Status.Phase)
	// Output: created rv=10, cached 1 pod: web-1 rv=10 phase=Pending
}

// A controller's own kind on a workshop cluster: its CRD installed from a
// YAML file (a directory works too, as envtest's CRDDirectoryPaths), then
// a custom resource written with the dynamic client. As on kube-apiserver,
// the object is pruned of fields its schema does not know and defaulted,
// and one the schema refuses is a 422 Invalid naming the field.
func ExampleCluster_InstallCRDs() {
	dir, err := os.MkdirTemp("", "crds")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	const widgets = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget, listKind: WidgetList}
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            required: [size]
            properties:
              size: {type: string, enum: [small, large]}
              color: {type: string, default: blue}
`
	if err := os.WriteFile(filepath.Join(dir, "widgets.yaml"), []byte(widgets), 0o644); err != nil {
		fmt.Println(err)
		return
	}

	c, err := workshop.New()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	ctx := context.Background()
	installed, err := c.InstallCRDs(ctx, []string{dir})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("installed:", installed[0].Name)

	dyn, err := dynamic.NewForConfig(c.Config())
	if err != nil {
		fmt.Println(err)
		return
	}
	gvr := schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}
	w := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "example.com/v1", "kind": "Widget",
		"metadata": map[string]any{"name": "w1"},
		"spec":     map[string]any{"size": "small", "unknownField": "dropped"},
	}}
	got, err := dyn.Resource(gvr).Namespace(metav1.NamespaceDefault).Create(ctx, w, metav1.CreateOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	spec, _, _ := unstructured.NestedMap(got.Object, "spec")
	fmt.Println("stored spec:", spec)

	w.SetName("w2")
	w.Object["spec"] = map[string]any{"size": "huge"}
	_, err = dyn.Resource(gvr).Namespace(metav1.NamespaceDefault).Create(ctx, w, metav1.CreateOptions{})
	fmt.Println("invalid:", apierrors.IsInvalid(err), err)
	// Output:
	// installed: widgets.example.com
	// stored spec: map[color:blue size:small]
	// invalid: true Widget.example.com "w2" is invalid: spec.size: Unsupported value: "huge": supported values: "small", "large"
}
