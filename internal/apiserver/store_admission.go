package apiserver

import "k8s.io/apimachinery/pkg/runtime"

// Admission's place in the write path, beside the store. kube-apiserver
// runs a create as
//
//  1. the handler (k8s.io/apiserver pkg/endpoints/handlers/create.go):
//     the body decoded, with the kind's defaults (strategy.Default), the
//     request's namespace checked against the object's (400), the
//     managedFields recorded;
//  2. mutating admission (the handler's admit, in kube-apiserver's
//     plugin order, k8s.io/kubernetes pkg/kubeapiserver/options/plugins.go:
//     built-in plugins such as NamespaceLifecycle, ServiceAccount,
//     TaintNodesByCondition, Priority, DefaultTolerationSeconds, then
//     mutating admission policies and webhooks);
//  3. registry/generic/registry/store.go's Create: the uid and
//     creationTimestamp, the name made from generateName, then
//     rest.BeforeCreate (pkg/registry/rest/create.go): the create
//     strategy's PrepareForCreate (strategy.PrepareForCreate), and the
//     kind's validation (422);
//  4. validating admission (the createValidation Store.Create calls:
//     built-in validating plugins, then validating policies and
//     webhooks);
//  5. storage (409 AlreadyExists).
//
// An update (update.go, Store.Update) is the same: mutating admission
// on the object as sent, then the resourceVersion's precondition (409),
// rest.BeforeUpdate (the update strategy's PrepareForUpdate, then
// ValidateUpdate, 422), validating admission, storage. A delete
// (delete.go, Store.Delete): mutating admission, the object read (404),
// the preconditions (409), validating admission, the deletion.
//
// The store calls mutatingAdmission and validatingAdmission at those
// points of create, update and delete (each call marked "Admission:" in
// store.go), with the store locked: the built-in plugins the workshop
// cluster runs, listed below. After each, it calls the webhooks and
// admission policies (admission.go, and package
// internal/apiserver/admission, kube-apiserver's own plugins, linked
// only by a server started with Options.Admission), as kube-apiserver's
// plugin order puts them last.

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
// workshop cluster runs, in kube-apiserver's order (AllOrderedPlugins,
// https://github.com/kubernetes/kubernetes/blob/v1.37.2/pkg/kubeapiserver/options/plugins.go#L72,
// of those its --enable-admission-plugins defaults turn on): each sees
// what the ones before it changed.
var mutatingAdmissionPlugins = []admissionPlugin{
	namespaceLifecycle,       // NamespaceLifecycle, registry_core.go
	serviceAccount,           // ServiceAccount, registry_core_pods.go
	taintNodesByCondition,    // TaintNodesByCondition, registry_core.go
	priority,                 // Priority, registry_core_pods.go
	defaultTolerationSeconds, // DefaultTolerationSeconds, registry_core_pods.go
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
