package apiserver

import (
	"fmt"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1beta1 "k8s.io/apimachinery/pkg/apis/meta/v1beta1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
)

// Metadata-only answers. A client that needs only names, labels,
// annotations and owners (client-go's metadata client and metadata
// informers) asks for the objects "as" PartialObjectMetadata:
//
//	Accept: application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1, …
//
// and kube-apiserver answers with the whole metadata of each object and
// nothing else (recorded transcripts 43-51). The conversion is
// apimachinery's meta.AsPartialObjectMetadata, the one kube-apiserver uses
// (apiserver/pkg/endpoints/handlers/response.go).

// metaCodecs encodes meta.k8s.io's PartialObjectMetadata,
// PartialObjectMetadataList and Table (v1 and v1beta1), and Status for
// errors.
var metaCodecs = func() serializer.CodecFactory {
	s := runtime.NewScheme()
	utilruntime.Must(metav1.AddMetaToScheme(s))
	utilruntime.Must(metav1beta1.AddMetaToScheme(s))
	metav1.AddToGroupVersion(s, schema.GroupVersion{Version: "v1"})
	return serializer.NewCodecFactory(s)
}()

// The shapes an answer can be asked "as", besides the resource's own.
const (
	asPartial     = "PartialObjectMetadata"
	asPartialList = "PartialObjectMetadataList"
	asTable       = "Table" // see table.go
)

// transformation is a requested transformation of the answer:
// as=Kind;g=meta.k8s.io;v=….
type transformation struct {
	gv   schema.GroupVersion
	kind string // asPartial, asPartialList or asTable

	// For a Table: its options, and the resource whose columns to print.
	table *tableOptions
	res   *Resource
}

// parseAs reads an Accept range's as=, g= and v= parameters. ok is false
// for a transformation the workshop cluster does not serve; the range is
// then skipped, as kube-apiserver skips it.
func parseAs(params map[string]string) (as *transformation, ok bool) {
	gv := schema.GroupVersion{Group: params["g"], Version: params["v"]}
	if gv != metav1.SchemeGroupVersion && gv != metav1beta1.SchemeGroupVersion {
		return nil, false
	}
	switch params["as"] {
	case asPartial, asPartialList, asTable:
		return &transformation{gv: gv, kind: params["as"]}, true
	}
	return nil, false
}

// transform turns obj (an object of the resource, or a list of them) into
// what was asked for, with kube-apiserver's 406 answers for a list asked
// for as an object and the other way round. Status errors pass unchanged.
func (as *transformation) transform(obj runtime.Object) (runtime.Object, error) {
	if _, isStatus := obj.(*metav1.Status); isStatus {
		return obj, nil
	}
	item := as.gv.WithKind(asPartial)
	switch as.kind {
	case asTable:
		return as.toTable(obj)
	case asPartial:
		if meta.IsListType(obj) {
			return nil, notAcceptable(fmt.Sprintf("you requested PartialObjectMetadata, but the requested object is a list (%T)", obj))
		}
		m, err := meta.Accessor(obj)
		if err != nil {
			return nil, err
		}
		partial := meta.AsPartialObjectMetadata(m)
		partial.GetObjectKind().SetGroupVersionKind(item)
		return partial, nil
	}
	li, ok := obj.(metav1.ListInterface)
	if !ok {
		return nil, notAcceptable(fmt.Sprintf("you requested PartialObjectMetadataList, but the requested object is not a list (%T)", obj))
	}
	list := &metav1.PartialObjectMetadataList{}
	err := meta.EachListItem(obj, func(o runtime.Object) error {
		m, err := meta.Accessor(o)
		if err != nil {
			return err
		}
		partial := meta.AsPartialObjectMetadata(m)
		partial.GetObjectKind().SetGroupVersionKind(item)
		list.Items = append(list.Items, *partial)
		return nil
	})
	if err != nil {
		return nil, err
	}
	list.ResourceVersion = li.GetResourceVersion()
	list.Continue = li.GetContinue()
	list.GetObjectKind().SetGroupVersionKind(as.gv.WithKind(asPartialList))
	return list, nil
}

// notAcceptable is kube-apiserver's 406 for a transformation that does
// not fit the answer.
func notAcceptable(msg string) error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Code: http.StatusNotAcceptable,
		Reason: metav1.StatusReason("NotAcceptable"), Message: msg,
	}}
}
