package main

// The CustomResourceDefinition of the course's kind, and how the chapter
// installs it: only if it is absent, waiting until it is Established,
// and deleting it at the end only if this run created it.

import (
	"context"
	"fmt"
	"io"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	watchtools "k8s.io/client-go/tools/watch"
	"sigs.k8s.io/yaml"

	"github.com/informer-walkthrough/informer-walkthrough/internal/apiserver"
	workshopcrd "github.com/informer-walkthrough/informer-walkthrough/internal/apiserver/crd"
	"github.com/informer-walkthrough/informer-walkthrough/internal/cluster"
)

// memoCRD is the CRD of apis/course/v1alpha1's Memo, as a manifest you
// could kubectl apply. code-generator writes Go code only: the CRD is
// written by hand here (kubebuilder's controller-gen would make it from
// the Go types; sample-controller writes its own by hand too). It asks
// for the status subresource, which the generated UpdateStatus writes
// to, and a printer column for kubectl get.
//
// !+crd
const memoCRD = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: memos.course.example.com
spec:
  group: course.example.com
  scope: Namespaced
  names: {kind: Memo, listKind: MemoList, plural: memos, singular: memo}
  versions:
  - name: v1alpha1
    served: true
    storage: true
    subresources: {status: {}}
    additionalPrinterColumns:
    - {name: Text, type: string, jsonPath: .spec.text}
    - {name: ConfigMap, type: string, jsonPath: .status.configMap}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            required: [text]
            properties:
              text: {type: string}
          status:
            type: object
            properties:
              configMap: {type: string}
              observedGeneration: {type: integer, format: int64}
`

// !-crd

// extras makes the workshop cluster serve CRDs, as every kube-apiserver
// does (the chapters' cluster serves only built-in kinds by default).
var extras = cluster.Extras{Server: apiserver.Options{Extend: workshopcrd.Serve}}

// installCRD makes sure the CRD exists and is Established, and returns
// the function that removes what installCRD added: the CRD if this run
// created it (deleting a CRD deletes every object of its kind). On a real
// cluster that takes a ClusterRole (README): CRDs are cluster-scoped.
func installCRD(ctx context.Context, out io.Writer, c *cluster.Cluster) (func(), error) {
	fmt.Fprintln(out, "Setup. The CRD of the course's kind, Memo")
	var crd apiextensionsv1.CustomResourceDefinition
	if err := yaml.UnmarshalStrict([]byte(memoCRD), &crd); err != nil {
		return nil, fmt.Errorf("memoCRD: %w", err)
	}
	// JSON, not the protobuf this clientset asks for by default: what
	// --trace shows of the CRD is then the same from any binary (the
	// protobuf's size depends on the field manager, the program's name).
	cfg := rest.CopyConfig(c.Config)
	cfg.ContentType = "application/json"
	client, err := apiextensionsclient.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	crds := client.ApiextensionsV1().CustomResourceDefinitions()

	// Create it only if it is absent: another program (or an earlier
	// chapter run on this cluster) may own it.
	got, err := crds.Get(ctx, crd.Name, metav1.GetOptions{})
	created := false
	if apierrors.IsNotFound(err) {
		got, err = crds.Create(ctx, &crd, metav1.CreateOptions{})
		created = err == nil
	}
	if err != nil {
		return nil, err
	}
	remove := func() {}
	if created {
		remove = func() {
			// Also after Ctrl-C: the run's context is over by then.
			ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 15*time.Second)
			defer cancel()
			_ = crds.Delete(ctx, crd.Name, metav1.DeleteOptions{})
		}
	}

	// The kind is served once the CRD is Established: wait for that
	// condition on a watch of this one CRD, from the version we read.
	if !established(got) {
		w, err := crds.Watch(ctx, metav1.ListOptions{
			FieldSelector:   fields.OneTermEqualSelector("metadata.name", crd.Name).String(),
			ResourceVersion: got.ResourceVersion,
		})
		if err != nil {
			remove()
			return nil, err
		}
		_, err = watchtools.UntilWithoutRetry(ctx, w, func(ev watch.Event) (bool, error) {
			c, ok := ev.Object.(*apiextensionsv1.CustomResourceDefinition)
			return ok && established(c), nil
		})
		if err != nil {
			remove()
			return nil, fmt.Errorf("waiting for CRD %s to be Established: %w", crd.Name, err)
		}
	}
	printCRD(out, &crd)
	return remove, nil
}

// established reports whether the CRD's Established condition is True.
func established(crd *apiextensionsv1.CustomResourceDefinition) bool {
	for _, cond := range crd.Status.Conditions {
		if cond.Type == apiextensionsv1.Established {
			return cond.Status == apiextensionsv1.ConditionTrue
		}
	}
	return false
}
