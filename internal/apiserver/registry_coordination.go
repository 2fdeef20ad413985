package apiserver

import (
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// coordination.k8s.io/v1: Leases, stored as sent.
var coordinationStrategies = map[schema.GroupResource]strategy{
	{Group: "coordination.k8s.io", Resource: "leases"}: {Table: leaseTable},
}

// leaseTable: leaseColumnDefinitions and printLease.
var leaseTable = &tablePrinter{
	columns: []metav1.TableColumnDefinition{
		nameColumn,
		{Name: "Holder", Type: "string", Description: coordinationv1.LeaseSpec{}.SwaggerDoc()["holderIdentity"]},
		ageColumn,
	},
	cells: func(obj runtime.Object, age func(metav1.Time) string) []any {
		l := obj.(*coordinationv1.Lease)
		var holder string
		if l.Spec.HolderIdentity != nil {
			holder = *l.Spec.HolderIdentity
		}
		return []any{l.Name, holder, age(l.CreationTimestamp)}
	},
}
