package apiserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalscheme "k8s.io/apimachinery/pkg/apis/meta/internalversion/scheme"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"
)

// Server-side apply: PATCH with Content-Type application/apply-patch+yaml
// and ?fieldManager= (kubectl apply --server-side). The body is the
// writer's intent, a partial object; the server merges it into the live
// object (creating it if there is none) and records that the manager
// owns exactly the fields it applied. A field another manager owns and
// the intent changes is a conflict, a 409 naming the managers, unless
// force=true takes the field over. All of that is apimachinery's
// FieldManager.Apply, the one kube-apiserver runs
// (apiserver/pkg/endpoints/handlers/patch.go, applyPatcher); this file
// only reads the request and hands the result to the store.

// parsePatchOptions reads and validates a PATCH's parameters as
// kube-apiserver does: apimachinery's parameter codec and
// ValidatePatchOptions (fieldManager required for apply; force only for
// apply), a 422 Invalid PatchOptions otherwise.
func parsePatchOptions(q url.Values, patchType types.PatchType) (*metav1.PatchOptions, error) {
	opts := &metav1.PatchOptions{}
	if err := metainternalscheme.ParameterCodec.DecodeParameters(q, metav1.SchemeGroupVersion, opts); err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	if errs := metav1validation.ValidatePatchOptions(opts, patchType); len(errs) > 0 {
		return nil, apierrors.NewInvalid(schema.GroupKind{Group: metav1.GroupName, Kind: "PatchOptions"}, "", errs)
	}
	return opts, nil
}

// apply serves a server-side apply. created reports whether it made the
// object (answered 201, as kube-apiserver does).
func (s *Server) apply(r *http.Request, req request, opts *metav1.PatchOptions) (obj runtime.Object, created bool, err error) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 3<<20))
	if err != nil {
		return nil, false, apierrors.NewBadRequest(err.Error())
	}
	intent, err := applyIntent(body)
	if err != nil {
		return nil, false, err
	}
	force := opts.Force != nil && *opts.Force
	return s.store.apply(r.Context(), req.res, req.namespace, req.name, req.subresource, opts.FieldManager, force, intent, len(opts.DryRun) > 0)
}

// applyIntent decodes an apply's body, YAML or JSON.
func applyIntent(body []byte) (*unstructured.Unstructured, error) {
	intent := &unstructured.Unstructured{Object: map[string]any{}}
	if err := yaml.Unmarshal(body, &intent.Object); err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("error decoding YAML: %v", err))
	}
	if intent.Object == nil { // an empty body
		intent.Object = map[string]any{}
	}
	return intent, nil
}

// applyError is how kube-apiserver answers a FieldManager.Apply error:
// its Status (400 for an intent of another kind or version, 409 Conflict
// naming the managers) or, for an intent with a field the schema lacks,
// the plain error as a 500 with no reason (kube-apiserver v1.36,
// kubernetes/kubernetes#139253, still open), word for word.
func applyError(err error) error {
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		return err
	}
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Code: http.StatusInternalServerError, Message: err.Error(),
	}}
}

// apply merges intent into the object (an empty one if there is none) with
// the FieldManager of the resource or of its status, then stores the
// result: an update, or a create. Errors are the FieldManager's own: 400 for an intent of another
// kind or version, 409 Conflict naming the managers.
func (s *store) apply(ctx context.Context, res *Resource, namespace, name, subresource, manager string, force bool, intent *unstructured.Unstructured, dry bool) (runtime.Object, bool, error) {
	defer s.lock(dry)()
	s.admitting(ctx) // admission: a client's write
	if err := s.stillServed(res); err != nil {
		return nil, false, err
	}
	old, exists := s.objects[storageOf(res)][objectKey(namespace, name)]
	old, err := view(res, old)
	if err != nil {
		return nil, false, err
	}
	if !exists && subresource != "" {
		return nil, false, apierrors.NewNotFound(res.GroupResource(), name)
	}
	live := res.New()
	if exists {
		live = old.DeepCopyObject()
	}
	live.GetObjectKind().SetGroupVersionKind(res.GroupVersionKind())
	out, err := s.fieldManager(res, subresource).Apply(live, intent, manager, force)
	if err != nil {
		return nil, false, applyError(err)
	}
	if out, err = decodedCustom(res, out); err != nil {
		return nil, false, err
	}
	clearTypeMeta(out)
	m := metaOf(out)
	if m.GetName() != name {
		return nil, false, apierrors.NewBadRequest("the name of the object (" + m.GetName() + ") does not match the name on the URL (" + name + ")")
	}
	if res.Namespaced && m.GetNamespace() != "" && m.GetNamespace() != namespace {
		return nil, false, apierrors.NewBadRequest("the namespace of the provided object does not match the namespace sent on the request")
	}
	// Entries the apply made or changed get the server's clock.
	var before []metav1.ManagedFieldsEntry
	if exists {
		before = metaOf(old).GetManagedFields()
	}
	m.SetManagedFields(restamp(before, m.GetManagedFields(), s.now()))
	if !exists {
		obj, err := s.createLocked(res, namespace, manager, out, true)
		return obj, true, err
	}
	obj, err := s.updateLocked(res, namespace, name, subresource, manager, out, true)
	return obj, false, err
}

// decodedCustom makes a custom resource FieldManager.Apply merged what a
// create's or update's body is once decoded: its numbers JSON's (int64
// where integral: the apply's YAML intent leaves float64, which CEL rules
// and the scale subresource refuse), pruned and defaulted by
// [Hooks.Decoded], as kube-apiserver's answer is decoded from the bytes
// it stored. Other objects are returned as they are.
func decodedCustom(res *Resource, obj runtime.Object) (runtime.Object, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return obj, nil
	}
	b, err := runtime.Encode(unstructured.UnstructuredJSONScheme, u)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	out := &unstructured.Unstructured{}
	if err := runtime.DecodeInto(unstructured.UnstructuredJSONScheme, b, out); err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	if res.Hooks != nil && res.Hooks.Decoded != nil {
		// Fields the schema lacks are pruned; their paths are not
		// reported (no fieldValidation warning for an apply here).
		if _, err := res.Hooks.Decoded(out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// restamp gives the server's clock to the managedFields entries that are
// new or whose time the FieldManager changed (it uses the wall clock), so
// that the workshop cluster's clock, fixed or not, is the one in every
// entry, and an apply that changes nothing changes no time.
func restamp(before, after []metav1.ManagedFieldsEntry, now metav1.Time) []metav1.ManagedFieldsEntry {
	for i, e := range after {
		changed := true
		for _, b := range before {
			if b.Manager == e.Manager && b.Operation == e.Operation && b.Subresource == e.Subresource &&
				b.APIVersion == e.APIVersion && b.Time.Equal(e.Time) {
				changed = false
			}
		}
		if changed {
			after[i].Time = &now
		}
	}
	return after
}

// resourceDefaulter fills a resource's defaults in what an apply makes,
// as kube-apiserver's scheme defaulter does inside FieldManager.Apply:
// the applier does not own them.
type resourceDefaulter struct{ res *Resource }

func (d resourceDefaulter) Default(obj runtime.Object) {
	if d.res.Default != nil {
		d.res.Default(obj, metav1.Time{})
	}
}
