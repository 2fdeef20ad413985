package admission_test

import (
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"
)

// TestMutatingAdmissionPolicy: admissionregistration.k8s.io/v1
// MutatingAdmissionPolicy and its binding are served (GA and on by
// default since v1.36: k8s.io/apiserver v0.37.2
// pkg/features/kube_features.go, and kube-apiserver v1.36.3's OpenAPI
// document lists them), and a policy bound mutates a create, as
// kube-apiserver's MutatingAdmissionPolicy plugin does, before the
// mutating webhooks.
func TestMutatingAdmissionPolicy(t *testing.T) {
	s, c := start(t)
	ctx := t.Context()
	createNamespace(t, c)
	d := discovery.NewDiscoveryClientForConfigOrDie(s.Config())
	served, err := d.ServerResourcesForGroupVersion("admissionregistration.k8s.io/v1")
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, r := range served.APIResources {
		names[r.Name] = true
	}
	for _, want := range []string{"mutatingadmissionpolicies", "mutatingadmissionpolicybindings"} {
		if !names[want] {
			t.Errorf("discovery does not list %s", want)
		}
	}
	policy := &admissionregistrationv1.MutatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "label-it"},
		Spec: admissionregistrationv1.MutatingAdmissionPolicySpec{
			MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionregistrationv1.RuleWithOperations{
					Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
					Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}},
				},
			}}},
			Mutations: []admissionregistrationv1.Mutation{{
				PatchType: admissionregistrationv1.PatchTypeApplyConfiguration,
				ApplyConfiguration: &admissionregistrationv1.ApplyConfiguration{
					Expression: `Object{metadata: Object.metadata{labels: {"policy": "mutated"}}}`,
				},
			}},
			ReinvocationPolicy: admissionregistrationv1.NeverReinvocationPolicy,
		},
	}
	got, err := c.AdmissionregistrationV1().MutatingAdmissionPolicies().Create(ctx, policy, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Generation != 1 || got.Spec.FailurePolicy == nil || *got.Spec.FailurePolicy != admissionregistrationv1.Fail {
		t.Errorf("policy stored with generation %d, failurePolicy %v: want 1 and the default Fail", got.Generation, got.Spec.FailurePolicy)
	}
	binding := &admissionregistrationv1.MutatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "label-it"},
		Spec:       admissionregistrationv1.MutatingAdmissionPolicyBindingSpec{PolicyName: policy.Name},
	}
	if _, err := c.AdmissionregistrationV1().MutatingAdmissionPolicyBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cm, err := c.CoreV1().ConfigMaps(ns).Create(ctx, configMap("cm", map[string]string{"own": "yes"}), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if cm.Labels["policy"] != "mutated" || cm.Labels["own"] != "yes" {
		t.Errorf("labels %v, want own=yes and the policy's policy=mutated", cm.Labels)
	}
	// Unbound, it no longer acts.
	if err := c.AdmissionregistrationV1().MutatingAdmissionPolicyBindings().Delete(ctx, binding.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	cm, err = c.CoreV1().ConfigMaps(ns).Create(ctx, configMap("cm-2", nil), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if cm.Labels["policy"] != "" {
		t.Errorf("after the binding's delete: labels %v, want none", cm.Labels)
	}
}
