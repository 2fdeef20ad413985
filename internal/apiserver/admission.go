package apiserver

import (
	"context"
	"errors"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
)

// Admission: what kube-apiserver does to a write between its handler and
// storage, in its order (k8s.io/apiserver's
// pkg/registry/generic/registry/store.go Create, Update and Delete, and
// the handlers in pkg/endpoints/handlers):
//
//	the kind's defaults (the decoder's) and the managedFields
//	mutating admission (built-in plugins, then policies and webhooks,
//	reinvoked as configured)
//	the kind's create or update strategy, then its validation
//	validating admission (built-in plugins, then policies and webhooks)
//	storage
//
// (store_admission.go says it step by step, with the source lines.)
//
// The plugins that do it are kube-apiserver's own, in package
// internal/apiserver/admission, which plugs in through
// [Options.Admission] as package crd does through Options.Extend: a
// server started without it (every chapter) links none of k8s.io/apiserver
// and admits every write. This file is all the store knows of it: the
// [Admission] interface, the attributes of a write, and the points where
// the store calls it (createLocked, updateLocked and deleteLockedWith,
// each marked "admission:", and deleteCollection's items, each a
// DELETE) and tells it of a change (commit).
//
// A webhook may call the API server back (a validating webhook that reads
// other objects), so admission runs with the store unlocked. When the
// store is locked again, the write goes on only if the object it read is
// still the one stored; otherwise it is answered 404 if the object is
// gone, 409 Conflict if it changed (a create: 409 AlreadyExists, if one
// was made meanwhile), where kube-apiserver
// would retry an update without a resourceVersion precondition.
//
// Only a write a client sent is admitted: what the store does on its own
// inside a write (a namespace's default ServiceAccount, a namespace's
// contents deleted with it, the garbage collector's updates) is not, as
// kube-apiserver's controllers' writes would be.

// Admission runs a write's admission (Options.Admission).
type Admission interface {
	// Observe is told of every change the store commits, with the
	// store locked (tx): what admission watches (webhook
	// configurations, policies, namespaces) it keeps, as
	// kube-apiserver's admission plugins keep them with informers, but
	// at once, so that a configuration written is in force for the next
	// request. It must not call the store back (tx is all it may use)
	// nor wait on anything that does; the first configuration makes the
	// plugins here, once (tens of milliseconds).
	Observe(tx Tx, typ watch.EventType, res *Resource, obj runtime.Object)
	// Active reports whether anything can act on a write: false until
	// a first configuration is written, and the store then skips
	// admission at no cost.
	Active() bool
	// Admit is mutating admission: it may change a.Object, and returns
	// the warnings to send the client.
	Admit(ctx context.Context, a *AdmissionAttributes) (warnings []string, err error)
	// Validate is validating admission.
	Validate(ctx context.Context, a *AdmissionAttributes) (warnings []string, err error)
	// Close ends what admission runs; the server is closing.
	Close()
}

// AdmissionAttributes are what admission is told of one write, as
// k8s.io/apiserver's admission.Attributes.
type AdmissionAttributes struct {
	Operation   string // "CREATE", "UPDATE" or "DELETE"
	Resource    *Resource
	Namespace   string
	Name        string // "" for a create with generateName, before the name is made
	Subresource string
	// Object is the object being written (nil for DELETE), OldObject
	// the one stored (nil for CREATE): typed, or unstructured for a
	// custom resource, with their apiVersion and kind set.
	Object, OldObject runtime.Object
	// Options: *metav1.CreateOptions, UpdateOptions or DeleteOptions.
	Options runtime.Object
	DryRun  bool
	// Kind is the kind of Object and OldObject when it is not the
	// resource's: a subresource's (SubresourceKind); zero: the
	// resource's.
	Kind schema.GroupVersionKind
}

// ObjectKind is the kind of a's objects: a.Kind, or the resource's.
func (a *AdmissionAttributes) ObjectKind() schema.GroupVersionKind {
	if !a.Kind.Empty() {
		return a.Kind
	}
	return a.Resource.GroupVersionKind()
}

// SubresourceKind is the kind a write through subresource of resource
// sends and admission sees, as kube-apiserver's equivalent resource
// mapper names it: autoscaling/v1 Scale for scale, v1 Binding and
// policy/v1 Eviction for a pod's binding and eviction; ok false for the
// others (status, approval), whose kind is the resource's.
func SubresourceKind(resource schema.GroupVersionResource, subresource string) (gvk schema.GroupVersionKind, ok bool) {
	switch {
	case subresource == "scale":
		return scaleResource.GroupVersionKind(), true
	case resource.GroupResource() == podsGVR.GroupResource() && subresource == "binding":
		return bindingResource.GroupVersionKind(), true
	case resource.GroupResource() == podsGVR.GroupResource() && subresource == "eviction":
		return evictionResource.GroupVersionKind(), true
	}
	return schema.GroupVersionKind{}, false
}

// admissionRequest is a client's write that admission is to see, handed
// from the store's entry points (create, update, delete) to the
// createLocked, updateLocked or deleteLockedWith they call: taken once,
// so the writes the store makes inside it are not admitted.
type admissionRequest struct {
	ctx      context.Context
	warnings *[]string      // what the answer is to carry as Warning headers
	options  runtime.Object // the request's options as sent; nil: made from the write's
	// collection: the write is one item's delete of a deletecollection,
	// whose attributes are the collection's (deleteCollection).
	collection *collectionRequest
}

// collectionRequest is what a deletecollection's admission is told of
// each item's delete, beside the item: kube-apiserver's DeleteCollection
// handler makes one set of attributes for the request, with no name and
// the request's namespace (k8s.io/apiserver v0.37.2
// pkg/endpoints/handlers/delete.go), which
// rest.AdmissionToValidateObjectDeleteFunc completes with each item.
type collectionRequest struct {
	namespace string
}

// requestKey is the context key of a request's admissionRequest.
type requestKey struct{}

// withAdmission returns ctx carrying the write's options as the client
// sent them (nil: none to tell) and a list that admission's warnings are
// added to, and the list.
func withAdmission(ctx context.Context, options runtime.Object) (context.Context, *[]string) {
	req := &admissionRequest{warnings: new([]string), options: options}
	return context.WithValue(ctx, requestKey{}, req), req.warnings
}

// withCollection returns ctx, made by withAdmission, marking the
// request a deletecollection in namespace ("" for all).
func withCollection(ctx context.Context, namespace string) context.Context {
	if r, ok := ctx.Value(requestKey{}).(*admissionRequest); ok {
		c := *r
		c.collection = &collectionRequest{namespace: namespace}
		return context.WithValue(ctx, requestKey{}, &c)
	}
	return ctx
}

// optionsOr is the request's options, or def.
func (req *admissionRequest) optionsOr(def runtime.Object) runtime.Object {
	if req != nil && req.options != nil {
		def = req.options.DeepCopyObject()
	}
	return writeOptionsOf(def)
}

// admitting marks the write about to be made (under s.mu) as a client's,
// to be admitted. A nil Admission makes it a no-op.
func (s *store) admitting(ctx context.Context) {
	if s.admission == nil || ctx == nil {
		return
	}
	req := &admissionRequest{}
	if r, ok := ctx.Value(requestKey{}).(*admissionRequest); ok {
		req.warnings, req.options, req.collection = r.warnings, r.options, r.collection
	}
	req.ctx = ctx
	s.pending = req
}

// takeAdmission returns the client's write being made, once; nil when
// there is none or nothing to admit it. Callers hold s.mu.
func (s *store) takeAdmission() *admissionRequest {
	req := s.pending
	s.pending = nil
	if req == nil || !s.admission.Active() {
		return nil
	}
	return req
}

// admit runs one phase of admission (Admission.Admit or Validate) for
// req's write, with the store unlocked; stillCurrent, called when the
// store is locked again, reports whether the write can go on. Callers
// hold s.mu.
func (s *store) admit(req *admissionRequest, validate bool, a *AdmissionAttributes, stillCurrent func() error) error {
	if req == nil {
		return nil
	}
	for _, o := range []runtime.Object{a.Object, a.OldObject} {
		if o != nil {
			o.GetObjectKind().SetGroupVersionKind(a.ObjectKind())
		}
	}
	phase := s.admission.Admit
	if validate {
		phase = s.admission.Validate
	}
	dry := s.dry
	s.mu.Unlock()
	warnings, err := phase(req.ctx, a)
	s.mu.Lock()
	s.dry = dry
	if a.Object != nil {
		clearTypeMeta(a.Object)
	}
	if req.warnings != nil {
		*req.warnings = append(*req.warnings, warnings...)
	}
	if err != nil {
		var status apierrors.APIStatus
		if !errors.As(err, &status) {
			err = apierrors.NewInternalError(err)
		}
		return err
	}
	if err := s.stillServed(a.Resource); err != nil {
		return err
	}
	return stillCurrent()
}

// sameStored returns the check that the object stored under key is
// still stored (the one a write read before admission), for admit: 404
// if it is gone (kube-apiserver's storage, trying the write again, finds
// no object), 409 if another write changed it.
func (s *store) sameStored(res *Resource, namespace, name string) func() error {
	key := objectKey(namespace, name)
	before := s.objects[storageOf(res)][key]
	return func() error {
		now, ok := s.objects[storageOf(res)][key]
		if !ok {
			return apierrors.NewNotFound(res.GroupResource(), name)
		}
		if now != before || s.reg.lookup(res.GVR) != res {
			return apierrors.NewConflict(res.GroupResource(), name,
				errors.New("the object has been modified; please apply your changes to the latest version and try again"))
		}
		return nil
	}
}

// Resources returns the resources the server serves now.
func (s *Server) Resources() []*Resource {
	s.store.mu.Lock()
	defer s.store.mu.Unlock()
	return s.store.reg.all()
}

// Objects returns the objects of res that the store holds, as res reads
// them; they are shared, not copies: do not change them. An object that
// cannot be read through res (a custom resource whose conversion
// webhook fails) is left out.
func (tx Tx) Objects(res *Resource) []runtime.Object {
	objs := tx.s.objects[storageOf(res)]
	out := make([]runtime.Object, 0, len(objs))
	for _, key := range sortedKeys(objs) {
		if obj, err := view(res, objs[key]); err == nil {
			out = append(out, obj)
		}
	}
	return out
}

// dryRunOf is a write's options' dryRun.
func dryRunOf(dry bool) []string {
	if dry {
		return []string{"All"}
	}
	return nil
}

// writeOptionsOf sets opts' apiVersion and kind, as an AdmissionReview
// carries them (transcript 110).
func writeOptionsOf(opts runtime.Object) runtime.Object {
	gvks, _, err := Scheme.ObjectKinds(opts)
	if err == nil {
		opts.GetObjectKind().SetGroupVersionKind(metav1.SchemeGroupVersion.WithKind(gvks[0].Kind))
	}
	return opts
}

// admitCreate is mutating admission of a create (req nil: none), of obj
// as createLocked has made it so far: decoded, defaulted, its namespace
// the request's and its managedFields recorded, as kube-apiserver's
// create handler hands it to admission (transcript 111). It returns the
// attributes for validateCreate.
func (s *store) admitCreate(req *admissionRequest, res *Resource, namespace string, obj runtime.Object) (*AdmissionAttributes, error) {
	if req == nil {
		return nil, nil
	}
	a := &AdmissionAttributes{Operation: "CREATE", Resource: res, Namespace: namespace, Name: metaOf(obj).GetName(),
		Object: obj, Options: req.optionsOr(&metav1.CreateOptions{DryRun: dryRunOf(s.dry)}), DryRun: s.dry}
	return a, s.admit(req, false, a, func() error { return nil })
}

// validateCreate is validating admission of a create, obj as it will be
// stored; meanwhile another may have been made under its name.
func (s *store) validateCreate(req *admissionRequest, a *AdmissionAttributes, obj runtime.Object) error {
	if req == nil {
		return nil
	}
	m := metaOf(obj)
	a.Name, a.Object = m.GetName(), obj
	return s.admit(req, true, a, func() error {
		if _, exists := s.objects[storageOf(a.Resource)][objectKey(m.GetNamespace(), m.GetName())]; exists {
			return apierrors.NewAlreadyExists(a.Resource.GroupResource(), m.GetName())
		}
		return nil
	})
}

// admitUpdate is mutating admission of an update of old, the stored
// object, to obj, as sent; the update goes on only if old is still
// stored. It returns the attributes for validateUpdate.
func (s *store) admitUpdate(req *admissionRequest, res *Resource, subresource string, obj, old runtime.Object) (*AdmissionAttributes, error) {
	if req == nil {
		return nil, nil
	}
	m := metaOf(old)
	a := &AdmissionAttributes{Operation: "UPDATE", Resource: res, Namespace: m.GetNamespace(), Name: m.GetName(), Subresource: subresource,
		Object: obj, OldObject: old.DeepCopyObject(), Options: req.optionsOr(&metav1.UpdateOptions{DryRun: dryRunOf(s.dry)}), DryRun: s.dry}
	return a, s.admit(req, false, a, s.sameStored(res, m.GetNamespace(), m.GetName()))
}

// validateUpdate is validating admission of an update, next as it will
// be stored.
func (s *store) validateUpdate(req *admissionRequest, a *AdmissionAttributes, next runtime.Object) error {
	if req == nil {
		return nil
	}
	a.Object = next
	return s.admit(req, true, a, s.sameStored(a.Resource, a.Namespace, a.Name))
}

// admitDelete is a DELETE's admission, mutating then validating, with
// the object stored (old), as kube-apiserver's delete handler and
// Store.Delete run them.
func (s *store) admitDelete(req *admissionRequest, res *Resource, old runtime.Object, opts *metav1.DeleteOptions) error {
	if req == nil {
		return nil
	}
	m := metaOf(old)
	a := &AdmissionAttributes{Operation: "DELETE", Resource: res, Namespace: m.GetNamespace(), Name: m.GetName(),
		OldObject: old.DeepCopyObject(), Options: req.optionsOr(opts), DryRun: s.dry}
	if req.collection != nil {
		a.Namespace, a.Name = req.collection.namespace, ""
	}
	for _, validate := range []bool{false, true} {
		if err := s.admit(req, validate, a, s.sameStored(res, m.GetNamespace(), m.GetName())); err != nil {
			return err
		}
	}
	return nil
}

// admitSubresource runs one phase of admission of a write through a
// subresource (a Scale's update, a Binding's or an Eviction's create):
// op on res's object namespace/name, obj (and old, for an update) of
// the subresource's kind (SubresourceKind). stillCurrent is admit's.
func (s *store) admitSubresource(req *admissionRequest, validate bool, op string, res *Resource, subresource, namespace, name string, obj, old runtime.Object, stillCurrent func() error) error {
	if req == nil {
		return nil
	}
	kind, _ := SubresourceKind(res.GVR, subresource)
	var opts runtime.Object = &metav1.CreateOptions{DryRun: dryRunOf(s.dry)}
	if op == "UPDATE" {
		opts = &metav1.UpdateOptions{DryRun: dryRunOf(s.dry)}
	}
	a := &AdmissionAttributes{Operation: op, Resource: res, Kind: kind, Subresource: subresource, Namespace: namespace, Name: name,
		Object: obj, OldObject: old, Options: req.optionsOr(opts), DryRun: s.dry}
	if stillCurrent == nil {
		stillCurrent = func() error { return nil }
	}
	return s.admit(req, validate, a, stillCurrent)
}
