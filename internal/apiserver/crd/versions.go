package crd

import (
	"fmt"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/conversion"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/util/webhook"
	"k8s.io/client-go/util/jsonpath"
)

// A CRD's versions share one storage, as in kube-apiserver: objects are
// kept in the storage version, and each served version reads and
// writes them through the CRD's converter (apiextensions-apiserver's
// pkg/apiserver/conversion: for conversion strategy None its
// nopConverter, which rewrites apiVersion; for Webhook its
// webhookConverter, which POSTs a ConversionReview to the CRD's
// conversion webhook). What crdHandler's codecs add around the
// converter is done here as they do it: a stored object is defaulted
// with the storage version's schema as it is read
// (unstructuredDefaulter), and an object converted to a version is
// pruned with that version's schema (schemaCoercingConverter).
//
// A conversion webhook is called with the store locked (the store
// converts inside its writes and reads): while it answers, the cluster
// answers no one else. A webhook must not call the cluster back while it
// converts (controller-runtime's does not), and one that does not answer
// holds the cluster until the webhook client's timeout, 30 s
// (k8s.io/apiserver pkg/util/webhook/authentication.go,
// setGlobalDefaults, which also sends it as ?timeout=30s).

// storageKey names a CRD's storage (apiserver.Hooks.Storage): its name.
type storageKey string

// storage is what a CRD's served versions share.
type storage struct {
	key       storageKey
	group     string
	version   string                  // the storage version
	schemas   map[string]*crSchema    // by version
	converter runtime.ObjectConvertor // crConverter: conversion and field labels
}

// newStorage builds every version's schema and the CRD's converter.
func newStorage(crd *apiextensionsv1.CustomResourceDefinition) (*storage, error) {
	st := &storage{key: storageKey(crd.Name), group: crd.Spec.Group, schemas: map[string]*crSchema{}}
	for _, v := range crd.Spec.Versions {
		if v.Storage {
			st.version = v.Name
		}
		gvk := schema.GroupVersionKind{Group: crd.Spec.Group, Version: v.Name, Kind: crd.Spec.Names.Kind}
		s, err := newSchema(gvk, v)
		if err != nil {
			return nil, err
		}
		st.schemas[v.Name] = s
	}
	// kube-apiserver's default service resolver (as
	// apiextensions-apiserver's NewCustomResourceDefinitionHandler is
	// given): it resolves a clientConfig.service to
	// https://NAME.NAMESPACE.svc:PORT, which the workshop cluster, like
	// envtest, cannot reach (a test's webhook names its url). No
	// wrapper of the webhook's client: kube-apiserver's adds its egress
	// selector and tracing.
	factory, err := conversion.NewCRConverterFactory(webhook.NewDefaultServiceResolver(), nil)
	if err != nil {
		return nil, err
	}
	if crd.Spec.Conversion == nil { // not defaulted yet: None is the default
		crd = crd.DeepCopy()
		crd.Spec.Conversion = &apiextensionsv1.CustomResourceConversion{Strategy: apiextensionsv1.NoneConverter}
	}
	// The unsafe converter: it converts in place, and convert copies
	// first (the safe one would copy again).
	if _, st.converter, err = factory.NewConverter(crd); err != nil {
		return nil, err
	}
	return st, nil
}

// convert returns a copy of obj, an object of version from, in version
// to: defaulted with from's schema when from is the storage version
// (a read), converted, and pruned with to's schema.
//
// The converter is given the object without its resourceVersion, as
// kube-apiserver's is: its etcd store clears it before it encodes an
// object (PrepareObjectForStorage) and sets it after it decodes one, so
// a conversion webhook never sees one.
//
// A conversion that fails (the webhook cannot be reached, refuses, or
// answers wrong) returns the converter's error as it is, as
// kube-apiserver's storage codec does; the store answers it (a 500
// whose message is the error).
func (st *storage) convert(obj runtime.Object, from, to string) (runtime.Object, error) {
	u := obj.(*unstructured.Unstructured).DeepCopy()
	if s := st.schemas[from]; from == st.version && s != nil && s.structural != nil {
		defaulting.Default(u.Object, s.structural)
	}
	rv := u.GetResourceVersion()
	u.SetResourceVersion("")
	converted, err := st.converter.ConvertToVersion(u, schema.GroupVersion{Group: st.group, Version: to})
	if err != nil {
		return nil, err
	}
	out := converted.(*unstructured.Unstructured)
	if s := st.schemas[to]; s != nil && s.structural != nil {
		pruning.PruneWithOptions(out.Object, s.structural, true, structuralschema.UnknownFieldPathOptions{})
	}
	out.SetResourceVersion(rv)
	return out, nil
}

// selectableFields is a version's field selectors: the CRD's
// selectableFields, read as apiextensions-apiserver's
// customResourceStrategy.GetAttrs reads them (each JSONPath's value,
// printed, or "" when absent), and its converter's ConvertFieldLabel,
// which accepts metadata.name, metadata.namespace and those fields and
// refuses the others: "field label not supported: spec.mode"
// (transcript 104).
func selectableFields(gvk schema.GroupVersionKind, declared []apiextensionsv1.SelectableField, converter runtime.ObjectConvertor) (func(runtime.Object) fields.Set, func(label, value string) (string, string, error)) {
	label := func(label, value string) (string, string, error) {
		return converter.ConvertFieldLabel(gvk, label, value)
	}
	if len(declared) == 0 {
		return nil, label
	}
	type selectable struct {
		name string
		path *jsonpath.JSONPath
	}
	var paths []selectable
	for _, sf := range declared {
		p := jsonpath.New("selectableField")
		p.AllowMissingKeys(true)
		if err := p.Parse("{" + sf.JSONPath + "}"); err != nil {
			continue // the CRD's validation refused it
		}
		paths = append(paths, selectable{strings.TrimPrefix(sf.JSONPath, "."), p})
	}
	return func(obj runtime.Object) fields.Set {
		set := fields.Set{}
		content := obj.(runtime.Unstructured).UnstructuredContent()
		for _, sf := range paths {
			set[sf.name] = ""
			results, err := sf.path.FindResults(content)
			if err == nil && len(results) > 0 && len(results[0]) > 0 {
				if v := results[0][0].Interface(); v != nil {
					set[sf.name] = fmt.Sprint(v)
				}
			}
		}
		return set
	}, label
}
