// Package v2 holds the Widget kind of group example.com, version v2: the
// same Widget as v1, its data written as a list of entries instead of a
// map. The CRD stores v1; a v2 Widget is converted by the conversion
// webhook (widget_conversion.go, see ../../README.md).
package v2

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

var (
	// GroupVersion is the group and version of the Widget kind.
	GroupVersion = schema.GroupVersion{Group: "example.com", Version: "v2"}

	// SchemeBuilder adds the Widget kinds to a scheme.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}

	// AddToScheme adds the Widget kinds to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)
