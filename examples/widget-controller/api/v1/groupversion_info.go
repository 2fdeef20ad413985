// Package v1 holds the Widget kind of group example.com, version v1: the
// API of the example controller (see ../../README.md).
package v1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

var (
	// GroupVersion is the group and version of the Widget kind.
	GroupVersion = schema.GroupVersion{Group: "example.com", Version: "v1"}

	// SchemeBuilder adds the Widget kinds to a scheme.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}

	// AddToScheme adds the Widget kinds to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)
