package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Written by hand, as in kubernetes/sample-controller: what the
// generated code expects of an API package. The clientset's scheme calls
// AddToScheme; the lister names Resource("memos") in its NotFound errors.

// SchemeGroupVersion is the group and version of the package's types.
var SchemeGroupVersion = schema.GroupVersion{Group: "course.example.com", Version: "v1alpha1"}

// Kind takes an unqualified kind and returns it qualified by the group.
func Kind(kind string) schema.GroupKind {
	return SchemeGroupVersion.WithKind(kind).GroupKind()
}

// Resource takes an unqualified resource and returns it qualified by the group.
func Resource(resource string) schema.GroupResource {
	return SchemeGroupVersion.WithResource(resource).GroupResource()
}

var (
	// SchemeBuilder registers the package's types.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)
	// AddToScheme adds the package's types to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func addKnownTypes(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(SchemeGroupVersion, &Memo{}, &MemoList{})
	metav1.AddToGroupVersion(scheme, SchemeGroupVersion)
	return nil
}
