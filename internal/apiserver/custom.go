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
	// Prepare runs before every create and update of an object of the
	// kind is stored (a delete goes through Delete, if set), with the
	// store locked: typ is the event the change will
	// send, obj the object as it will be stored. It does all that may
	// fail: an error refuses the change, which is then neither stored
	// nor sent to any watch. It returns what runs once the change is
	// stored and its event sent (nil: nothing), given the stored object:
	// what kube-apiserver's controllers would do a moment later, done at
	// once. That part cannot fail the request, which has succeeded by
	// then; as a controller's, its errors are its own to report.
	Prepare func(tx Tx, typ watch.EventType, obj runtime.Object) (committed func(tx Tx, obj runtime.Object), err error)
	// Delete replaces the generic DELETE; it returns what the DELETE
	// answers. In a dry run ([Tx.DryRun]) it answers the same and
	// changes nothing.
	Delete func(tx Tx, obj runtime.Object) (runtime.Object, error)
	// ScaleReplicas: the scale subresource reads and writes these
	// fields of an unstructured object: the CRD's specReplicasPath,
	// statusReplicasPath and labelSelectorPath (".spec.replicas").
	ScaleReplicas *ScalePaths
	// Verbs, if set, are the verbs discovery lists, in its order.
	Verbs metav1.Verbs
	// Storage, if set, is where the kind's objects are kept: resources
	// whose Storage is the same (==) value share one set of objects, one
	// history and one watch fan-out, as kube-apiserver keeps one storage
	// for every served version of a CustomResourceDefinition.
	// ToStorage converts an object of this resource to the stored form
	// (a new object); FromStorage converts a stored object to this
	// resource's version (a new object). Either may fail (a CRD's
	// conversion webhook that is down or answers wrong) with the API
	// error the request is answered: a write is then refused, a read
	// answered with it, and a watch ends with it as an ERROR event.
	// They run with the store locked, so they must not call the server.
	Storage     any
	ToStorage   func(obj runtime.Object) (runtime.Object, error)
	FromStorage func(obj runtime.Object) (runtime.Object, error)
	// SubresourceNotFound: a subresource the kind does not serve is
	// answered 404 NotFound naming the object, as apiextensions-apiserver's
	// crdHandler answers for a custom resource (transcript 103), not
	// with the 404 of a path no route serves.
	SubresourceNotFound bool
	// StorageVersion is the version the objects are stored in, which
	// discovery's storageVersionHash names; "": this resource's.
	StorageVersion string
}

// storageGVK is the group, version and kind res's objects are stored as.
func (r *Resource) storageGVK() schema.GroupVersionKind {
	gvk := r.GroupVersionKind()
	if r.Hooks != nil && r.Hooks.StorageVersion != "" {
		gvk.Version = r.Hooks.StorageVersion
	}
	return gvk
}

// ScalePaths are a custom resource's scale subresource fields, as JSON
// paths (".spec.replicas"). SpecByVersion, if set, is the spec replicas
// path of every version of the kind, by apiVersion ("" for a version
// without the scale subresource): a scale write keeps the managedFields
// entries of each (apiextensions-apiserver's replicasPathInCustomResource,
// pkg/apiserver/customresource_handler.go); unset, only this version's.
type ScalePaths struct {
	Spec, Status, LabelSelector string
	SpecByVersion               map[string]string
}

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

// ConvertCustom returns obj, an object of a kind whose versions share
// one storage ([Hooks.Storage]: a CustomResourceDefinition's), in gv's
// version: converted to the storage version and from it
// ([Hooks.ToStorage], [Hooks.FromStorage]), as kube-apiserver converts a
// custom resource between two versions, through the CRD's converter
// (which may call its conversion webhook). An object already of gv, or
// of a kind that is not converted, is returned as it is. It locks the
// store only to find the two resources, so the caller must not hold it:
// admission (which runs with the store unlocked) converts with it what
// a webhook of another version is sent (matchPolicy Equivalent).
func (s *Server) ConvertCustom(obj runtime.Object, gv schema.GroupVersion) (runtime.Object, error) {
	gvk := obj.GetObjectKind().GroupVersionKind()
	if gvk.GroupVersion() == gv {
		return obj, nil
	}
	var from, to *Resource
	s.store.mu.Lock()
	for _, r := range s.store.reg.all() {
		switch r.GroupVersionKind() {
		case gvk:
			from = r
		case gv.WithKind(gvk.Kind):
			to = r
		}
	}
	s.store.mu.Unlock()
	if from == nil || to == nil || from.Hooks == nil || from.Hooks.ToStorage == nil || storageOf(from) != storageOf(to) {
		return obj, nil
	}
	stored, err := from.Hooks.ToStorage(obj)
	if err != nil {
		return nil, err
	}
	return view(to, stored)
}

// Tx is the store as a hook sees it: locked, for the length of the hook.
type Tx struct{ s *store }

// Now is the server's clock.
func (tx Tx) Now() metav1.Time { return tx.s.now() }

// DryRun reports whether the write the hook is part of is a dry run
// (?dryRun=All): the hook answers as if it made the change and changes
// nothing (no Serve, Unserve, Update; Commit already stores nothing).
func (tx Tx) DryRun() bool { return tx.s.dry }

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
	if from, to := storageOf(old), storageOf(r); from != to {
		if objs, ok := tx.s.objects[from]; ok {
			tx.s.objects[to] = objs
			delete(tx.s.objects, from)
		}
		delete(tx.s.sorted, from)
	}
	tx.endWatches(old)
	return nil
}

// Unserve deletes every object of r (each a DELETED event), ends its
// watches and stops serving it: a request for it is then a 404. The
// objects stay when another served resource shares r's [Hooks.Storage]
// (a version of a CRD no longer served, others still are).
func (tx Tx) Unserve(r *Resource) error {
	at := storageOf(r)
	shared := false
	for _, other := range tx.s.reg.all() {
		if other != r && storageOf(other) == at {
			shared = true
		}
	}
	if !shared {
		for _, key := range sortedKeys(tx.s.objects[at]) {
			m := metaOf(tx.s.objects[at][key])
			if _, err := tx.s.deleteLocked(r, m.GetNamespace(), m.GetName()); err != nil {
				return err
			}
		}
	}
	tx.endWatches(r)
	tx.s.reg.remove(r)
	if !shared {
		delete(tx.s.objects, at)
		delete(tx.s.sorted, at)
	}
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
// MODIFIED (a delete marking it) or DELETED event. It fails only if obj
// cannot be converted to its storage version ([Hooks.ToStorage]).
func (tx Tx) Commit(res *Resource, typ watch.EventType, obj runtime.Object) error {
	m := metaOf(obj)
	prev := tx.s.objects[storageOf(res)][objectKey(m.GetNamespace(), m.GetName())]
	return tx.s.commit(res, typ, obj, prev)
}

// prepare runs res's Prepare hook before a change of obj is stored, and
// returns what to run once it is: with the stored object, after its
// event is sent. An error refuses the change. In a dry run the hook
// checks, and nothing runs after. Callers hold s.mu.
func (s *store) prepare(res *Resource, typ watch.EventType, obj runtime.Object) (committed func(), err error) {
	if res.Hooks == nil || res.Hooks.Prepare == nil {
		return func() {}, nil
	}
	then, err := res.Hooks.Prepare(Tx{s}, typ, obj.DeepCopyObject())
	if err != nil || then == nil || s.dry {
		return func() {}, err
	}
	return func() { then(Tx{s}, obj.DeepCopyObject()) }, nil
}

// specOf is what a change of bumps metadata.generation: .spec, and for
// a custom resource everything but metadata (and status, when the status
// subresource is enabled), as apiextensions-apiserver's strategy
// (customResourceStrategy.PrepareForUpdate) compares it.
func specOf(res *Resource, obj runtime.Object) any {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		if res.SpecField != "" {
			return fieldOf(obj, res.SpecField)
		}
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
