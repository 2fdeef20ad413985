package crd

import (
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/informer-walkthrough/informer-walkthrough/internal/apiserver"
)

// TestGlobalSchemeUntouched: importing this package (as workshop/crds
// does) registers the CRD types in the workshop cluster's own scheme,
// and leaves client-go's global scheme, which the importing program's
// own clients use, as client-go made it.
func TestGlobalSchemeUntouched(t *testing.T) {
	gvk := apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition")
	if scheme.Scheme.Recognizes(gvk) {
		t.Errorf("client-go's global scheme has %v", gvk)
	}
	if scheme.Scheme.IsGroupRegistered(apiextensionsv1.GroupName) {
		t.Errorf("client-go's global scheme has the group %s", apiextensionsv1.GroupName)
	}
	if !apiserver.Scheme.Recognizes(gvk) {
		t.Errorf("the workshop cluster's scheme lacks %v", gvk)
	}
	if apiserver.Scheme == scheme.Scheme {
		t.Error("the workshop cluster's scheme is client-go's global one")
	}
}
