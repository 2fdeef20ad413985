package apiserver

import (
	"fmt"
	"sort"
	"sync"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/version"
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
//   - Their differences: one [strategy] per kind (strategies.go), in its
//     group's registry_<group>.go beside the upstream strategy it copies
//     (defaults, what the create strategy and admission add, generation,
//     status reset, allocation, validation, field selectors, printer
//     columns).
//
// The store, the watch fan-out and the HTTP layer are generic: the kinds'
// own code is in the registry files, and in the files of the
// subresources only some kinds have (podsubresources.go, token.go).

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

	// strategy is what this kind does differently (strategies.go, and
	// the kind's registry_<group>.go).
	strategy
}

// GroupResource is what Status errors name ("pods", "deployments.apps").
func (r *Resource) GroupResource() schema.GroupResource { return r.GVR.GroupResource() }

// GroupVersionKind of the objects of this resource.
func (r *Resource) GroupVersionKind() schema.GroupVersionKind {
	return r.GVR.GroupVersion().WithKind(r.Kind)
}

// String is how the request log names the resource: "pods", "deployments.apps".
func (r *Resource) String() string { return r.GroupResource().String() }

// builtinKind is one line of zz_generated.kinds.go, as openapi/gen.go
// reads it from kube-apiserver's OpenAPI document of the group-version.
type builtinKind struct {
	group, version, resource, kind string // "" is the core group
	namespaced                     bool   // its paths are under /namespaces/{namespace}/
	status, scale                  bool   // it has the status, the scale subresource
	deleteCollection               bool   // its collection path takes a DELETE
}

// builtinResources are the built-in resources, built once per process
// from builtinKinds, client-go's scheme and strategies; read-only, shared
// by every server.
var builtinResources = sync.OnceValue(func() []*Resource {
	out := make([]*Resource, 0, len(builtinKinds))
	for _, k := range builtinKinds {
		out = append(out, resourceOf(k, strategies))
	}
	return out
})

// resourceOf is the built-in resource of row k, with its strategy.
func resourceOf(k builtinKind, strategies map[schema.GroupResource]strategy) *Resource {
	gvr := schema.GroupVersionResource{Group: k.group, Version: k.version, Resource: k.resource}
	r := &Resource{
		GVR: gvr, Kind: k.kind, Namespaced: k.namespaced,
		StatusSubresource: k.status, Scale: k.scale, DeleteCollection: k.deleteCollection,
		strategy: strategies[gvr.GroupResource()],
	}
	r.New = newOf(gvr.GroupVersion().WithKind(k.kind))
	r.NewList = newOf(gvr.GroupVersion().WithKind(k.kind + "List"))
	return r
}

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
