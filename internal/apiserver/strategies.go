package apiserver

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
)

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
