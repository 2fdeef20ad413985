package apiserver

import (
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
)

// admissionregistration.k8s.io/v1 (kubernetes
// pkg/registry/admissionregistration): webhook configurations and
// admission policies, stored with their defaults and printed.
var admissionregistrationStrategies = map[schema.GroupResource]strategy{
	{Group: "admissionregistration.k8s.io", Resource: "mutatingwebhookconfigurations"}: {
		Generation: true, SpecField: "Webhooks", Table: mutatingWebhookTable, Default: defaultWebhookConfiguration,
	},
	{Group: "admissionregistration.k8s.io", Resource: "validatingwebhookconfigurations"}: {
		Generation: true, SpecField: "Webhooks", Table: validatingWebhookTable, Default: defaultWebhookConfiguration,
	},
	{Group: "admissionregistration.k8s.io", Resource: "validatingadmissionpolicies"}: {
		Generation: true, ResetStatusOnCreate: true, Table: validatingAdmissionPolicyTable, Default: defaultValidatingAdmissionPolicy,
		// validatingAdmissionPolicyStatusStrategy.PrepareForUpdate:
		// metav1.ResetObjectMetaForStatus keeps the old labels,
		// annotations, finalizers and ownerReferences.
		PrepareStatusUpdate: func(next, old runtime.Object, _ metav1.Time) {
			metav1.ResetObjectMetaForStatus(next.(metav1.Object), old.(metav1.Object))
		},
	},
	{Group: "admissionregistration.k8s.io", Resource: "validatingadmissionpolicybindings"}: {
		Generation: true, Table: validatingAdmissionPolicyBindingTable, Default: defaultValidatingAdmissionPolicyBinding,
	},
	// mutatingadmissionpolicy and mutatingadmissionpolicybinding's
	// strategies: generation 1, bumped when the spec changes; no status.
	{Group: "admissionregistration.k8s.io", Resource: "mutatingadmissionpolicies"}: {
		Generation: true, Table: mutatingAdmissionPolicyTable, Default: defaultMutatingAdmissionPolicy,
	},
	{Group: "admissionregistration.k8s.io", Resource: "mutatingadmissionpolicybindings"}: {
		Generation: true, Table: mutatingAdmissionPolicyBindingTable, Default: defaultMutatingAdmissionPolicyBinding,
	},
}

// admissionregistration.k8s.io/v1: webhook configurations and
// validating and mutating admission policies, stored as kube-apiserver v1.37.2 stores
// them (kubernetes pkg/registry/admissionregistration/<kind>/strategy.go:
// generation 1, bumped when the webhooks or the spec change; a policy's
// status reset on create and written through its status subresource)
// with the defaults of pkg/apis/admissionregistration/v1/defaults.go.
//
// A server started with Options.Admission (package admission,
// admission.go) calls the webhooks and evaluates the policies, with
// kube-apiserver's own plugins; without it nothing acts on them, and a
// write that a webhook would have refused or defaulted is stored as it
// is sent. Their own validation (ValidateMutatingWebhookConfiguration
// and the like) is not done.

// defaultWebhookConfiguration is SetDefaults_MutatingWebhook or
// SetDefaults_ValidatingWebhook for each webhook, with their rules' and
// service references' defaults.
func defaultWebhookConfiguration(obj runtime.Object, _ metav1.Time) {
	switch c := obj.(type) {
	case *admissionregistrationv1.MutatingWebhookConfiguration:
		for i := range c.Webhooks {
			w := &c.Webhooks[i]
			defaultWebhook(&w.FailurePolicy, &w.MatchPolicy, &w.NamespaceSelector, &w.ObjectSelector, &w.TimeoutSeconds)
			if w.ReinvocationPolicy == nil {
				w.ReinvocationPolicy = ptr.To(admissionregistrationv1.NeverReinvocationPolicy)
			}
			defaultRules(w.Rules)
			defaultClientConfig(&w.ClientConfig)
		}
	case *admissionregistrationv1.ValidatingWebhookConfiguration:
		for i := range c.Webhooks {
			w := &c.Webhooks[i]
			defaultWebhook(&w.FailurePolicy, &w.MatchPolicy, &w.NamespaceSelector, &w.ObjectSelector, &w.TimeoutSeconds)
			defaultRules(w.Rules)
			defaultClientConfig(&w.ClientConfig)
		}
	}
}

func defaultWebhook(failure **admissionregistrationv1.FailurePolicyType, match **admissionregistrationv1.MatchPolicyType,
	namespaces, objects **metav1.LabelSelector, timeout **int32) {
	if *failure == nil {
		*failure = ptr.To(admissionregistrationv1.Fail)
	}
	if *match == nil {
		*match = ptr.To(admissionregistrationv1.Equivalent)
	}
	if *namespaces == nil {
		*namespaces = &metav1.LabelSelector{}
	}
	if *objects == nil {
		*objects = &metav1.LabelSelector{}
	}
	if *timeout == nil {
		*timeout = ptr.To[int32](10)
	}
}

// defaultRules is SetDefaults_Rule: scope "*".
func defaultRules(rules []admissionregistrationv1.RuleWithOperations) {
	for i := range rules {
		if rules[i].Scope == nil {
			rules[i].Scope = ptr.To(admissionregistrationv1.AllScopes)
		}
	}
}

// defaultClientConfig is SetDefaults_ServiceReference: port 443.
func defaultClientConfig(c *admissionregistrationv1.WebhookClientConfig) {
	if c.Service != nil && c.Service.Port == nil {
		c.Service.Port = ptr.To[int32](443)
	}
}

// defaultMatchResources is SetDefaults_MatchResources, with its rules'
// scope.
func defaultMatchResources(m *admissionregistrationv1.MatchResources) {
	if m == nil {
		return
	}
	if m.MatchPolicy == nil {
		m.MatchPolicy = ptr.To(admissionregistrationv1.Equivalent)
	}
	if m.NamespaceSelector == nil {
		m.NamespaceSelector = &metav1.LabelSelector{}
	}
	if m.ObjectSelector == nil {
		m.ObjectSelector = &metav1.LabelSelector{}
	}
	for _, rules := range [][]admissionregistrationv1.NamedRuleWithOperations{m.ResourceRules, m.ExcludeResourceRules} {
		for i := range rules {
			if rules[i].Scope == nil {
				rules[i].Scope = ptr.To(admissionregistrationv1.AllScopes)
			}
		}
	}
}

// defaultValidatingAdmissionPolicy is
// SetDefaults_ValidatingAdmissionPolicySpec and its match constraints'.
func defaultValidatingAdmissionPolicy(obj runtime.Object, _ metav1.Time) {
	p := obj.(*admissionregistrationv1.ValidatingAdmissionPolicy)
	if p.Spec.FailurePolicy == nil {
		p.Spec.FailurePolicy = ptr.To(admissionregistrationv1.Fail)
	}
	defaultMatchResources(p.Spec.MatchConstraints)
}

// defaultMutatingAdmissionPolicy is SetObjectDefaults_MutatingAdmissionPolicy:
// SetDefaults_MutatingAdmissionPolicySpec and its match constraints'.
func defaultMutatingAdmissionPolicy(obj runtime.Object, _ metav1.Time) {
	p := obj.(*admissionregistrationv1.MutatingAdmissionPolicy)
	if p.Spec.FailurePolicy == nil {
		p.Spec.FailurePolicy = ptr.To(admissionregistrationv1.Fail)
	}
	defaultMatchResources(p.Spec.MatchConstraints)
}

// defaultMutatingAdmissionPolicyBinding: its match resources' defaults.
func defaultMutatingAdmissionPolicyBinding(obj runtime.Object, _ metav1.Time) {
	defaultMatchResources(obj.(*admissionregistrationv1.MutatingAdmissionPolicyBinding).Spec.MatchResources)
}

// defaultValidatingAdmissionPolicyBinding: its match resources'
// defaults.
func defaultValidatingAdmissionPolicyBinding(obj runtime.Object, _ metav1.Time) {
	defaultMatchResources(obj.(*admissionregistrationv1.ValidatingAdmissionPolicyBinding).Spec.MatchResources)
}

// webhooksColumn is the Webhooks column of both webhook configurations
// (mutatingWebhookColumnDefinitions, validatingWebhookColumnDefinitions).
var webhooksColumn = metav1.TableColumnDefinition{Name: "Webhooks", Type: "integer", Description: "Webhooks indicates the number of webhooks registered in this configuration"}

// mutatingWebhookTable: printMutatingWebhook.
var mutatingWebhookTable = &tablePrinter{
	columns: []metav1.TableColumnDefinition{nameColumn, webhooksColumn, ageColumn},
	cells: func(obj runtime.Object, age func(metav1.Time) string) []any {
		c := obj.(*admissionregistrationv1.MutatingWebhookConfiguration)
		return []any{c.Name, int64(len(c.Webhooks)), age(c.CreationTimestamp)}
	},
}

// validatingWebhookTable: printValidatingWebhook.
var validatingWebhookTable = &tablePrinter{
	columns: []metav1.TableColumnDefinition{nameColumn, webhooksColumn, ageColumn},
	cells: func(obj runtime.Object, age func(metav1.Time) string) []any {
		c := obj.(*admissionregistrationv1.ValidatingWebhookConfiguration)
		return []any{c.Name, int64(len(c.Webhooks)), age(c.CreationTimestamp)}
	},
}

// validatingAdmissionPolicyTable: the validatingAdmissionPolicy columns
// and printValidatingAdmissionPolicy.
var validatingAdmissionPolicyTable = &tablePrinter{
	columns: []metav1.TableColumnDefinition{
		nameColumn,
		{Name: "Validations", Type: "integer", Description: "Validations indicates the number of validation rules defined in this configuration"},
		{Name: "ParamKind", Type: "string", Description: "ParamKind specifies the kind of resources used to parameterize this policy"},
		ageColumn,
	},
	cells: func(obj runtime.Object, age func(metav1.Time) string) []any {
		p := obj.(*admissionregistrationv1.ValidatingAdmissionPolicy)
		paramKind := "<unset>"
		if k := p.Spec.ParamKind; k != nil {
			paramKind = k.APIVersion + "/" + k.Kind
		}
		return []any{p.Name, int64(len(p.Spec.Validations)), paramKind, age(p.CreationTimestamp)}
	},
}

// validatingAdmissionPolicyBindingTable: the
// validatingAdmissionPolicyBinding columns and
// printValidatingAdmissionPolicyBinding.
var validatingAdmissionPolicyBindingTable = &tablePrinter{
	columns: []metav1.TableColumnDefinition{
		nameColumn,
		{Name: "PolicyName", Type: "string", Description: "PolicyName indicates the policy definition which the policy binding binded to"},
		{Name: "ParamRef", Type: "string", Description: "ParamRef indicates the param resource which sets the configuration param"},
		ageColumn,
	},
	cells: func(obj runtime.Object, age func(metav1.Time) string) []any {
		b := obj.(*admissionregistrationv1.ValidatingAdmissionPolicyBinding)
		return []any{b.Name, b.Spec.PolicyName, paramRefCell(b.Spec.ParamRef), age(b.CreationTimestamp)}
	},
}

// paramRefCell is a policy binding's ParamRef cell.
func paramRefCell(pr *admissionregistrationv1.ParamRef) string {
	switch {
	case pr == nil:
		return "<unset>"
	case pr.Name != "" && pr.Namespace != "":
		return pr.Namespace + "/" + pr.Name
	case pr.Name != "":
		return "*/" + pr.Name
	case pr.Selector != nil:
		return pr.Selector.String()
	}
	return "<unset>"
}

// mutatingAdmissionPolicyTable: the mutatingAdmissionPolicy columns and
// printMutatingAdmissionPolicy.
var mutatingAdmissionPolicyTable = &tablePrinter{
	columns: []metav1.TableColumnDefinition{
		nameColumn,
		{Name: "Mutations", Type: "integer", Description: "Mutation indicates the number of mutations rules defined in this configuration"},
		{Name: "ParamKind", Type: "string", Description: "ParamKind specifies the kind of resources used to parameterize this policy"},
		ageColumn,
	},
	cells: func(obj runtime.Object, age func(metav1.Time) string) []any {
		p := obj.(*admissionregistrationv1.MutatingAdmissionPolicy)
		paramKind := "<unset>"
		if k := p.Spec.ParamKind; k != nil {
			paramKind = k.APIVersion + "/" + k.Kind
		}
		return []any{p.Name, int64(len(p.Spec.Mutations)), paramKind, age(p.CreationTimestamp)}
	},
}

// mutatingAdmissionPolicyBindingTable: the mutatingAdmissionPolicyBinding
// columns and printMutatingAdmissionPolicyBinding.
var mutatingAdmissionPolicyBindingTable = &tablePrinter{
	columns: validatingAdmissionPolicyBindingTable.columns,
	cells: func(obj runtime.Object, age func(metav1.Time) string) []any {
		b := obj.(*admissionregistrationv1.MutatingAdmissionPolicyBinding)
		return []any{b.Name, b.Spec.PolicyName, paramRefCell(b.Spec.ParamRef), age(b.CreationTimestamp)}
	},
}
