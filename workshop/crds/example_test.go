package crds_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/informer-walkthrough/informer-walkthrough/workshop"
	"github.com/informer-walkthrough/informer-walkthrough/workshop/crds"
)

// A controller's own kind on a workshop cluster: its CRD installed from a
// YAML file (a directory works too, as envtest's CRDDirectoryPaths), then
// a custom resource written with the dynamic client. As on kube-apiserver,
// the object is pruned of fields its schema does not know and defaulted,
// and one the schema refuses is a 422 Invalid naming the field.
func ExampleInstall() {
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

	c, err := workshop.New(crds.Served())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	ctx := context.Background()
	installed, err := crds.Install(ctx, c, []string{dir})
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
