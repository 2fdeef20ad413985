package apiserver

import (
	"maps"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apimachinery/pkg/watch"
)

// Kinds defined at run time. The built-in kinds are Go types from
// client-go's scheme; a CustomResourceDefinition's kind is known only once
// the CRD is created, and its objects are *unstructured.Unstructured, as
// in kube-apiserver's apiextensions-apiserver. What serves CRDs lives in
// internal/apiserver/crd, which the chapters do not import (it brings
// kube-apiserver's structural-schema code); it plugs in through
// [Options.Extend], [Server.Serve] and the [Hooks] of the resources it
// adds. This file is all the server knows of it.

// Hooks are what a kind defined outside this package does beyond the
// fields of strategy: a custom resource's pruning, defaulting and schema
// validation, and the CRD kind's own life cycle. Every hook is optional;
// the built-in kinds have none.
type Hooks struct {
	// Decoded runs on every object of the kind read from a request (a
	// create's or update's body, a patched object) before anything
	// else, as kube-apiserver's decoder for custom resources prunes and
	// defaults. It returns the paths of the fields it pruned, which are
	// reported as unknown fields as fieldValidation asks.
	Decoded func(obj runtime.Object) (unknown []string, err error)
	// Validate is the kind's strategy Validate (old nil) or
	// ValidateUpdate; subresource is "" or "status". Errors are answered
	// 422 Invalid with one cause per field.
	Validate func(obj, old runtime.Object, subresource string) field.ErrorList
	// NewFieldManager makes the kind's FieldManager for writes through
	// subresource ("" or "status").
	NewFieldManager func(subresource string) (*managedfields.FieldManager, error)
	// Committed runs after every change of an object of the kind, with
	// the store locked: what kube-apiserver's controllers would do a
	// moment later, done at once.
	Committed func(tx Tx, typ watch.EventType, obj runtime.Object) error
	// Delete replaces the generic DELETE; it returns what the DELETE
	// answers.
	Delete func(tx Tx, obj runtime.Object) (runtime.Object, error)
	// ScaleReplicas: the scale subresource reads and writes these
	// fields of an unstructured object: the CRD's specReplicasPath,
	// statusReplicasPath and labelSelectorPath (".spec.replicas").
	ScaleReplicas *ScalePaths
	// Verbs, if set, are the verbs discovery lists, in its order.
	Verbs metav1.Verbs
}

// ScalePaths are a custom resource's scale subresource fields, as JSON
// paths (".spec.replicas").
type ScalePaths struct{ Spec, Status, LabelSelector string }

// NewTable makes a Table printer for a kind defined at run time: its
// column definitions, and the cells of one row (age formats a time
// relative to the server's clock).
func NewTable(columns []metav1.TableColumnDefinition, cells func(obj runtime.Object, age func(metav1.Time) string) []any) *tablePrinter {
	return &tablePrinter{columns: columns, cells: cells}
}

// NameColumn is the Name column every Table starts with.
func NameColumn() metav1.TableColumnDefinition { return nameColumn }

// Serve serves r from now on; it fails if its group-version-resource is
// already served.
func (s *Server) Serve(r *Resource) error { return s.store.reg.add(r) }

// Tx is the store as a hook sees it: locked, for the length of the hook.
type Tx struct{ s *store }

// Now is the server's clock.
func (tx Tx) Now() metav1.Time { return tx.s.now() }

// Lookup returns the resource served at gvr, or nil.
func (tx Tx) Lookup(gvr schema.GroupVersionResource) *Resource { return tx.s.reg.lookup(gvr) }

// Serve serves r from now on. If old is served, r takes its place and its
// objects, and the watches of old end (as kube-apiserver ends the watches
// of a custom resource whose definition changed).
func (tx Tx) Serve(r *Resource, old *Resource) error {
	if old == nil {
		return tx.s.reg.add(r)
	}
	tx.s.reg.replace(old, r)
	if objs, ok := tx.s.objects[old]; ok {
		tx.s.objects[r] = objs
		delete(tx.s.objects, old)
	}
	delete(tx.s.sorted, old)
	tx.endWatches(old)
	return nil
}

// Unserve deletes every object of r (each a DELETED event), ends its
// watches and stops serving it: a request for it is then a 404.
func (tx Tx) Unserve(r *Resource) error {
	for _, key := range sortedKeys(tx.s.objects[r]) {
		m := metaOf(tx.s.objects[r][key])
		if _, err := tx.s.deleteLocked(r, m.GetNamespace(), m.GetName()); err != nil {
			return err
		}
	}
	tx.endWatches(r)
	tx.s.reg.remove(r)
	delete(tx.s.objects, r)
	delete(tx.s.sorted, r)
	return nil
}

func (tx Tx) endWatches(r *Resource) {
	for w := range tx.s.watchers {
		if w.res == r {
			delete(tx.s.watchers, w)
			w.stop()
		}
	}
}

// Update writes obj, an object of res, as manager, through subresource
// ("" or "status").
func (tx Tx) Update(res *Resource, obj runtime.Object, subresource, manager string) (runtime.Object, error) {
	m := metaOf(obj)
	return tx.s.updateLocked(res, m.GetNamespace(), m.GetName(), subresource, manager, obj, false)
}

// Commit records a change of obj as it is, with no strategy: a
// MODIFIED (a delete marking it) or DELETED event.
func (tx Tx) Commit(res *Resource, typ watch.EventType, obj runtime.Object) {
	m := metaOf(obj)
	prev := tx.s.objects[res][objectKey(m.GetNamespace(), m.GetName())]
	tx.s.commit(res, typ, obj, prev)
}

// committed runs res's Committed hook. Callers hold s.mu.
func (s *store) committed(res *Resource, typ watch.EventType, obj runtime.Object) error {
	if res.Hooks == nil || res.Hooks.Committed == nil || s.dry {
		return nil
	}
	return res.Hooks.Committed(Tx{s}, typ, obj.DeepCopyObject())
}

// specOf is what a change of bumps metadata.generation: .spec, and for
// a custom resource everything but metadata (and status, when the status
// subresource is enabled), as apiextensions-apiserver's strategy
// (customResourceStrategy.PrepareForUpdate) compares it.
func specOf(res *Resource, obj runtime.Object) any {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return fieldOf(obj, "Spec")
	}
	out := maps.Clone(u.Object)
	delete(out, "metadata")
	delete(out, "apiVersion")
	delete(out, "kind")
	if res.StatusSubresource {
		delete(out, "status")
	}
	return out
}

// validateHook runs res's Validate hook.
func validateHook(res *Resource, obj, old runtime.Object, subresource string) error {
	if res.Hooks == nil || res.Hooks.Validate == nil {
		return nil
	}
	if errs := res.Hooks.Validate(obj, old, subresource); len(errs) > 0 {
		return invalid(res, metaOf(obj).GetName(), errs)
	}
	return nil
}

func invalid(res *Resource, name string, errs field.ErrorList) error {
	return apierrors.NewInvalid(res.GroupVersionKind().GroupKind(), name, errs)
}

// jsonPath splits ".spec.replicas" into its fields.
func jsonPath(p string) []string { return strings.Split(strings.TrimPrefix(p, "."), ".") }
