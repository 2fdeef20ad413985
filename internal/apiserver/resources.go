package apiserver

import (
	"fmt"
	"sort"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apimachinery/pkg/version"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// The resource table. It is laid out as kube-apiserver's registry is
// (k8s.io/apiserver registry/generic/registry.Store, with a
// rest.RESTCreateStrategy per kind): what every resource has in common
// comes from generic sources, and each kind adds only where
// kube-apiserver's own strategy for it differs.
//
//   - Which resources, their kinds, whether they are namespaced and which
//     of the status and scale subresources they have: kube-apiserver's
//     OpenAPI documents, read by openapi/gen.go into
//     zz_generated.kinds.go (builtinKinds).
//   - Their Go types: client-go's scheme (k8s.io/api), the one client-go
//     itself decodes with.
//   - Their differences: strategies.go, one [strategy] per kind, beside
//     the upstream strategy it copies (defaults, what the create strategy
//     and admission add, generation, status reset, allocation, field
//     selectors, printer columns).
//
// The store, the watch fan-out and the HTTP layer are generic: nothing
// else in the package is per kind.

// Resource is one REST resource the workshop cluster serves.
type Resource struct {
	GVR        schema.GroupVersionResource
	Kind       string // e.g. "Pod"; the list kind is Kind+"List"
	Namespaced bool

	New     func() runtime.Object // an empty object of Kind
	NewList func() runtime.Object // an empty list of Kind

	// StatusSubresource: PUT .../status writes only .status, and a PUT of
	// the main resource leaves .status as it was.
	StatusSubresource bool
	// Scale: the resource has a scale subresource (autoscaling/v1 Scale
	// of .spec.replicas, scale.go), as deployments have.
	Scale bool
	// DeleteCollection: a DELETE of the collection deletes every object
	// its selectors match (all kinds here but namespaces).
	DeleteCollection bool

	// strategy is what this kind does differently (strategies.go).
	strategy
}

// strategy is what one kind does differently from the generic store: the
// few rules kube-apiserver's strategy for the kind (its
// pkg/registry/<group>/<kind>/strategy.go), its defaulting functions
// (pkg/apis/<group>/v1/defaults.go) and its admission plugins add. The
// zero strategy is a plain stored object: a ConfigMap.
type strategy struct {
	ShortNames []string
	// Generation: metadata.generation starts at 1 and grows when .spec
	// changes (and when deletion starts), as kube-apiserver does for pods
	// and deployments. ConfigMaps, Namespaces and Nodes have none.
	Generation bool
	// GenerationOnAnnotations: annotation changes bump the generation too
	// (deployments, whose annotations are copied to their ReplicaSets).
	GenerationOnAnnotations bool
	// GracefulDelete: a DELETE first stamps deletionTimestamp (a MODIFIED
	// event), then removes the object (DELETED), and answers with the
	// object. This is what kube-apiserver does for a pod bound to no node
	// (transcripts 21, 37, 39). Others answer a Status and emit one DELETED.
	GracefulDelete bool
	// NameIsLabel: names must be DNS-1123 labels (namespaces, services),
	// not subdomains.
	NameIsLabel bool
	// NameIsPathSegment: any name that can be a path segment will do
	// (k8s.io/apimachinery pkg/api/validation/path, as kube-apiserver's
	// ValidateRBACName for the RBAC kinds): not "." or "..", no "/" or "%".
	NameIsPathSegment bool
	// ResetStatusOnCreate: a create drops the .status it was sent, as
	// the PrepareForCreate of most kinds with a status subresource does
	// (the status is their controller's to write).
	ResetStatusOnCreate bool

	// Table is how kubectl get prints the resource: the columns and
	// cells of a Table answer (table.go; each kind's in its registry_<group>.go), as the kind's
	// registry in kube-apiserver prints it. Every built-in kind has one
	// (TestTableColumnsEveryKind); without one, a Table request is
	// answered 406, as kube-apiserver answers for a kind that has no
	// TableConvertor.
	Table *tablePrinter

	// Fields returns the kind's own field-selector fields of an object,
	// by the names FieldLabel converts to (upstream's GetAttrs and
	// ToSelectableFields). metadata.name and metadata.namespace are
	// added for every kind.
	Fields func(obj runtime.Object) fields.Set
	// FieldLabel is the kind's field label conversion
	// (AddFieldLabelConversionFunc in pkg/apis/<group>/v1/conversion.go):
	// it accepts the labels a field selector may name, mapping them to
	// the names Fields uses, and words the error for the others. Default:
	// apimachinery's DefaultMetaV1FieldSelectorConversion, as
	// kube-apiserver uses for kinds that register none.
	FieldLabel func(label, value string) (string, string, error)
	// Default fills the scheme's defaults on create (kube-apiserver's
	// defaulting functions). They run before managedFields are recorded,
	// so the writer owns them.
	Default func(obj runtime.Object, now metav1.Time)
	// Admit does what admission plugins and the create strategy add
	// after that (tolerations, priority, initial status, a Job's
	// selector): kube-apiserver records no owner for these.
	Admit func(obj runtime.Object, now metav1.Time)
	// Allocate takes what the kind holds of a shared range (a Service's
	// cluster IP and node ports) from what the stored objects already
	// hold; it runs last on create, with the store locked.
	Allocate func(s *store, obj runtime.Object) error

	// PrepareForUpdate adjusts what a PUT or PATCH of the object (not a
	// subresource) sends before it is validated: what kube-apiserver's
	// decoding does to every write (a Secret's stringData folded into
	// data, its type defaulted).
	PrepareForUpdate func(next, old runtime.Object)
	// Validate is the kind's create validation (its strategy's
	// Validate, pkg/apis/<group>/validation), where a test relies on
	// it; it runs after the create strategy has prepared the object.
	// Its errors are answered 422, as kube-apiserver words them.
	Validate func(obj runtime.Object) field.ErrorList
	// ValidateUpdate is the kind's ValidateXUpdate
	// (pkg/apis/<group>/validation) for a write to the object
	// (subresource "") or to one of its subresources ("status",
	// "approval"): the fields an update may not change. Its errors are
	// answered 422, as kube-apiserver words them.
	ValidateUpdate func(next, old runtime.Object, subresource string) field.ErrorList
	// PrepareStatusUpdate is what the kind's status strategy
	// (PrepareForUpdate of its statusStrategy) keeps of the old object
	// beyond its spec, which every built-in status strategy keeps: a
	// Deployment its labels, a Pod its ownerReferences, a
	// CertificateSigningRequest its Approved and Denied conditions. The
	// rest of the metadata a status write sends is written, as
	// kube-apiserver writes it (annotations, labels, finalizers). now
	// is the write's time.
	PrepareStatusUpdate func(next, old runtime.Object, now metav1.Time)
	// Approval: the kind has the approval subresource (a
	// CertificateSigningRequest's, kubernetes
	// pkg/registry/certificates/certificates/storage), served as status
	// is (GET, PUT, PATCH), and this is its strategy's PrepareForUpdate:
	// what of the request it writes (the conditions, and the metadata).
	Approval func(next, old runtime.Object, now metav1.Time)
	// ResetFields are the fields a write through subresource ("" for
	// the object) may not set, by path, as the kind's strategy's
	// GetResetFields names them: the field manager records no owner for
	// them (k8s.io/apiserver pkg/endpoints/installer.go passes them to
	// managedfields.NewDefaultFieldManager). Only where a kind's
	// managedFields differ without them (a CertificateSigningRequest's,
	// which kube-apiserver records none of).
	ResetFields func(subresource string) []fieldpath.Path
	// SpecField is the field whose changes bump the generation, when it
	// is not Spec (a webhook configuration's Webhooks).
	SpecField string

	// Hooks: a kind defined at run time (custom.go).
	Hooks *Hooks
}

// GroupResource is what Status errors name ("pods", "deployments.apps").
func (r *Resource) GroupResource() schema.GroupResource { return r.GVR.GroupResource() }

// GroupVersionKind of the objects of this resource.
func (r *Resource) GroupVersionKind() schema.GroupVersionKind {
	return r.GVR.GroupVersion().WithKind(r.Kind)
}

// String is how the request log names the resource: "pods", "deployments.apps".
func (r *Resource) String() string { return r.GroupResource().String() }

// builtinKind is one line of zz_generated.kinds.go.
type builtinKind struct {
	group, version, resource, kind              string
	namespaced, status, scale, deleteCollection bool
}

// builtinResources are the built-in resources, built once per process
// from builtinKinds, client-go's scheme and strategies; read-only, shared
// by every server.
var builtinResources = sync.OnceValue(func() []*Resource {
	out := make([]*Resource, 0, len(builtinKinds))
	for _, k := range builtinKinds {
		gvr := schema.GroupVersionResource{Group: k.group, Version: k.version, Resource: k.resource}
		r := &Resource{
			GVR: gvr, Kind: k.kind, Namespaced: k.namespaced,
			StatusSubresource: k.status, Scale: k.scale, DeleteCollection: k.deleteCollection,
			strategy: strategies[gvr.GroupResource()],
		}
		r.New = newOf(gvr.GroupVersion().WithKind(k.kind))
		r.NewList = newOf(gvr.GroupVersion().WithKind(k.kind + "List"))
		out = append(out, r)
	}
	return out
})

// newOf makes objects of gvk from Scheme (client-go's types).
func newOf(gvk schema.GroupVersionKind) func() runtime.Object {
	if !Scheme.Recognizes(gvk) {
		panic(fmt.Sprintf("apiserver: Scheme has no %v", gvk)) // zz_generated.kinds.go is wrong
	}
	return func() runtime.Object {
		obj, _ := Scheme.New(gvk)
		return obj
	}
}

// registry is one server's resource table: the built-in resources, and
// room for more at run time. A CustomResourceDefinition would add its
// kind here when it becomes Established and remove it when deleted
// (the store's objects and field managers are made per resource on first
// use, so nothing else needs to know). It is read on every request, so
// under a read lock.
type registry struct {
	mu        sync.RWMutex
	resources []*Resource // in discovery order
	byGVR     map[schema.GroupVersionResource]*Resource
}

func newRegistry() *registry {
	builtin := builtinResources()
	reg := &registry{
		resources: append([]*Resource(nil), builtin...),
		byGVR:     make(map[schema.GroupVersionResource]*Resource, len(builtin)),
	}
	for _, r := range builtin {
		reg.byGVR[r.GVR] = r
	}
	return reg
}

// builtinRegistry serves the built-in resources only, for parsing a
// request's path away from any server (NewRequest).
var builtinRegistry = sync.OnceValue(newRegistry)

// lookup returns the resource served at gvr, or nil.
func (reg *registry) lookup(gvr schema.GroupVersionResource) *Resource {
	reg.mu.RLock()
	defer reg.mu.RUnlock()
	return reg.byGVR[gvr]
}

// all returns the served resources, in discovery order.
func (reg *registry) all() []*Resource {
	reg.mu.RLock()
	defer reg.mu.RUnlock()
	return append([]*Resource(nil), reg.resources...)
}

// add serves r from now on (for kinds defined at run time). It fails if
// its group-version-resource is already served.
func (reg *registry) add(r *Resource) error {
	reg.mu.Lock()
	defer reg.mu.Unlock()
	if _, ok := reg.byGVR[r.GVR]; ok {
		return fmt.Errorf("%v is already served", r.GVR)
	}
	reg.byGVR[r.GVR] = r
	reg.resources = append(reg.resources, r)
	return nil
}

// replace serves r in old's place.
func (reg *registry) replace(old, r *Resource) {
	reg.mu.Lock()
	defer reg.mu.Unlock()
	delete(reg.byGVR, old.GVR)
	reg.byGVR[r.GVR] = r
	for i, x := range reg.resources {
		if x == old {
			reg.resources[i] = r
		}
	}
}

// remove stops serving r.
func (reg *registry) remove(r *Resource) {
	reg.mu.Lock()
	defer reg.mu.Unlock()
	if reg.byGVR[r.GVR] == r {
		delete(reg.byGVR, r.GVR)
	}
	for i, x := range reg.resources {
		if x == r {
			reg.resources = append(reg.resources[:i:i], reg.resources[i+1:]...)
			break
		}
	}
}

// groupVersions returns the served group-versions of group ("" for the
// core group), in discovery order (preferred first).
func (reg *registry) groupVersions(group string) []string {
	seen := map[string]bool{}
	for _, r := range reg.all() {
		if r.GVR.Group == group {
			seen[r.GVR.Version] = true
		}
	}
	var out []string
	for v := range seen {
		out = append(out, v)
	}
	// Discovery's order: the preferred version first (v2, v1, v1beta1...).
	sort.Slice(out, func(i, j int) bool { return version.CompareKubeAwareVersionStrings(out[i], out[j]) > 0 })
	return out
}

// fieldsOf returns every field-selector field of obj: the common metadata
// fields plus the resource's own.
func (r *Resource) fieldsOf(obj runtime.Object) fields.Set {
	m := metaOf(obj)
	set := fields.Set{"metadata.name": m.GetName()}
	if r.Namespaced {
		set["metadata.namespace"] = m.GetNamespace()
	}
	if r.Fields != nil {
		for k, v := range r.Fields(obj) {
			set[k] = v
		}
	}
	return set
}

// convertFieldSelector checks a field selector's labels and maps them to
// the names fieldsOf uses, as kube-apiserver's list handler does with
// the kind's field label conversion; an unsupported label is answered
// 400 with the conversion's message (transcript 09).
func (r *Resource) convertFieldSelector(sel fields.Selector) (fields.Selector, error) {
	if sel == nil || sel.Empty() {
		return sel, nil
	}
	convert := r.FieldLabel
	if convert == nil {
		convert = runtime.DefaultMetaV1FieldSelectorConversion
	}
	return sel.Transform(func(label, value string) (string, string, error) {
		return convert(label, value)
	})
}
