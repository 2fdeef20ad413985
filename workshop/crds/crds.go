// Package crds serves CustomResourceDefinitions on a workshop cluster,
// the way envtest's CRDInstallOptions do on its kube-apiserver: start the
// cluster with Served, then Install the CRDs (from files, directories or
// typed objects) and use their kinds once Install returns.
//
//	c := workshop.Start(t, crds.Served())
//	if _, err := crds.Install(ctx, c, []string{"config/crd/bases"}); err != nil {
//		t.Fatal(err)
//	}
//
// A CRD's objects are pruned, defaulted and validated by kube-apiserver's
// own structural-schema code (k8s.io/apiextensions-apiserver), which is
// why this is a package of its own: a test that does not import it does
// not compile that code: CEL x-kubernetes-validations (with oldSelf and
// ratcheting of unchanged fields on update), selectableFields, and every
// served version from one storage, converted as the CRD's conversion
// strategy says: None, or Webhook, through kube-apiserver's webhook
// converter, which POSTs ConversionReviews to the CRD's
// conversion.webhook.clientConfig. A webhook is reached at its url; a
// service reference is resolved to https://NAME.NAMESPACE.svc:PORT,
// which only a machine whose DNS knows that name reaches (envtest has
// the same limit, and its InstallCRDs writes a url on loopback).
package crds

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/informer-walkthrough/informer-walkthrough/internal/apiserver"
	"github.com/informer-walkthrough/informer-walkthrough/internal/apiserver/crd"
	"github.com/informer-walkthrough/informer-walkthrough/workshop"
)

// Served makes the cluster serve apiextensions.k8s.io/v1
// CustomResourceDefinitions, as every kube-apiserver does.
func Served() workshop.Option {
	return func(o *apiserver.Options) { o.Extend = crd.Serve }
}

// Install creates CustomResourceDefinitions on c and waits until each is
// Established, so that its kind is served when it returns: those in
// crds, and those in the files that paths name, a directory standing for
// the .yaml, .yml and .json files in it (as envtest's CRDDirectoryPaths;
// a file may hold several YAML documents, and documents of other kinds
// are skipped). It returns the CRDs as the cluster holds them.
// c must have been started with Served.
func Install(ctx context.Context, c *workshop.Cluster, paths []string, crds ...*apiextensionsv1.CustomResourceDefinition) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	crds = slices.Clone(crds) // not the caller's backing array
	for _, p := range paths {
		read, err := readCRDs(p)
		if err != nil {
			return nil, err
		}
		crds = append(crds, read...)
	}
	client, err := apiextensionsclient.NewForConfig(c.Config())
	if err != nil {
		return nil, err
	}
	crdClient := client.ApiextensionsV1().CustomResourceDefinitions()
	var out []*apiextensionsv1.CustomResourceDefinition
	for _, in := range crds {
		created, err := crdClient.Create(ctx, in, metav1.CreateOptions{})
		if apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("installing CRD %s: the cluster does not serve CRDs: start it with crds.Served(): %w", in.Name, err)
		}
		if err != nil {
			return nil, fmt.Errorf("installing CRD %s: %w", in.Name, err)
		}
		// The workshop cluster establishes a CRD as it creates it; a
		// real one a moment later. Wait as for a real one.
		err = wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
			got, err := crdClient.Get(ctx, created.Name, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			for _, cond := range got.Status.Conditions {
				if cond.Type == apiextensionsv1.NamesAccepted && cond.Status == apiextensionsv1.ConditionFalse {
					return false, fmt.Errorf("CRD %s: names not accepted: %s", got.Name, cond.Message)
				}
				if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
					created = got
					return true, nil
				}
			}
			return false, nil
		})
		if err != nil {
			return nil, fmt.Errorf("waiting for CRD %s to be Established: %w", in.Name, err)
		}
		out = append(out, created)
	}
	return out, nil
}

// readCRDs reads the CRDs of a file, or of the files of a directory.
func readCRDs(path string) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	files := []string{path}
	if info.IsDir() {
		entries, err := os.ReadDir(path)
		if err != nil {
			return nil, err
		}
		files = nil
		for _, e := range entries {
			switch filepath.Ext(e.Name()) {
			case ".yaml", ".yml", ".json":
				if !e.IsDir() {
					files = append(files, filepath.Join(path, e.Name()))
				}
			}
		}
	}
	var out []*apiextensionsv1.CustomResourceDefinition
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			return nil, err
		}
		dec := utilyaml.NewYAMLOrJSONDecoder(f, 4096)
		for {
			var doc apiextensionsv1.CustomResourceDefinition
			err := dec.Decode(&doc)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				_ = f.Close()
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			if doc.Kind != "CustomResourceDefinition" || doc.APIVersion != apiextensionsv1.SchemeGroupVersion.String() {
				continue
			}
			out = append(out, &doc)
		}
		_ = f.Close()
	}
	return out, nil
}
