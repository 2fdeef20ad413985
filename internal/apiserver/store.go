package apiserver

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"sync"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	apipath "k8s.io/apimachinery/pkg/api/validation/path"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	apisharding "k8s.io/apimachinery/pkg/sharding"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"
)

// event is one change in the store's history: the object after the change
// (for DELETED, its final state stamped with the delete's resourceVersion)
// and the object before it (nil for ADDED). Stored objects are never
// mutated, so events can be shared by every watcher.
type event struct {
	Type   watch.EventType
	RV     uint64
	Res    *Resource
	Object runtime.Object
	Prev   runtime.Object
}

// store is the whole state of the workshop cluster: every object, one
// global resourceVersion counter (etcd's revision), the history of changes
// that watches replay from, and the open watches.
type store struct {
	mu sync.Mutex

	reg *registry // the served resources

	rv        uint64 // the last resourceVersion handed out
	compacted uint64 // history holds every event with RV > compacted
	// objects are kept by storageOf(resource), then by key.
	objects map[any]map[string]runtime.Object
	history []event
	// maxHistory bounds the history like kube-apiserver's watch cache
	// bounds its window; older events are compacted away.
	maxHistory int
	watchers   map[*watcher]struct{}
	// sorted holds each resource's current keys in list order, so
	// that the pages of a paged list cost one sort, not one each. A
	// create or delete of the resource drops its entry.
	sorted map[any][]string

	// gc is the garbage collector (Options.GarbageCollection, gc.go),
	// fed every committed event; nil: none, and DELETE adds no
	// finalizer for a propagation policy.
	gc *collector

	// defaultServiceAccounts: a namespace is made with its "default"
	// ServiceAccount (Options.Bootstrap).
	defaultServiceAccounts bool

	// dry: the write being made (under mu) is a dry run (?dryRun=All):
	// it is validated, defaulted and answered as if made, but commit
	// stores nothing, hands out no resourceVersion and sends no event, as
	// kube-apiserver's DryRunnableStorage skips etcd.
	dry bool

	// admission (admission.go, Options.Admission): nil, none; pending
	// is the client's write being made, for it to admit.
	admission Admission
	pending   *admissionRequest

	now      func() metav1.Time
	uids     uint64
	suffixes uint64
	fields   map[fieldManagerKey]*managedfields.FieldManager
}

func newStore(now func() metav1.Time, maxHistory int) *store {
	return &store{
		reg:        newRegistry(),
		objects:    map[any]map[string]runtime.Object{},
		watchers:   map[*watcher]struct{}{},
		sorted:     map[any][]string{},
		now:        now,
		maxHistory: maxHistory,
		fields:     map[fieldManagerKey]*managedfields.FieldManager{},
	}
}

// objectsOf returns the stored objects of the resource at gvr, by key.
// Callers hold s.mu and do not change the map.
func (s *store) objectsOf(gvr schema.GroupVersionResource) map[string]runtime.Object {
	return s.objects[storageOf(s.reg.lookup(gvr))]
}

// storageOf is what res's objects are kept under: res itself, or the
// storage it shares with other resources ([Hooks.Storage]: a
// CustomResourceDefinition's served versions share one, as in
// kube-apiserver).
func storageOf(res *Resource) any {
	if res != nil && res.Hooks != nil && res.Hooks.Storage != nil {
		return res.Hooks.Storage
	}
	return res
}

// view is a stored object as res reads it: the object itself, or for a
// resource with [Hooks.FromStorage], a converted copy. Callers copy it
// before handing it out, as they copy a stored object. The conversion
// may fail (a CRD's conversion webhook): its error is a storageError.
func view(res *Resource, obj runtime.Object) (runtime.Object, error) {
	if obj == nil || res.Hooks == nil || res.Hooks.FromStorage == nil {
		return obj, nil
	}
	out, err := res.Hooks.FromStorage(obj)
	return out, asStorageError(err)
}

// storageError is a conversion's error ([Hooks.ToStorage],
// [Hooks.FromStorage]) that is not an API error: in kube-apiserver, the
// storage's codec's error, which its generic store returns as it is. A
// request is answered it as kube-apiserver's handlers answer an error
// that is not a Status (k8s.io/apiserver's
// responsewriters.ErrorToAPIStatus): 500, the error as its message, no
// reason. A watch ends with it as its etcd watcher sends it
// (errorEvent).
type storageError struct{ err error }

func (e storageError) Error() string { return e.err.Error() }
func (e storageError) Unwrap() error { return e.err }
func (e storageError) Status() metav1.Status {
	return metav1.Status{Status: metav1.StatusFailure, Code: http.StatusInternalServerError, Message: e.err.Error()}
}

// undecodable is what a GET answers when the object it reads cannot be
// converted (err from view): as kube-apiserver's etcd store answers an
// object it cannot decode, a storage.StorageError "corrupt object"
// naming its key (k8s.io/apiserver pkg/storage/errors.go,
// NewCorruptObjError; the inner error is etcd3's corruptObjectError,
// corrupt_obj_deleter.go), which the generic store makes a 500
// InternalError (storage/errors/storage.go, InterpretGetError;
// transcript 136).
func undecodable(res *Resource, stored runtime.Object, err error) error {
	var se storageError
	if !errors.As(err, &se) {
		return err
	}
	m := metaOf(stored)
	key := "/" + res.GVR.Resource // the etcd key, without its /registry prefix
	if g := res.GVR.Group; g != "" {
		key = "/" + g + key
	}
	if ns := m.GetNamespace(); ns != "" {
		key += "/" + ns
	}
	key += "/" + m.GetName()
	return apierrors.NewInternalError(fmt.Errorf("StorageError: corrupt object, Code: 7, Key: %s, ResourceVersion: 0, AdditionalErrorMsg: object not decodable revision=%d: %w",
		key, rvOf(stored), se.err))
}

// asStorageError makes err, if it is not an API error, a storageError.
func asStorageError(err error) error {
	var status apierrors.APIStatus
	if err == nil || errors.As(err, &status) {
		return err
	}
	return storageError{err}
}

func objectKey(namespace, name string) string {
	if namespace == "" {
		return name
	}
	return namespace + "/" + name
}

func metaOf(obj runtime.Object) metav1.Object {
	m, err := meta.Accessor(obj)
	if err != nil {
		panic(fmt.Sprintf("apiserver: %T has no ObjectMeta", obj)) // the resource table is wrong
	}
	return m
}

func rvOf(obj runtime.Object) uint64 {
	v, _ := strconv.ParseUint(metaOf(obj).GetResourceVersion(), 10, 64)
	return v
}

func setRV(obj runtime.Object, rv uint64) {
	metaOf(obj).SetResourceVersion(strconv.FormatUint(rv, 10))
}

// commit stamps the next resourceVersion on obj, records the change in the
// history and hands it to every matching watcher. Callers hold s.mu.
//
// For a resource kept in another version ([Hooks.ToStorage]) it first
// converts obj to the storage version, and the caller's obj becomes what
// a read of it through res returns; a conversion that fails (a CRD's
// conversion webhook) refuses the change before it takes a
// resourceVersion, and nothing is stored or sent. Otherwise commit
// cannot fail.
func (s *store) commit(res *Resource, typ watch.EventType, obj, prev runtime.Object) error {
	m := metaOf(obj)
	key := objectKey(m.GetNamespace(), m.GetName())
	at := storageOf(res)
	var stored runtime.Object
	if res.Hooks != nil && res.Hooks.ToStorage != nil {
		if typ == watch.Deleted && s.objects[at][key] != nil {
			// A delete stores nothing new: the object goes as it is
			// stored, and is read back through res.
			stored = s.objects[at][key].DeepCopyObject()
		} else {
			var err error
			if stored, err = res.Hooks.ToStorage(obj); err != nil {
				return asStorageError(err)
			}
		}
		// The answer, as kube-apiserver decodes what it stored: with
		// the resourceVersion it will have (a dry run keeps obj's).
		if !s.dry {
			setRV(stored, s.rv+1)
		}
		back, err := view(res, stored)
		if err != nil {
			return err
		}
		reflect.ValueOf(obj).Elem().Set(reflect.ValueOf(back).Elem())
	}
	if s.dry {
		// Nothing is stored, but the answer is still what the write
		// would answer: through the storage version and back, as
		// kube-apiserver's dry run encodes for storage and decodes it.
		return nil
	}
	s.rv++
	setRV(obj, s.rv)
	if stored != nil {
		// Kept in the storage version.
		prev = s.objects[at][key]
		obj = stored
	}
	if typ == watch.Deleted {
		delete(s.objects[at], key)
	} else {
		if s.objects[at] == nil {
			s.objects[at] = map[string]runtime.Object{} // the first object of res
		}
		s.objects[at][key] = obj
	}
	if typ != watch.Modified {
		delete(s.sorted, at) // the set of keys changed
	}
	ev := event{Type: typ, RV: s.rv, Res: res, Object: obj, Prev: prev}
	s.history = append(s.history, ev)
	if s.maxHistory > 0 && len(s.history) > s.maxHistory {
		drop := len(s.history) - s.maxHistory/2
		s.compacted = s.history[drop-1].RV
		s.history = append([]event(nil), s.history[drop:]...)
	}
	if s.gc != nil {
		s.gc.enqueue(ev)
	}
	if s.admission != nil {
		s.admission.Observe(Tx{s}, typ, res, obj) // admission: what it watches
	}
	for w := range s.watchers {
		if !w.send(ev) {
			// A watcher too slow to keep up is closed, as kube-apiserver
			// closes it; its client re-watches from its last
			// resourceVersion and the history replays the rest. So is
			// one that cannot read the change (its conversion failed),
			// after an ERROR event.
			delete(s.watchers, w)
			w.stop()
		}
	}
	return nil
}

// compact forgets the whole history: a watch or an exact list from any
// resourceVersion before now answers 410 Expired, as after etcd compaction
// once kube-apiserver's watch cache has moved on.
func (s *store) compact() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.compacted = s.rv
	s.history = nil
	return s.rv
}

func (s *store) currentRV() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rv
}

// stillServed reports, under s.mu, whether res is still what the
// registry serves: a request routed before a CRD's update or delete
// (which replace or remove its resource under s.mu) must not act on the
// old one. It answers as kube-apiserver does once a CRD's storage is
// gone: 404 with no name.
func (s *store) stillServed(res *Resource) error {
	if s.reg.lookup(res.GVR) != res {
		return errNoRoute()
	}
	return nil
}

func (s *store) get(res *Resource, namespace, name string) (runtime.Object, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.stillServed(res); err != nil {
		return nil, err
	}
	obj, ok := s.objects[storageOf(res)][objectKey(namespace, name)]
	if !ok {
		return nil, apierrors.NewNotFound(res.GroupResource(), name)
	}
	out, err := view(res, obj)
	if err != nil {
		return nil, undecodable(res, obj, err)
	}
	return out.DeepCopyObject(), nil
}

// validateName checks metadata.name as kube-apiserver does (transcript 31).
func validateName(res *Resource, name string) error {
	var errs field.ErrorList
	path := field.NewPath("metadata", "name")
	switch {
	case name == "":
		errs = append(errs, field.Required(path, "name or generateName is required"))
	case res.NameIsLabel:
		for _, msg := range validation.IsDNS1123Label(name) {
			errs = append(errs, field.Invalid(path, name, msg))
		}
	case res.NameIsPathSegment:
		for _, msg := range apipath.IsValidPathSegmentName(name) {
			errs = append(errs, field.Invalid(path, name, msg))
		}
	default:
		for _, msg := range validation.IsDNS1123Subdomain(name) {
			errs = append(errs, field.Invalid(path, name, msg))
		}
	}
	if len(errs) > 0 {
		return apierrors.NewInvalid(res.GroupVersionKind().GroupKind(), name, errs)
	}
	return nil
}

// nameSuffix gives generateName a deterministic 5-character suffix from
// the alphabet kube-apiserver uses.
func (s *store) nameSuffix() string {
	const alphabet = "bcdfghjklmnpqrstvwxz2456789"
	s.suffixes++
	n := s.suffixes
	b := make([]byte, 5)
	for i := range b {
		b[len(b)-1-i] = alphabet[n%uint64(len(alphabet))]
		n /= uint64(len(alphabet))
	}
	return string(b)
}

// lock takes s.mu for one write, a dry run if dry; the unlock it returns
// ends the dry run too.
func (s *store) lock(dry bool) (unlock func()) {
	s.mu.Lock()
	s.dry = dry
	return func() {
		s.dry = false
		s.pending = nil
		s.mu.Unlock()
	}
}

func (s *store) create(ctx context.Context, res *Resource, namespace, manager string, obj runtime.Object, dry bool) (runtime.Object, error) {
	defer s.lock(dry)()
	s.admitting(ctx) // admission: a client's write
	if err := s.stillServed(res); err != nil {
		return nil, err
	}
	return s.createLocked(res, namespace, manager, obj, false)
}

// createLocked is create, for callers that hold s.mu. keepManagedFields:
// obj's managedFields are already right (a server-side apply made it).
// Its steps are kube-apiserver's, in its order (store_admission.go).
func (s *store) createLocked(res *Resource, namespace, manager string, obj runtime.Object, keepManagedFields bool) (runtime.Object, error) {
	// The handler: the object's namespace is the request's
	// (EnsureObjectNamespaceMatchesRequestNamespace), the kind's
	// defaults are the decoder's, then the field manager records the
	// writer's fields.
	m := metaOf(obj)
	if err := matchNamespace(res, m, namespace); err != nil {
		return nil, err
	}
	now := s.now()
	if res.Default != nil {
		res.Default(obj, now)
	}
	if !keepManagedFields {
		m.SetManagedFields(nil)
		obj = s.manageFields(res, "", res.New(), obj, manager)
	}
	// Admission: mutating, the built-in plugins first
	// (store_admission.go: NamespaceLifecycle's 404 comes before any
	// webhook is called), then policies and webhooks (admission.go),
	// before the create strategy (the name is not made yet).
	if err := s.mutatingAdmission(admissionAttributes{Operation: admissionCreate, Resource: res,
		Namespace: namespace, Name: metaOf(obj).GetName(), Object: obj, DryRun: s.dry}); err != nil {
		return nil, err
	}
	adm := s.takeAdmission()
	attrs, err := s.admitCreate(adm, res, namespace, obj)
	if err != nil {
		return nil, err
	}
	// Store.Create: the system fields and the name, then
	// rest.BeforeCreate: the namespace again (admission may have changed
	// it), the create strategy, the validation.
	m = metaOf(obj)
	if m.GetName() == "" && m.GetGenerateName() != "" {
		m.SetName(m.GetGenerateName() + s.nameSuffix())
	}
	if err := matchNamespace(res, m, namespace); err != nil {
		return nil, err
	}
	s.uids++
	m.SetUID(nthUID(s.uids))
	m.SetCreationTimestamp(now)
	m.SetDeletionTimestamp(nil)
	m.SetDeletionGracePeriodSeconds(nil)
	m.SetGeneration(0)
	if res.Generation {
		m.SetGeneration(1)
	}
	clearTypeMeta(obj)
	if res.ResetStatusOnCreate {
		copyField(obj, res.New(), "Status")
	}
	if res.PrepareForCreate != nil {
		res.PrepareForCreate(obj, now)
	}
	if err := validateName(res, m.GetName()); err != nil {
		return nil, err
	}
	if err := validateObject(res, obj); err != nil {
		return nil, err
	}
	if err := validateHook(res, obj, nil, ""); err != nil {
		return nil, err
	}
	if res.Validate != nil {
		if errs := res.Validate(obj); len(errs) > 0 {
			return nil, apierrors.NewInvalid(res.GroupVersionKind().GroupKind(), m.GetName(), errs)
		}
	}
	// Admission: validating, the built-in plugins (store_admission.go),
	// then policies and webhooks (admission.go), which see the object
	// as it will be stored.
	if err := s.validatingAdmission(admissionAttributes{Operation: admissionCreate, Resource: res,
		Namespace: m.GetNamespace(), Name: m.GetName(), Object: obj, DryRun: s.dry}); err != nil {
		return nil, err
	}
	if err := s.validateCreate(adm, attrs, obj); err != nil {
		return nil, err
	}
	// Storage: etcd3's store refuses a resourceVersion first, then a key
	// that exists. A dry run never reaches etcd3's check
	// (DryRunnableStorage.Create only looks for an existing key), so it
	// takes a resourceVersion.
	if m.GetResourceVersion() != "" && !s.dry {
		return nil, apierrors.NewInternalError(errors.New("resourceVersion should not be set on objects to be created"))
	}
	if _, exists := s.objects[storageOf(res)][objectKey(m.GetNamespace(), m.GetName())]; exists {
		return nil, apierrors.NewAlreadyExists(res.GroupResource(), m.GetName())
	}
	if res.Allocate != nil {
		if err := res.Allocate(s, obj); err != nil {
			return nil, err
		}
	}
	committed, err := s.prepare(res, watch.Added, obj)
	if err != nil {
		return nil, err
	}
	if err := s.commit(res, watch.Added, obj, nil); err != nil {
		return nil, err
	}
	committed()
	if res.AfterCreate != nil {
		if err := res.AfterCreate(s, obj); err != nil {
			return nil, err
		}
	}
	return obj.DeepCopyObject(), nil
}

// matchNamespace is rest.EnsureObjectNamespaceMatchesRequestNamespace:
// a namespaced object takes the request's namespace or must name it
// (400); a cluster-scoped one has none.
func matchNamespace(res *Resource, m metav1.Object, namespace string) error {
	if !res.Namespaced {
		m.SetNamespace("")
		return nil
	}
	if m.GetNamespace() == "" {
		m.SetNamespace(namespace)
	}
	if m.GetNamespace() != namespace {
		return apierrors.NewBadRequest("the namespace of the provided object does not match the namespace sent on the request")
	}
	return nil
}

// validateObject runs res's ValidateObject, if it has one.
func validateObject(res *Resource, obj runtime.Object) error {
	if res.ValidateObject == nil {
		return nil
	}
	if errs := res.ValidateObject(obj); len(errs) > 0 {
		return apierrors.NewInvalid(res.GroupVersionKind().GroupKind(), metaOf(obj).GetName(), errs)
	}
	return nil
}

// update is PUT of the object (subresource "") or of its status.
func (s *store) update(ctx context.Context, res *Resource, namespace, name, subresource, manager string, obj runtime.Object, dry bool) (runtime.Object, error) {
	defer s.lock(dry)()
	s.admitting(ctx) // admission: a client's write
	if err := s.stillServed(res); err != nil {
		return nil, err
	}
	return s.updateLocked(res, namespace, name, subresource, manager, obj, false)
}

// updateLocked is update, for callers that hold s.mu. keepManagedFields:
// obj's managedFields are already right (a write through the scale
// subresource, or a server-side apply).
func (s *store) updateLocked(res *Resource, namespace, name, subresource, manager string, obj runtime.Object, keepManagedFields bool) (runtime.Object, error) {
	m := metaOf(obj)
	if m.GetName() != name {
		return nil, apierrors.NewBadRequest("the name of the object (" + m.GetName() + ") does not match the name on the URL (" + name + ")")
	}
	if res.Namespaced && m.GetNamespace() != "" && m.GetNamespace() != namespace {
		return nil, apierrors.NewBadRequest("the namespace of the provided object does not match the namespace sent on the request")
	}
	old, ok := s.objects[storageOf(res)][objectKey(namespace, name)]
	if !ok {
		return nil, apierrors.NewNotFound(res.GroupResource(), name)
	}
	old, err := view(res, old)
	if err != nil {
		return nil, err
	}
	// Admission: mutating, the built-in plugins (store_admission.go),
	// then policies and webhooks (admission.go), on the object as sent
	// and the one stored: the update handler's transformers, which
	// Store.Update runs before anything else of the update.
	builtin := admissionAttributes{Operation: admissionUpdate, Resource: res, Subresource: subresource,
		Namespace: namespace, Name: name, Object: obj, Old: old, DryRun: s.dry}
	if err := s.mutatingAdmission(builtin); err != nil {
		return nil, err
	}
	adm := s.takeAdmission()
	attrs, err := s.admitUpdate(adm, res, subresource, obj, old)
	if err != nil {
		return nil, err
	}
	// Optimistic concurrency: a stale resourceVersion is a Conflict
	// (transcript 11); an empty one is an unconditional update. Store.Update
	// checks it on the object admission has mutated.
	if rv := m.GetResourceVersion(); rv != "" && rv != metaOf(old).GetResourceVersion() {
		return nil, apierrors.NewConflict(res.GroupResource(), name,
			errors.New("the object has been modified; please apply your changes to the latest version and try again"))
	}
	var next runtime.Object
	if subresource == "status" && res.Hooks != nil {
		// A custom resource's status strategy keeps nothing of the
		// request but its status (apiextensions-apiserver
		// pkg/registry/customresource/status_strategy.go).
		next = old.DeepCopyObject()
		copyField(next, obj, "Status")
		if keepManagedFields {
			metaOf(next).SetManagedFields(m.GetManagedFields())
		}
	} else {
		next = obj.DeepCopyObject()
		switch {
		case subresource == "status":
			// A built-in kind's status strategy keeps the old spec
			// and writes the rest (kubernetes
			// pkg/registry/<group>/<kind>/strategy.go, its
			// statusStrategy's PrepareForUpdate).
			copyField(next, old, "Spec")
			if res.PrepareStatusUpdate != nil {
				res.PrepareStatusUpdate(next, old, s.now())
			}
		case subresource == "approval":
			res.Approval(next, old, s.now())
		case res.StatusSubresource:
			copyField(next, old, "Status")
		}
		if subresource == "" && res.PrepareForUpdate != nil {
			res.PrepareForUpdate(next, old)
		}
		nm, om := metaOf(next), metaOf(old)
		nm.SetNamespace(om.GetNamespace())
		nm.SetUID(om.GetUID())
		nm.SetCreationTimestamp(om.GetCreationTimestamp())
		nm.SetDeletionTimestamp(om.GetDeletionTimestamp())
		nm.SetDeletionGracePeriodSeconds(om.GetDeletionGracePeriodSeconds())
		nm.SetGeneration(om.GetGeneration())
		if !keepManagedFields {
			nm.SetManagedFields(om.GetManagedFields())
		}
		specChanged := !apiequality.Semantic.DeepEqual(specOf(res, next), specOf(res, old))
		annotationsChanged := res.GenerationOnAnnotations &&
			!apiequality.Semantic.DeepEqual(nm.GetAnnotations(), om.GetAnnotations())
		if res.Generation && subresource == "" && (specChanged || annotationsChanged) {
			nm.SetGeneration(om.GetGeneration() + 1)
		}
	}
	clearTypeMeta(next)
	setRV(next, rvOf(old))
	// rest.BeforeUpdate's validation.
	if err := validateObject(res, next); err != nil {
		return nil, err
	}
	if res.ValidateUpdate != nil {
		if errs := res.ValidateUpdate(next, old, subresource); len(errs) > 0 {
			return nil, apierrors.NewInvalid(res.GroupVersionKind().GroupKind(), name, errs)
		}
	}
	if err := validateHook(res, next, old, subresource); err != nil {
		return nil, err
	}
	// Admission: validating, the built-in plugins (store_admission.go),
	// then webhooks and policies (admission.go), which see the object
	// as it will be stored.
	builtin.Object = next
	if err := s.validatingAdmission(builtin); err != nil {
		return nil, err
	}
	if err := s.validateUpdate(adm, attrs, next); err != nil {
		return nil, err
	}
	// A write that changes nothing is not written: no new
	// resourceVersion and no event, as kube-apiserver skips it.
	if apiequality.Semantic.DeepEqual(next, old) {
		return old.DeepCopyObject(), nil
	}
	if !keepManagedFields {
		next = s.manageFields(res, subresource, old, next, manager)
	}
	typ := watch.Modified
	if nm := metaOf(next); nm.GetDeletionTimestamp() != nil && len(nm.GetFinalizers()) == 0 {
		typ = watch.Deleted // the last finalizer is gone: the pending delete completes
	}
	committed, err := s.prepare(res, typ, next)
	if err != nil {
		return nil, err
	}
	if typ == watch.Deleted {
		// The stored object goes, as it was (deleteWithoutFinalizers, gc.go).
		if err := s.commit(res, typ, old.DeepCopyObject(), old); err != nil {
			return nil, err
		}
		committed()
		return next.DeepCopyObject(), nil
	}
	if err := s.commit(res, typ, next, old); err != nil {
		return nil, err
	}
	committed()
	return next.DeepCopyObject(), nil
}

// deleteResult is what a DELETE answers: the object, or (for resources
// without graceful deletion) a Status naming it.
type deleteResult struct {
	Object runtime.Object
	Status *metav1.Status
	// Pending: the object stays, marked, until its finalizers go
	// (kube-apiserver's Delete returns deleted=false; gc.go).
	Pending bool
}

func (s *store) delete(ctx context.Context, res *Resource, namespace, name string, opts *metav1.DeleteOptions) (deleteResult, error) {
	defer s.lock(len(opts.DryRun) > 0)()
	s.admitting(ctx) // admission: a client's write
	if err := s.stillServed(res); err != nil {
		return deleteResult{}, err
	}
	return s.deleteLockedWith(res, namespace, name, opts)
}

// deleteLocked deletes with the default options (Background
// propagation), for callers that hold s.mu.
func (s *store) deleteLocked(res *Resource, namespace, name string) (deleteResult, error) {
	return s.deleteLockedWith(res, namespace, name, &metav1.DeleteOptions{})
}

func (s *store) deleteLockedWith(res *Resource, namespace, name string, opts *metav1.DeleteOptions) (deleteResult, error) {
	// Admission: mutating (store_admission.go).
	attrs := admissionAttributes{Operation: admissionDelete, Resource: res, Namespace: namespace, Name: name, DryRun: s.dry}
	if err := s.mutatingAdmission(attrs); err != nil {
		return deleteResult{}, err
	}
	old, ok := s.objects[storageOf(res)][objectKey(namespace, name)]
	if !ok {
		return deleteResult{}, apierrors.NewNotFound(res.GroupResource(), name)
	}
	old, err := view(res, old)
	if err != nil {
		return deleteResult{}, err
	}
	// Preconditions, as rest.BeforeDelete checks them before the
	// store's deleteValidation (gc.go).
	if err := checkDeletePreconditions(res, old, opts); err != nil {
		return deleteResult{}, err
	}
	// Admission: validating, the built-in plugins (store_admission.go),
	// then webhooks and policies (admission.go: a DELETE's mutating and
	// validating phases, with the object stored).
	attrs.Old = old
	if err := s.validatingAdmission(attrs); err != nil {
		return deleteResult{}, err
	}
	if err := s.admitDelete(s.takeAdmission(), res, old, opts); err != nil {
		return deleteResult{}, err
	}
	om := metaOf(old)
	if out, done, err := s.beforeDelete(res, old, opts); done { // gc.go
		return out, err
	}
	if om.GetDeletionTimestamp() != nil {
		return deleteResult{Object: old.DeepCopyObject()}, nil // already being deleted
	}
	if res.Hooks != nil && res.Hooks.Delete != nil {
		obj, err := res.Hooks.Delete(Tx{s}, old.DeepCopyObject())
		return deleteResult{Object: obj}, err
	}
	// With garbage collection, the propagation policy asked for becomes
	// a finalizer that the collector (gc.go) removes once it has done
	// its part: orphan, or foregroundDeletion.
	finalizers := om.GetFinalizers()
	if s.gc != nil && res.DeleteContents == nil {
		finalizers = deletionFinalizers(finalizers, opts)
	}
	startDeletion := func() (runtime.Object, error) {
		next := old.DeepCopyObject()
		nm := metaOf(next)
		nm.SetFinalizers(finalizers)
		now := s.now()
		nm.SetDeletionTimestamp(&now)
		nm.SetDeletionGracePeriodSeconds(ptr.To[int64](0))
		if res.Generation {
			nm.SetGeneration(om.GetGeneration() + 1)
		}
		if res.PrepareForDelete != nil {
			res.PrepareForDelete(next)
		}
		return next, s.commit(res, watch.Modified, next, old)
	}
	switch {
	case len(finalizers) > 0:
		// Finalizers hold the object until an update removes the last one.
		next, err := startDeletion()
		if err != nil {
			return deleteResult{}, err
		}
		return deleteResult{Object: next.DeepCopyObject(), Pending: true}, nil
	case res.DeleteContents != nil:
		// The kind's controller's work, done at once (a namespace's:
		// terminate, delete the contents, then the namespace).
		terminating, err := startDeletion()
		if err != nil {
			return deleteResult{}, err
		}
		if err := res.DeleteContents(s, terminating); err != nil {
			return deleteResult{}, err
		}
		if err := s.commit(res, watch.Deleted, terminating.DeepCopyObject(), terminating); err != nil {
			return deleteResult{}, err
		}
		return deleteResult{Object: terminating.DeepCopyObject()}, nil
	case res.GracefulDelete:
		// A pod on no node is removed at once, but in two steps that both
		// show up in a watch (transcripts 21, 37): MODIFIED with
		// deletionTimestamp, then DELETED. The answer is the pod.
		marked, err := startDeletion()
		if err != nil {
			return deleteResult{}, err
		}
		final := marked.DeepCopyObject()
		if err := s.commit(res, watch.Deleted, final, marked); err != nil {
			return deleteResult{}, err
		}
		return deleteResult{Object: final.DeepCopyObject()}, nil
	default:
		final := old.DeepCopyObject()
		if err := s.commit(res, watch.Deleted, final, old); err != nil {
			return deleteResult{}, err
		}
		return deleteResult{Status: &metav1.Status{
			Status: metav1.StatusSuccess,
			Details: &metav1.StatusDetails{
				Name: name, Group: res.GVR.Group, Kind: res.GVR.Resource, UID: om.GetUID(),
			},
		}}, nil
	}
}

// deleteCollection deletes, one by one, every object of res that o
// selects, and returns the list of what it deleted, as it was listed.
// As kube-apiserver's Store.DeleteCollection, it lists first, then
// deletes each item by name, admitted as its own DELETE (ctx, made by
// withAdmission: the collection's attributes, kube-apiserver's
// deleteValidation per item). Admission runs unlocked: an item deleted
// meanwhile is passed over, as Store.DeleteCollection ignores NotFound.
func (s *store) deleteCollection(ctx context.Context, res *Resource, o listOptions, opts *metav1.DeleteOptions) (runtime.Object, error) {
	defer s.lock(len(opts.DryRun) > 0)()
	if err := s.stillServed(res); err != nil {
		return nil, err
	}
	var listed []runtime.Object
	rv := s.rv
	for _, key := range sortedKeys(s.objects[storageOf(res)]) {
		obj, err := view(res, s.objects[storageOf(res)][key])
		if err != nil {
			return nil, err
		}
		m := metaOf(obj)
		if o.Namespace != "" && m.GetNamespace() != o.Namespace || !matches(res, obj, o.Label, o.Field) {
			continue
		}
		// The answer is the list as listed, before the deletes
		// (Store.DeleteCollection; transcript 132).
		listed = append(listed, obj.DeepCopyObject())
	}
	ctx = withCollection(ctx, o.Namespace)
	for _, obj := range listed {
		m := metaOf(obj)
		s.admitting(ctx) // admission: each item's delete
		if _, err := s.deleteLockedWith(res, m.GetNamespace(), m.GetName(), opts); err != nil && !apierrors.IsNotFound(err) {
			return nil, err
		}
	}
	list := res.NewList()
	if err := meta.SetList(list, listed); err != nil {
		return nil, err
	}
	lm, _ := meta.ListAccessor(list)
	lm.SetResourceVersion(strconv.FormatUint(rv, 10))
	return list, nil
}

// listOptions are the parsed, validated parameters of a list.
type listOptions struct {
	Namespace string // "" for all namespaces
	Label     labels.Selector
	Field     fields.Selector
	RV        string // resourceVersion as sent
	Match     metav1.ResourceVersionMatch
	Limit     int64
	Continue  string
	Shard     apisharding.Selector // nil: no shard selector (sharding.go)
}

// list answers a LIST: items sorted by namespace and name, at the current
// resourceVersion, or at an older one for resourceVersionMatch=Exact and
// for continue tokens.
//
// A LIST at resourceVersion=0 is answered whole: kube-apiserver serves it
// from its watch cache, which ignores the limit at resourceVersion=0
// (computeListLimit,
// https://github.com/kubernetes/apiserver/blob/v0.37.2/pkg/storage/cacher/cacher.go#L740-L745),
// so there is no continue token and no remainingItemCount, with or
// without resourceVersionMatch=NotOlderThan (transcript 06b). It is the
// LIST an informer sends when it does not use watch-list. A continue
// token still pages: kube-apiserver looks at the token first
// (https://github.com/kubernetes/apiserver/blob/v0.37.2/pkg/storage/cacher/delegator/interface.go#L47-L49).
func (s *store) list(res *Resource, o listOptions) (runtime.Object, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.stillServed(res); err != nil {
		return nil, err
	}
	if o.RV == "0" && o.Continue == "" {
		o.Limit = 0
	}
	at := s.rv
	start := ""
	if o.Continue != "" {
		tok, err := decodeContinue(o.Continue)
		if err != nil {
			return nil, apierrors.NewBadRequest(err.Error())
		}
		if tok.RV < s.compacted {
			return nil, apierrors.NewResourceExpired("The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.")
		}
		at, start = tok.RV, tok.Start
	} else if o.RV != "" && o.RV != "0" {
		want, err := strconv.ParseUint(o.RV, 10, 64)
		if err != nil {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("invalid resource version: %s", o.RV))
		}
		if want > s.rv {
			return nil, tooLargeResourceVersion(want, s.rv)
		}
		// With a limit and no resourceVersionMatch it is exact too: the
		// "legacy exact match" of delegator.ShouldDelegateList
		// (k8s.io/apiserver pkg/storage/cacher/delegator/interface.go,
		// transcript 130).
		if o.Match == metav1.ResourceVersionMatchExact || o.Match == "" && o.Limit > 0 {
			if want < s.compacted {
				return nil, apierrors.NewResourceExpired(fmt.Sprintf("too old resource version: %d (%d)", want, s.compacted))
			}
			at = want
		}
	}
	objs := s.stateAt(res, at)
	keys := s.listOrder(res, at, objs)
	inNamespace := o.Namespace != ""
	// Keys are in namespace, name order, so a binary search finds where
	// this page starts: in the namespace asked for, if any, and after
	// the continue token's start key, if any. A paged list then costs
	// O(log n) per page to start, not a scan of every object.
	first := sort.Search(len(keys), func(i int) bool {
		m := metaOf(objs[keys[i]])
		if inNamespace && m.GetNamespace() != o.Namespace {
			return m.GetNamespace() > o.Namespace
		}
		return start == "" || afterStart(m, start, inNamespace)
	})
	size := len(keys) - first
	if o.Limit > 0 {
		size = min(size, int(o.Limit))
	}
	items := make([]runtime.Object, 0, size)
	filtered := !labelsEmpty(o.Label) || !fieldsEmpty(o.Field)
	var next string
	var remaining int64
	for i := first; i < len(keys); i++ {
		obj := objs[keys[i]]
		if inNamespace && metaOf(obj).GetNamespace() != o.Namespace {
			break // past the namespace's keys
		}
		obj, err := view(res, obj)
		if err != nil {
			return nil, err
		}
		if !inShard(o.Shard, obj) || !matches(res, obj, o.Label, o.Field) {
			continue
		}
		if o.Limit > 0 && int64(len(items)) == o.Limit {
			next = encodeContinue(at, lastKey(items, o.Namespace))
			if !filtered {
				end := len(keys)
				if inNamespace {
					end = sort.Search(len(keys), func(k int) bool {
						return metaOf(objs[keys[k]]).GetNamespace() > o.Namespace
					})
				}
				remaining = int64(end-first) - o.Limit
			}
			break
		}
		items = append(items, obj.DeepCopyObject())
	}
	list := res.NewList()
	if err := meta.SetList(list, items); err != nil {
		return nil, err
	}
	lm, _ := meta.ListAccessor(list)
	lm.SetResourceVersion(strconv.FormatUint(at, 10))
	lm.SetContinue(next)
	if next != "" && !filtered {
		lm.SetRemainingItemCount(&remaining)
	}
	setShardInfo(list, o.Shard)
	return list, nil
}

// afterStart reports whether m comes after the continue token's start key
// ("/name\x00" within a namespace, "/namespace/name\x00" across them), in
// the order items are listed.
func afterStart(m metav1.Object, start string, inNamespace bool) bool {
	key := strings.TrimSuffix(strings.TrimPrefix(start, "/"), "\x00")
	ns, name := "", key
	if !inNamespace {
		if i := strings.Index(key, "/"); i >= 0 {
			ns, name = key[:i], key[i+1:]
		}
		if m.GetNamespace() != ns {
			return m.GetNamespace() > ns
		}
	}
	return m.GetName() > name
}

func lastKey(items []runtime.Object, namespace string) string {
	m := metaOf(items[len(items)-1])
	if namespace != "" {
		return "/" + m.GetName() + "\x00"
	}
	return "/" + objectKey(m.GetNamespace(), m.GetName()) + "\x00"
}

// stateAt rebuilds the objects of res as they were at resourceVersion rv by
// undoing the history after it. Callers hold s.mu and have checked that
// the history reaches back to rv.
func (s *store) stateAt(res *Resource, rv uint64) map[string]runtime.Object {
	at := storageOf(res)
	if rv >= s.rv {
		return s.objects[at]
	}
	objs := make(map[string]runtime.Object, len(s.objects[at]))
	for k, v := range s.objects[at] {
		objs[k] = v
	}
	for i := len(s.history) - 1; i >= 0 && s.history[i].RV > rv; i-- {
		ev := s.history[i]
		if storageOf(ev.Res) != at {
			continue
		}
		m := metaOf(ev.Object)
		key := objectKey(m.GetNamespace(), m.GetName())
		if ev.Prev == nil {
			delete(objs, key)
		} else {
			objs[key] = ev.Prev
		}
	}
	return objs
}

// listOrder is sortedKeys(objs), kept for the current state of res until
// a key is added or removed. An older state, rebuilt by stateAt, is
// sorted afresh. Callers hold s.mu.
func (s *store) listOrder(res *Resource, at uint64, objs map[string]runtime.Object) []string {
	if at < s.rv {
		return sortedKeys(objs)
	}
	keys, ok := s.sorted[storageOf(res)]
	if !ok {
		keys = sortedKeys(objs)
		s.sorted[storageOf(res)] = keys
	}
	return keys
}

// sortedKeys orders objects by namespace, then name, as kube-apiserver
// lists them (transcript 03).
func sortedKeys(objs map[string]runtime.Object) []string {
	keys := make([]string, 0, len(objs))
	for k := range objs {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := metaOf(objs[keys[i]]), metaOf(objs[keys[j]])
		if a.GetNamespace() != b.GetNamespace() {
			return a.GetNamespace() < b.GetNamespace()
		}
		return a.GetName() < b.GetName()
	})
	return keys
}

func labelsEmpty(s labels.Selector) bool { return s == nil || s.Empty() }
func fieldsEmpty(s fields.Selector) bool { return s == nil || s.Empty() }

func matches(res *Resource, obj runtime.Object, l labels.Selector, f fields.Selector) bool {
	if !labelsEmpty(l) && !l.Matches(labels.Set(metaOf(obj).GetLabels())) {
		return false
	}
	if !fieldsEmpty(f) && !f.Matches(res.fieldsOf(obj)) {
		return false
	}
	return true
}

// tooLargeResourceVersion is kube-apiserver's answer to a list from a
// resourceVersion it has not reached (transcript 23): a 504 Timeout whose
// cause client-go's reflector recognises.
func tooLargeResourceVersion(want, current uint64) error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status:  metav1.StatusFailure,
		Code:    504,
		Reason:  metav1.StatusReasonTimeout,
		Message: fmt.Sprintf("Timeout: Too large resource version: %d, current: %d", want, current),
		Details: &metav1.StatusDetails{
			Causes:            []metav1.StatusCause{{Type: metav1.CauseTypeResourceVersionTooLarge, Message: "Too large resource version"}},
			RetryAfterSeconds: 1,
		},
	}}
}

func clearTypeMeta(obj runtime.Object) {
	if _, ok := obj.(*unstructured.Unstructured); ok {
		return // a custom resource is stored with its apiVersion and kind, as in etcd
	}
	obj.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
}

// fieldOf returns the named top-level field (Spec, Status) of a typed
// object, or nil when it has none.
func fieldOf(obj runtime.Object, name string) any {
	v := reflect.ValueOf(obj).Elem().FieldByName(name)
	if !v.IsValid() {
		return nil
	}
	return v.Interface()
}

// copyField sets dst's named top-level field to src's (of an
// unstructured object, the field named in lower case).
func copyField(dst, src runtime.Object, name string) {
	if du, ok := dst.(*unstructured.Unstructured); ok {
		key := strings.ToLower(name)
		if v, ok := src.(*unstructured.Unstructured).Object[key]; ok {
			du.Object[key] = runtime.DeepCopyJSONValue(v)
		} else {
			delete(du.Object, key)
		}
		return
	}
	d := reflect.ValueOf(dst).Elem().FieldByName(name)
	s := reflect.ValueOf(src).Elem().FieldByName(name)
	if d.IsValid() && s.IsValid() {
		d.Set(s)
	}
}
