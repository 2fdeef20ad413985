// Package crd serves CustomResourceDefinitions (apiextensions.k8s.io/v1)
// on a workshop cluster: creating a CRD makes its kind served, as
// kube-apiserver's apiextensions-apiserver does, and deleting it stops
// serving it and removes its objects.
//
// It is kept out of internal/apiserver so that the chapters, which never
// meet a CRD, do not compile kube-apiserver's structural-schema code: the
// workshop package and cmd/workshop-cluster turn it on with
// apiserver.Options{Extend: crd.Serve}.
//
// What a custom resource's schema does is kube-apiserver's own code,
// from k8s.io/apiextensions-apiserver: the CRD's validation
// (pkg/apis/apiextensions/validation, which also compiles the CEL rules
// and refuses what does not compile or costs too much, transcript 96),
// the structural schema (pkg/apiserver/schema NewStructural), pruning
// (schema/pruning) and defaulting (schema/defaulting) as an object is
// read, openAPIV3Schema validation (pkg/apiserver/validation
// NewSchemaValidator), CEL x-kubernetes-validations (schema/cel
// NewValidator and Validate, with oldSelf on update and the runtime cost
// budget, transcripts 99, 100), ratcheting of unchanged invalid fields
// on update (the correlated objects of apiserver/pkg/cel/common, as the
// customresource strategy builds them, transcript 102), and a CRD's
// converter (pkg/apiserver/conversion: field labels, for strategy None
// the nopConverter, for Webhook the webhookConverter, which POSTs
// ConversionReviews to the CRD's conversion webhook: versions.go).
// Errors are kube-apiserver's 422 with field paths. What this package writes itself is what apiextensions-apiserver
// keeps in packages that need etcd (its registry and controllers): the
// strategy's order of validations, the CRD's conditions, the scale
// subresource's checks, selectable fields' values and the table
// columns, each beside the upstream function it copies.
//
// Transcripts 96-105 are in testdata/realk8s, recorded on kube-apiserver
// v1.37.2 by testdata/record.sh; the others are internal/apiserver's.
//
// Every served version of a CRD reads and writes one storage, as in
// kube-apiserver (versions.go): objects are kept in the storage
// version, a version's requests are pruned, defaulted and validated
// with its own schema, discovery lists every served version (preferred
// first by kube-aware version order) with the storage version's hash
// (transcripts 98, 103). Field selectors name a version's
// selectableFields (transcript 104).
//
// A conversion webhook is reached at its clientConfig.url; a
// clientConfig.service is resolved as kube-apiserver's default resolver
// does, to https://NAME.NAMESPACE.svc:PORT, which only a machine whose
// DNS knows that name reaches (envtest has the same limit; its
// InstallCRDs writes a url on loopback). What it is sent, and what a
// client is answered when it refuses, are transcripts 135-136c
// (conversion_test.go, recorded on kube-apiserver v1.37.2): a get that
// cannot convert is the etcd store's 500 "corrupt object", a write is
// refused with a 500 whose message is the converter's error. Where the
// workshop cluster differs: kube-apiserver answers a list (136b) and a
// watch from its watch cache, which holds each object as converted when
// it was written, so while the webhook is down a list still answers and
// a watch is not sent the error (the cache's own etcd watch meets it,
// and k8s.io/apiserver's cacher.go ends the cache's watches when it
// starts the cache again, startCaching); the
// workshop cluster converts as it reads, so a list is refused as a
// write is, and a watch ends at once with an ERROR event (what
// kube-apiserver's etcd watcher sends without the cache). It calls the
// webhook with its store locked, one object per ConversionReview, and
// reads managedFields of another version as the nopConverter does (not
// through the webhook, as kube-apiserver's field manager would).
//
// Not built: the 429 "storage is
// (re)initializing" a watch meets right after a CRD is established
// (transcript 89a; here the kind is ready at once). On kube-apiserver it
// lasts while the new resource's watch cache starts, so whether a watch
// meets it depends on timing (89b, seconds later, does not), and
// client-go's Watch retries it after its Retry-After of 1 s without its
// caller seeing it
// (https://github.com/kubernetes/client-go/blob/v0.37.2/rest/request.go#L805,
// rest/with_retry.go#L309): copied, it would only add a second to every
// test that installs a CRD. A test that wants the 429 can have its client
// make it (internal/cluster's client faults). Not built: protobuf for
// custom resources; a custom resource's managedFields use a type
// converter deduced from the object, not from the CRD's schema (lists
// are atomic whatever their x-kubernetes-list-type); the metrics
// kube-apiserver keeps of CEL and ratcheting. An Established CRD's kind
// is in aggregated discovery (transcript 83) as in the legacy
// documents: the server lists every served resource.
package crd

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"time"

	apiextensionsinternal "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsvalidation "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation"
	"k8s.io/apiextensions-apiserver/pkg/client/applyconfiguration"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/informer-walkthrough/informer-walkthrough/internal/apiserver"
)

// The CRD's Go types join the workshop cluster's scheme (the one it
// encodes and decodes with), not client-go's global one: a program that
// serves CRDs on a workshop cluster keeps its own scheme as it was.
func init() { utilruntime.Must(apiextensionsv1.AddToScheme(apiserver.Scheme)) }

// crdTypeConverter knows the CRD kind's schema (for managedFields).
var crdTypeConverter = applyconfiguration.NewTypeConverter(apiserver.Scheme)

// internalScheme converts CRDs to the internal version that
// apiextensions-apiserver's validation reads.
var internalScheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(apiextensionsinternal.AddToScheme(s))
	utilruntime.Must(apiextensionsv1.AddToScheme(s))
	return s
}()

// GVR is where CustomResourceDefinitions are served.
var GVR = apiextensionsv1.SchemeGroupVersion.WithResource("customresourcedefinitions")

// Serve makes s serve CustomResourceDefinitions; pass it as
// apiserver.Options.Extend.
func Serve(s *apiserver.Server) error {
	h := &handler{served: map[string]*served{}}
	return s.Serve(h.resource())
}

// handler is one server's CRDs: what each serves.
type handler struct {
	served map[string]*served // by CRD name
}

// served is what one CRD makes served: a resource per served version.
type served struct {
	generation int64
	resources  []*apiserver.Resource
}

func (h *handler) resource() *apiserver.Resource {
	gvk := apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition")
	r := &apiserver.Resource{
		GVR: GVR, Kind: gvk.Kind,
		New:               func() runtime.Object { return &apiextensionsv1.CustomResourceDefinition{} },
		NewList:           func() runtime.Object { return &apiextensionsv1.CustomResourceDefinitionList{} },
		StatusSubresource: true, DeleteCollection: true,
	}
	r.ShortNames = []string{"crd", "crds"}
	// kube-apiserver prints CRDs with its default TableConvertor
	// (apiserver pkg/registry/rest/table.go): Name and Created At.
	meta := metav1.ObjectMeta{}.SwaggerDoc()
	r.Table = apiserver.NewTable([]metav1.TableColumnDefinition{
		{Name: "Name", Type: "string", Format: "name", Description: meta["name"]},
		{Name: "Created At", Type: "date", Description: meta["creationTimestamp"]},
	}, func(obj runtime.Object, _ func(metav1.Time) string) []any {
		m := obj.(*apiextensionsv1.CustomResourceDefinition)
		return []any{m.Name, m.CreationTimestamp.UTC().Format(time.RFC3339)}
	})
	r.Generation = true
	// apiextensions-apiserver's strategy.PrepareForCreate: the status is
	// the server's; storedVersions starts with the storage version.
	r.ResetStatusOnCreate = true
	r.Default = func(obj runtime.Object, _ metav1.Time) { apiserver.Scheme.Default(obj) }
	r.PrepareForCreate = func(obj runtime.Object, _ metav1.Time) {
		setStoredVersions(obj.(*apiextensionsv1.CustomResourceDefinition))
	}
	r.Hooks = &apiserver.Hooks{
		Validate: validateCRD,
		// The CRD's own schema, from apiextensions' apply configurations.
		NewFieldManager: fieldManagerFor(crdTypeConverter, gvk, apiserver.Scheme, apiserver.Scheme, apiserver.Scheme, "status"),
		Prepare:         h.prepare,
		Delete:          h.delete,
	}
	return r
}

func setStoredVersions(crd *apiextensionsv1.CustomResourceDefinition) {
	for _, v := range crd.Spec.Versions {
		if v.Storage {
			crd.Status.StoredVersions = []string{v.Name}
		}
	}
}

// toInternal converts a CRD to apiextensions-apiserver's internal version.
func toInternal(crd *apiextensionsv1.CustomResourceDefinition) (*apiextensionsinternal.CustomResourceDefinition, error) {
	out := &apiextensionsinternal.CustomResourceDefinition{}
	if err := internalScheme.Convert(crd, out, nil); err != nil {
		return nil, err
	}
	return out, nil
}

// validateCRD is apiextensions-apiserver's strategy Validate and
// ValidateUpdate (registry/customresourcedefinition/strategy.go), with
// its own validation functions.
func validateCRD(obj, old runtime.Object, subresource string) field.ErrorList {
	// What will be stored: the store validates before it defaults, and
	// upstream's PrepareForCreate sets storedVersions before Validate.
	v1 := obj.(*apiextensionsv1.CustomResourceDefinition).DeepCopy()
	apiserver.Scheme.Default(v1)
	if old == nil {
		setStoredVersions(v1)
	}
	crd, err := toInternal(v1)
	if err != nil {
		return field.ErrorList{field.InternalError(nil, err)}
	}
	ctx := context.Background()
	var errs field.ErrorList
	switch {
	case old == nil:
		errs = apiextensionsvalidation.ValidateCustomResourceDefinition(ctx, crd)
	case subresource == "status":
		oldCRD, err := toInternal(old.(*apiextensionsv1.CustomResourceDefinition))
		if err != nil {
			return field.ErrorList{field.InternalError(nil, err)}
		}
		return apiextensionsvalidation.ValidateUpdateCustomResourceDefinitionStatus(ctx, crd, oldCRD)
	default:
		oldCRD, err := toInternal(old.(*apiextensionsv1.CustomResourceDefinition))
		if err != nil {
			return field.ErrorList{field.InternalError(nil, err)}
		}
		errs = apiextensionsvalidation.ValidateCustomResourceDefinitionUpdate(ctx, crd, oldCRD)
	}
	return errs
}

// prepare is what apiextensions-apiserver's controllers do after a CRD
// changes, done at once: the naming controller accepts the names
// (NamesAccepted, then Established False "Installing"), the CRD's kind
// is served, and the establishing controller marks it Established
// (transcript 81). A later change of the spec serves the kind anew.
//
// What may fail is done before the CRD is stored, so that a failure
// refuses the write and leaves nothing behind: the resources its served
// versions make (structural schema, printer columns) and their place
// among those served. What it returns, run once the CRD is stored,
// writes the conditions and serves what was built.
func (h *handler) prepare(tx apiserver.Tx, typ watch.EventType, obj runtime.Object) (func(apiserver.Tx, runtime.Object), error) {
	crd := obj.(*apiextensionsv1.CustomResourceDefinition)
	if typ == watch.Deleted || crd.DeletionTimestamp != nil {
		return nil, nil
	}
	var next *served
	accepted := isTrue(condition(crd, apiextensionsv1.NamesAccepted))
	// Names in conflict are not accepted and nothing is served (settle
	// says why); accepted names, or names about to be, are served at
	// this generation.
	if sv := h.served[crd.Name]; (accepted || h.conflict(tx, crd) == "") && (sv == nil || sv.generation != crd.Generation) {
		var err error
		if next, err = h.build(tx, crd); err != nil {
			return nil, err
		}
	}
	return func(tx apiserver.Tx, obj runtime.Object) {
		if err := h.settle(tx, obj.(*apiextensionsv1.CustomResourceDefinition), next); err != nil {
			// A controller's error, not the write's: the CRD is stored.
			utilruntime.HandleError(fmt.Errorf("CustomResourceDefinition %s: %w", crd.Name, err))
		}
	}, nil
}

func isTrue(c *apiextensionsv1.CustomResourceDefinitionCondition) bool {
	return c != nil && c.Status == apiextensionsv1.ConditionTrue
}

// settle writes the stored crd's conditions and serves next, which
// prepare built (nil: nothing new to serve). Each status write is a
// change of the CRD, prepared and settled in turn.
func (h *handler) settle(tx apiserver.Tx, crd *apiextensionsv1.CustomResourceDefinition, next *served) error {
	now := tx.Now()
	crdRes := tx.Lookup(GVR)
	if names := condition(crd, apiextensionsv1.NamesAccepted); !isTrue(names) {
		upd := crd.DeepCopy()
		if msg := h.conflict(tx, crd); msg != "" {
			if names != nil && names.Status == apiextensionsv1.ConditionFalse && names.Message == msg {
				return nil
			}
			setCondition(upd, apiextensionsv1.CustomResourceDefinitionCondition{
				Type: apiextensionsv1.NamesAccepted, Status: apiextensionsv1.ConditionFalse,
				Reason: "PluralConflict", Message: msg, LastTransitionTime: now,
			})
			_, err := tx.Update(crdRes, upd, "status", "kube-apiserver")
			return err
		}
		upd.Status.AcceptedNames = crd.Spec.Names
		setCondition(upd, apiextensionsv1.CustomResourceDefinitionCondition{
			Type: apiextensionsv1.NamesAccepted, Status: apiextensionsv1.ConditionTrue,
			Reason: "NoConflicts", Message: "no conflicts found", LastTransitionTime: now,
		})
		if condition(upd, apiextensionsv1.Established) == nil {
			setCondition(upd, apiextensionsv1.CustomResourceDefinitionCondition{
				Type: apiextensionsv1.Established, Status: apiextensionsv1.ConditionFalse,
				Reason: "Installing", Message: "the initial names have been accepted", LastTransitionTime: now,
			})
		}
		_, err := tx.Update(crdRes, upd, "status", "kube-apiserver")
		return err
	}
	if next != nil {
		h.serve(tx, crd, next)
	}
	if !isTrue(condition(crd, apiextensionsv1.Established)) {
		upd := crd.DeepCopy()
		setCondition(upd, apiextensionsv1.CustomResourceDefinitionCondition{
			Type: apiextensionsv1.Established, Status: apiextensionsv1.ConditionTrue,
			Reason: "InitialNamesAccepted", Message: "the initial names have been accepted", LastTransitionTime: now,
		})
		_, err := tx.Update(crdRes, upd, "status", "kube-apiserver")
		return err
	}
	return nil
}

// conflict is the naming controller's check: a plural already served in
// the group by something else.
func (h *handler) conflict(tx apiserver.Tx, crd *apiextensionsv1.CustomResourceDefinition) string {
	mine := map[*apiserver.Resource]bool{}
	if sv := h.served[crd.Name]; sv != nil {
		for _, r := range sv.resources {
			mine[r] = true
		}
	}
	for _, v := range crd.Spec.Versions {
		gvr := schema.GroupVersionResource{Group: crd.Spec.Group, Version: v.Name, Resource: crd.Spec.Names.Plural}
		if r := tx.Lookup(gvr); r != nil && !mine[r] {
			return fmt.Sprintf("%q is already in use", crd.Spec.Names.Plural)
		}
	}
	return ""
}

// build makes the resources crd's served versions serve, without serving
// them. Names once accepted are not checked again (as the naming
// controller keeps them), so a version that would take the place of a
// resource served by something else is refused here: kube-apiserver
// would route its requests to the built-in one, this server cannot
// serve both.
func (h *handler) build(tx apiserver.Tx, crd *apiextensionsv1.CustomResourceDefinition) (*served, error) {
	mine := map[*apiserver.Resource]bool{}
	if sv := h.served[crd.Name]; sv != nil {
		for _, r := range sv.resources {
			mine[r] = true
		}
	}
	next := &served{generation: crd.Generation}
	st, err := newStorage(crd)
	if err != nil {
		return nil, err
	}
	for i, v := range crd.Spec.Versions {
		if !v.Served {
			continue
		}
		r, err := customResource(crd, v, st)
		if err != nil {
			return nil, err
		}
		if other := tx.Lookup(r.GVR); other != nil && !mine[other] {
			return nil, apierrors.NewInvalid(apiextensionsv1.Kind("CustomResourceDefinition"), crd.Name, field.ErrorList{
				field.Forbidden(field.NewPath("spec", "versions").Index(i).Child("name"),
					fmt.Sprintf("the workshop cluster already serves %s", r.GVR)),
			})
		}
		next.resources = append(next.resources, r)
	}
	return next, nil
}

// serve serves next, which build made for crd, in place of what crd
// served before. build checked each resource's place, under the same
// lock: serving cannot fail.
func (h *handler) serve(tx apiserver.Tx, crd *apiextensionsv1.CustomResourceDefinition, next *served) {
	old := map[schema.GroupVersionResource]*apiserver.Resource{}
	if sv := h.served[crd.Name]; sv != nil {
		for _, r := range sv.resources {
			old[r.GVR] = r
		}
	}
	for _, r := range next.resources {
		if err := tx.Serve(r, old[r.GVR]); err != nil {
			utilruntime.HandleError(fmt.Errorf("CustomResourceDefinition %s: %w", crd.Name, err))
		}
		delete(old, r.GVR)
	}
	for _, r := range old { // versions no longer served
		if err := tx.Unserve(r); err != nil {
			utilruntime.HandleError(fmt.Errorf("CustomResourceDefinition %s: %w", crd.Name, err))
		}
	}
	h.served[crd.Name] = next
}

// delete is apiextensions-apiserver's CRD delete
// (registry/customresourcedefinition/etcd.go) and its finalizer
// controller, done at once: the CRD is marked for deletion with the
// customresourcecleanup finalizer and a Terminating condition (the
// DELETE's answer, transcript 90), every object of its kind is deleted,
// the kind stops being served, and the CRD goes. A dry run answers the
// marked CRD and changes nothing, as the registry's Delete passes dryRun
// to its GuaranteedUpdate.
func (h *handler) delete(tx apiserver.Tx, obj runtime.Object) (runtime.Object, error) {
	crd := obj.(*apiextensionsv1.CustomResourceDefinition)
	res := tx.Lookup(GVR)
	now := tx.Now()
	crd.DeletionTimestamp = &now
	crd.Finalizers = append(crd.Finalizers, apiextensionsv1.CustomResourceCleanupFinalizer)
	setCondition(crd, apiextensionsv1.CustomResourceDefinitionCondition{
		Type: apiextensionsv1.Terminating, Status: apiextensionsv1.ConditionTrue, LastTransitionTime: now,
		Reason: "InstanceDeletionPending", Message: "CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon",
	})
	if err := tx.Commit(res, watch.Modified, crd); err != nil {
		return nil, err
	}
	answer := crd.DeepCopy()
	if tx.DryRun() {
		return answer, nil
	}
	if sv := h.served[crd.Name]; sv != nil {
		for _, r := range sv.resources {
			if err := tx.Unserve(r); err != nil {
				return nil, err
			}
		}
		delete(h.served, crd.Name)
	}
	if err := tx.Commit(res, watch.Deleted, crd.DeepCopy()); err != nil {
		return nil, err
	}
	return answer, nil
}

func condition(crd *apiextensionsv1.CustomResourceDefinition, typ apiextensionsv1.CustomResourceDefinitionConditionType) *apiextensionsv1.CustomResourceDefinitionCondition {
	for i := range crd.Status.Conditions {
		if crd.Status.Conditions[i].Type == typ {
			return &crd.Status.Conditions[i]
		}
	}
	return nil
}

// setCondition is apiextensions' helper SetCRDCondition: the transition
// time changes only when the status does.
func setCondition(crd *apiextensionsv1.CustomResourceDefinition, c apiextensionsv1.CustomResourceDefinitionCondition) {
	if cur := condition(crd, c.Type); cur != nil {
		if cur.Status == c.Status {
			c.LastTransitionTime = cur.LastTransitionTime
		}
		*cur = c
		return
	}
	crd.Status.Conditions = append(crd.Status.Conditions, c)
}

// customResource is the resource one served version of crd makes: its
// objects are unstructured, read through the version's structural
// schema.
func customResource(crd *apiextensionsv1.CustomResourceDefinition, v apiextensionsv1.CustomResourceDefinitionVersion, st *storage) (*apiserver.Resource, error) {
	gvk := schema.GroupVersionKind{Group: crd.Spec.Group, Version: v.Name, Kind: crd.Spec.Names.Kind}
	listGVK := gvk.GroupVersion().WithKind(crd.Spec.Names.ListKind)
	r := &apiserver.Resource{
		GVR:        gvk.GroupVersion().WithResource(crd.Spec.Names.Plural),
		Kind:       gvk.Kind,
		Namespaced: crd.Spec.Scope == apiextensionsv1.NamespaceScoped,
		New: func() runtime.Object {
			u := &unstructured.Unstructured{Object: map[string]any{}}
			u.SetGroupVersionKind(gvk)
			return u
		},
		NewList: func() runtime.Object {
			l := &unstructured.UnstructuredList{Object: map[string]any{}}
			l.SetGroupVersionKind(listGVK)
			return l
		},
		DeleteCollection: true,
	}
	r.ShortNames = crd.Spec.Names.ShortNames
	r.Generation = true
	var scale *apiextensionsv1.CustomResourceSubresourceScale
	if v.Subresources != nil {
		r.StatusSubresource = v.Subresources.Status != nil
		r.ResetStatusOnCreate = r.StatusSubresource
		if scale = v.Subresources.Scale; scale != nil {
			r.Scale = true
		}
	}
	s := st.schemas[v.Name]
	columns, cells, err := table(v.AdditionalPrinterColumns)
	if err != nil {
		return nil, err
	}
	r.Table = apiserver.NewTable(columns, cells)
	var resetFields []string
	if r.StatusSubresource {
		resetFields = []string{"status"}
	}
	r.Hooks = &apiserver.Hooks{
		Decoded:         s.decoded,
		Validate:        s.validate(r.StatusSubresource, scale),
		NewFieldManager: fieldManagerFor(managedfields.NewDeducedTypeConverter(), gvk, unstructuredConverter{}, s, unstructuredCreater{}, resetFields...),
		// apiextensions-apiserver's discovery lists these in this order
		// (transcript 82).
		Verbs:               metav1.Verbs{"delete", "deletecollection", "get", "list", "patch", "create", "update", "watch"},
		SubresourceNotFound: true,
	}
	// One storage per CRD, named by the CRD, whatever resources serve
	// it: its objects and history outlive a change of the CRD's spec,
	// which makes new resources (a watch or an exact list from before
	// the change reads the history written through the old ones).
	r.Hooks.Storage = st.key
	if len(crd.Spec.Versions) > 1 {
		// One storage for every version, as kube-apiserver's: each
		// reads and writes it through the CRD's converter.
		r.Hooks.StorageVersion = st.version
		r.Hooks.ToStorage = func(obj runtime.Object) (runtime.Object, error) { return st.convert(obj, v.Name, st.version) }
		r.Hooks.FromStorage = func(obj runtime.Object) (runtime.Object, error) { return st.convert(obj, st.version, v.Name) }
	}
	r.Fields, r.FieldLabel = selectableFields(gvk, v.SelectableFields, st.converter)
	if scale != nil {
		r.Hooks.ScaleReplicas = &apiserver.ScalePaths{Spec: scale.SpecReplicasPath, Status: scale.StatusReplicasPath, SpecByVersion: map[string]string{}}
		for _, other := range crd.Spec.Versions {
			// apiextensions-apiserver's replicasPathInCustomResource
			// (pkg/apiserver/customresource_handler.go): every version,
			// served or not.
			p := ""
			if other.Subresources != nil && other.Subresources.Scale != nil {
				p = other.Subresources.Scale.SpecReplicasPath
			}
			r.Hooks.ScaleReplicas.SpecByVersion[schema.GroupVersion{Group: crd.Spec.Group, Version: other.Name}.String()] = p
		}
		if scale.LabelSelectorPath != nil {
			r.Hooks.ScaleReplicas.LabelSelector = *scale.LabelSelectorPath
		}
	}
	return r, nil
}

// unstructuredCreater makes empty custom resources (apiextensions-apiserver's
// unstructuredCreator).
type unstructuredCreater struct{}

func (unstructuredCreater) New(gvk schema.GroupVersionKind) (runtime.Object, error) {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	u.SetGroupVersionKind(gvk)
	return u, nil
}

// unstructuredConverter is the field manager's converter: under
// conversion strategy None, apiextensions-apiserver's nopConverter only
// rewrites apiVersion, and so does this (a managedFields entry of
// another version is read as it is).
type unstructuredConverter struct{}

func (unstructuredConverter) Convert(in, out, context any) error {
	reflect.ValueOf(out).Elem().Set(reflect.ValueOf(in).Elem())
	return nil
}

func (unstructuredConverter) ConvertToVersion(in runtime.Object, gv runtime.GroupVersioner) (runtime.Object, error) {
	kind := in.GetObjectKind().GroupVersionKind()
	if target, ok := gv.KindForGroupVersionKinds([]schema.GroupVersionKind{kind}); ok {
		out := in.DeepCopyObject()
		out.GetObjectKind().SetGroupVersionKind(target)
		return out, nil
	}
	return in, nil
}

func (unstructuredConverter) ConvertFieldLabel(gvk schema.GroupVersionKind, label, value string) (string, string, error) {
	return runtime.DefaultMetaV1FieldSelectorConversion(label, value)
}

// splitPath turns ".spec.replicas" into its fields.
func splitPath(p string) []string { return strings.Split(strings.TrimPrefix(p, "."), ".") }
