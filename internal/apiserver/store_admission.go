package apiserver

import "k8s.io/apimachinery/pkg/runtime"

// Admission's place in the write path, beside the store. kube-apiserver
// runs every create, update and delete as
//
//  1. mutating admission (the handler's admit,
//     k8s.io/apiserver pkg/endpoints/handlers/create.go, update.go,
//     delete.go: built-in plugins such as NamespaceLifecycle, then
//     mutating webhooks and policies);
//  2. the kind's validation (its strategy's Validate or ValidateUpdate,
//     called by rest.BeforeCreate and rest.BeforeUpdate in
//     registry/generic/registry/store.go);
//  3. validating admission (the createValidation, updateValidation and
//     deleteValidation that store.go's Create, Update and Delete call:
//     validating webhooks and policies);
//  4. storage.
//
// The store calls mutatingAdmission and validatingAdmission at those
// points of create, update and delete (each call marked "Admission:" in
// store.go), with the store locked: the built-in plugins the workshop
// cluster runs, listed below. Beside each, it calls the webhooks and
// admission policies (admission.go, and package
// internal/apiserver/admission, kube-apiserver's own plugins, linked
// only by a server started with Options.Admission), after the built-in
// plugins, as kube-apiserver's plugin order puts them last.
//
// Where the workshop cluster's order differs from kube-apiserver's: a
// kind's defaults (strategy.Default, which kube-apiserver applies when it
// decodes the request) and the create strategy's and built-in plugins'
// additions that record no owner in managedFields (strategy.Admit) run
// after the kind's create validation, before validating admission.

// admissionAttributes is what admission knows of one write, as
// k8s.io/apiserver's admission.Attributes: the operation, the resource
// and subresource, the object's namespace and name, the object as it
// would be written (nil for a delete) and the one stored (nil for a
// create), and whether the write is a dry run.
type admissionAttributes struct {
	Operation       admissionOperation
	Resource        *Resource
	Subresource     string
	Namespace, Name string
	Object, Old     runtime.Object
	DryRun          bool
}

// admissionOperation is admission.Operation's CREATE, UPDATE or DELETE.
type admissionOperation string

const (
	admissionCreate admissionOperation = "CREATE"
	admissionUpdate admissionOperation = "UPDATE"
	admissionDelete admissionOperation = "DELETE"
)

// An admissionPlugin admits a write or refuses it with the error the
// client gets; a mutating one may change a.Object.
type admissionPlugin func(s *store, a admissionAttributes) error

// mutatingAdmissionPlugins are the built-in mutating plugins the
// workshop cluster runs, in kube-apiserver's order (its
// --enable-admission-plugins defaults, k8s.io/kubernetes
// pkg/kubeapiserver/options/plugins.go). The others a pod's create meets
// (ServiceAccount, DefaultTolerationSeconds, Priority) and
// TaintNodesByCondition act as the kind's strategy.Admit
// (registry_core_pods.go, registry_core.go).
var mutatingAdmissionPlugins = []admissionPlugin{
	namespaceLifecycle, // registry_core.go
}

// validatingAdmissionPlugins are the built-in validating plugins the
// workshop cluster runs: none yet.
var validatingAdmissionPlugins []admissionPlugin

// mutatingAdmission is step 1: each mutating plugin in turn; the first
// refusal is the answer.
func (s *store) mutatingAdmission(a admissionAttributes) error {
	for _, admit := range mutatingAdmissionPlugins {
		if err := admit(s, a); err != nil {
			return err
		}
	}
	return nil
}

// validatingAdmission is step 3: each validating plugin; the first
// refusal is the answer.
func (s *store) validatingAdmission(a admissionAttributes) error {
	for _, validate := range validatingAdmissionPlugins {
		if err := validate(s, a); err != nil {
			return err
		}
	}
	return nil
}
