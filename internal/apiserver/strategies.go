package apiserver

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// strategy is what one kind does differently from the generic store: the
// few rules kube-apiserver's strategy for the kind (its
// pkg/registry/<group>/<kind>/strategy.go), its defaulting functions
// (pkg/apis/<group>/v1/defaults.go) and its admission plugins add. The
// zero strategy is a plain stored object: a Lease.
//
// The store (store.go) calls its hooks at fixed points, as
// registry/generic/registry/store.go calls a rest.RESTCreateStrategy's:
//
//   - create, as kube-apiserver's create handler and Store.Create: Default
//     (the decoder's); the managedFields; mutating admission
//     (store_admission.go); the name generated; ResetStatusOnCreate,
//     Generation and PrepareForCreate (rest.BeforeCreate); the name's
//     validation, ValidateObject and Validate; validating admission;
//     storage (Allocate, then the object stored); AfterCreate.
//   - update, as the update handler and Store.Update: mutating admission,
//     on the object as sent; the resourceVersion's precondition;
//     PrepareStatusUpdate or Approval (a subresource's write),
//     PrepareForUpdate (the object's), Generation (rest.BeforeUpdate);
//     ValidateObject; ValidateUpdate; validating admission; storage.
//   - delete: mutating and validating admission; PrepareForDelete as
//     deletion starts; GracefulDelete or DeleteContents for how it ends.
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
	// defaulting functions, which its decoder runs). They run before
	// managedFields are recorded, so the writer owns them, and before
	// admission, so webhooks see them.
	Default func(obj runtime.Object, now metav1.Time)
	// PrepareForCreate is the kind's create strategy's PrepareForCreate
	// (and what its Validate adds: a Job's selector): the initial
	// status, the server's own fields. It runs after mutating admission,
	// on the object with its name and uid, before the validation;
	// kube-apiserver records no owner for what it sets. What built-in
	// admission plugins add (a pod's tolerations, priority and service
	// account, a node's taint) is theirs, in store_admission.go's
	// mutatingAdmissionPlugins.
	PrepareForCreate func(obj runtime.Object, now metav1.Time)
	// Allocate takes what the kind holds of a shared range (a Service's
	// cluster IP and node ports) from what the stored objects already
	// hold; it runs last on create, with the store locked.
	Allocate func(s *store, obj runtime.Object) error

	// AfterCreate is what follows a create of the kind, in the same
	// write (the store is locked): registry.Store's AfterCreate, or a
	// controller whose work the workshop cluster does at once (a
	// namespace's default ServiceAccount).
	AfterCreate func(s *store, obj runtime.Object) error
	// PrepareForDelete is what the kind changes in the object when its
	// deletion starts, beside deletionTimestamp (a Namespace's phase
	// Terminating).
	PrepareForDelete func(obj runtime.Object)
	// DeleteContents: the kind's deletion is its controller's, done at
	// once when no finalizer holds the object: it is marked deleted
	// (MODIFIED), DeleteContents runs (the namespace controller deletes
	// what the namespace holds), then it is removed (DELETED) and the
	// DELETE answers the object. Such a kind takes no garbage collector
	// finalizer for a propagation policy.
	DeleteContents func(s *store, obj runtime.Object) error

	// PrepareForUpdate adjusts what a PUT or PATCH of the object (not a
	// subresource) sends before it is validated: what kube-apiserver's
	// decoding does to every write (a Secret's stringData folded into
	// data, its type defaulted).
	PrepareForUpdate func(next, old runtime.Object)
	// ValidateObject is the kind's validation of what every write of
	// the object must hold (a pod spec's containers,
	// validatePodSpecAt), run on create and update as the strategy's
	// Validate and ValidateUpdate begin, on the object mutating
	// admission and the strategy have prepared. Its errors are answered
	// 422.
	ValidateObject func(obj runtime.Object) field.ErrorList
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

// strategies are what each kind does differently from the generic
// store, keyed by group and resource, gathered from the groups' files
// (registry_<group>.go, each with its map of strategies); a kind with no
// entry is stored as it is sent. Each entry names the upstream code it
// copies, under https://github.com/kubernetes/kubernetes/blob/v1.37.2/:
// pkg/registry/<group>/<kind>/strategy.go (PrepareForCreate, generation,
// GetAttrs), pkg/apis/<group>/v1/defaults.go and conversion.go (defaults,
// field label conversion) and plugin/pkg/admission.
var strategies = strategiesOf(
	coreStrategies,
	podStrategies,
	serviceStrategies,
	appsStrategies,
	eventsStrategies,
	autoscalingStrategies,
	batchStrategies,
	networkingStrategies,
	policyStrategies,
	storageStrategies,
	certificatesStrategies,
	admissionregistrationStrategies,
	schedulingStrategies,
	coordinationStrategies,
	rbacStrategies,
	discoveryStrategies,
)

// strategiesOf gathers the groups' strategies into one map. A kind named
// twice is a mistake in the tables, found when the package loads.
func strategiesOf(groups ...map[schema.GroupResource]strategy) map[schema.GroupResource]strategy {
	out := map[schema.GroupResource]strategy{}
	for _, g := range groups {
		for gr, st := range g {
			if _, dup := out[gr]; dup {
				panic(fmt.Sprintf("apiserver: two strategies for %v", gr))
			}
			out[gr] = st
		}
	}
	return out
}

// fieldLabels is a field label conversion that accepts labels as they
// are and words its refusal as kube-apiserver's core/v1 conversions do.
func fieldLabels(supported ...string) func(label, value string) (string, string, error) {
	return func(label, value string) (string, string, error) {
		for _, s := range supported {
			if label == s {
				return label, value, nil
			}
		}
		return "", "", fmt.Errorf("field label not supported: %s", label)
	}
}

// immutableFields words the refusals of a write to an object that was
// immutable: immutable itself unset, then each changed field, in order.
func immutableFields(immutable *bool, changed map[string]bool, order ...string) field.ErrorList {
	const msg = "field is immutable when `immutable` is set"
	var errs field.ErrorList
	if !ptr.Deref(immutable, false) {
		errs = append(errs, field.Forbidden(field.NewPath("immutable"), msg))
	}
	for _, f := range order {
		if changed[f] {
			errs = append(errs, field.Forbidden(field.NewPath(f), msg))
		}
	}
	return errs
}
