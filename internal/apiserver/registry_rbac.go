package apiserver

import (
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	rbacv1beta1 "k8s.io/api/rbac/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// rbac.authorization.k8s.io/v1: stored as sent. RBAC names are path
// segments (ValidateRBACName), not DNS subdomains.
var rbacStrategies = map[schema.GroupResource]strategy{
	{Group: "rbac.authorization.k8s.io", Resource: "roles"}:               {Table: roleTable, NameIsPathSegment: true},
	{Group: "rbac.authorization.k8s.io", Resource: "rolebindings"}:        {Table: roleBindingTable, NameIsPathSegment: true},
	{Group: "rbac.authorization.k8s.io", Resource: "clusterroles"}:        {Table: clusterRoleTable, NameIsPathSegment: true},
	{Group: "rbac.authorization.k8s.io", Resource: "clusterrolebindings"}: {Table: clusterRoleBindingTable, NameIsPathSegment: true},
}

// roleTable, clusterRoleTable: their registries
// (pkg/registry/rbac/role/storage, pkg/registry/rbac/clusterrole/storage)
// have no printer but rest.NewDefaultTableConvertor: Name and Created At.
var (
	roleTable        = defaultConvertorTable
	clusterRoleTable = defaultConvertorTable
)

// roleBindingTable and clusterRoleBindingTable: roleBindingsColumnDefinitions,
// clusterRoleBindingsColumnDefinitions, printRoleBinding and
// printClusterRoleBinding. The Role column's description is the v1beta1
// type's roleRef documentation, each kind its own, as upstream takes it.
var (
	roleBindingTable        = bindingTable("roleBinding", rbacv1beta1.RoleBinding{}.SwaggerDoc()["roleRef"])
	clusterRoleBindingTable = bindingTable("clusterRoleBinding", rbacv1beta1.ClusterRoleBinding{}.SwaggerDoc()["roleRef"])
)

func bindingTable(kind, roleRefDoc string) *tablePrinter {
	return &tablePrinter{
		columns: []metav1.TableColumnDefinition{
			nameColumn,
			{Name: "Role", Type: "string", Description: roleRefDoc},
			ageColumn,
			{Name: "Users", Type: "string", Priority: 1, Description: "Users in the " + kind},
			{Name: "Groups", Type: "string", Priority: 1, Description: "Groups in the " + kind},
			{Name: "ServiceAccounts", Type: "string", Priority: 1, Description: "ServiceAccounts in the " + kind},
		},
		cells: func(obj runtime.Object, age func(metav1.Time) string) []any {
			var ref rbacv1.RoleRef
			var subjects []rbacv1.Subject
			switch b := obj.(type) {
			case *rbacv1.RoleBinding:
				ref, subjects = b.RoleRef, b.Subjects
			case *rbacv1.ClusterRoleBinding:
				ref, subjects = b.RoleRef, b.Subjects
			}
			// rbac.SubjectsStrings
			var users, groups, sas []string
			for _, s := range subjects {
				switch s.Kind {
				case rbacv1.ServiceAccountKind:
					sas = append(sas, s.Namespace+"/"+s.Name)
				case rbacv1.UserKind:
					users = append(users, s.Name)
				case rbacv1.GroupKind:
					groups = append(groups, s.Name)
				}
			}
			m := metaOf(obj)
			return []any{
				m.GetName(), ref.Kind + "/" + ref.Name, age(m.GetCreationTimestamp()),
				strings.Join(users, ", "), strings.Join(groups, ", "), strings.Join(sas, ", "),
			}
		},
	}
}
