package apiserver

import (
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// policy/v1 (kubernetes pkg/registry/policy/poddisruptionbudget).
var policyStrategies = map[schema.GroupResource]strategy{
	{Group: "policy", Resource: "poddisruptionbudgets"}: {
		ShortNames: []string{"pdb"}, Table: podDisruptionBudgetTable, Generation: true, ResetStatusOnCreate: true,
	},
}

// podDisruptionBudgetTable: podDisruptionBudgetColumnDefinitions and
// printPodDisruptionBudget.
var podDisruptionBudgetTable = &tablePrinter{
	columns: []metav1.TableColumnDefinition{
		nameColumn,
		{Name: "Min Available", Type: "string", Description: "The minimum number of pods that must be available."},
		{Name: "Max Unavailable", Type: "string", Description: "The maximum number of pods that may be unavailable."},
		{Name: "Allowed Disruptions", Type: "integer", Description: "Calculated number of pods that may be disrupted at this time."},
		ageColumn,
	},
	cells: func(obj runtime.Object, age func(metav1.Time) string) []any {
		p := obj.(*policyv1.PodDisruptionBudget)
		minAvailable, maxUnavailable := "N/A", "N/A"
		if p.Spec.MinAvailable != nil {
			minAvailable = p.Spec.MinAvailable.String()
		}
		if p.Spec.MaxUnavailable != nil {
			maxUnavailable = p.Spec.MaxUnavailable.String()
		}
		return []any{p.Name, minAvailable, maxUnavailable, int64(p.Status.DisruptionsAllowed), age(p.CreationTimestamp)}
	},
}
