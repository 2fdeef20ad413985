package apiserver

import (
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// scheduling.k8s.io/v1 (kubernetes pkg/registry/scheduling/priorityclass).
var schedulingStrategies = map[schema.GroupResource]strategy{
	{Group: "scheduling.k8s.io", Resource: "priorityclasses"}: {ShortNames: []string{"pc"}, Table: priorityClassTable, Generation: true},
}

// priorityClassTable: priorityClassColumnDefinitions and
// printPriorityClass. PreemptionPolicy has priority 0 upstream although
// only a wide print fills it.
var priorityClassTable = &tablePrinter{
	columns: []metav1.TableColumnDefinition{
		nameColumn,
		{Name: "Value", Type: "integer", Description: schedulingv1.PriorityClass{}.SwaggerDoc()["value"]},
		{Name: "Global-Default", Type: "boolean", Description: schedulingv1.PriorityClass{}.SwaggerDoc()["globalDefault"]},
		ageColumn,
		{Name: "PreemptionPolicy", Type: "string", Description: schedulingv1.PriorityClass{}.SwaggerDoc()["preemptionPolicy"]},
	},
	cells: func(obj runtime.Object, age func(metav1.Time) string) []any {
		p := obj.(*schedulingv1.PriorityClass)
		var preemption string
		if p.PreemptionPolicy != nil {
			preemption = string(*p.PreemptionPolicy)
		}
		return []any{p.Name, int64(p.Value), p.GlobalDefault, age(p.CreationTimestamp), preemption}
	},
}
