package apiserver

import (
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
)

// apps/v1 (kubernetes pkg/registry/apps/<kind>): strategies, defaults
// (pkg/apis/apps/v1/defaults.go) and printers. Their scale subresource is
// generic (scale.go).
var appsStrategies = map[schema.GroupResource]strategy{
	{Group: "apps", Resource: "deployments"}: {
		ShortNames: []string{"deploy"}, Generation: true, GenerationOnAnnotations: true, Table: deploymentTable,
		ValidateObject: validatePodSpecAt(field.NewPath("spec", "template", "spec"), func(obj runtime.Object) *corev1.PodSpec { return &obj.(*appsv1.Deployment).Spec.Template.Spec }),
		Default:        defaultDeployment,
		// deploymentStatusStrategy: a status write keeps the labels.
		PrepareStatusUpdate: func(next, old runtime.Object, _ metav1.Time) {
			next.(*appsv1.Deployment).Labels = old.(*appsv1.Deployment).Labels
		},
	},
	{Group: "apps", Resource: "replicasets"}: {
		ShortNames: []string{"rs"}, Table: replicaSetTable, Generation: true, ResetStatusOnCreate: true,
		ValidateObject: validatePodSpecAt(field.NewPath("spec", "template", "spec"), func(obj runtime.Object) *corev1.PodSpec { return &obj.(*appsv1.ReplicaSet).Spec.Template.Spec }),
		Default: func(obj runtime.Object, _ metav1.Time) {
			rs := obj.(*appsv1.ReplicaSet)
			if rs.Spec.Replicas == nil {
				rs.Spec.Replicas = ptr.To[int32](1)
			}
			defaultPodSpec(&rs.Spec.Template.Spec)
		},
	},
	{Group: "apps", Resource: "statefulsets"}: {
		ShortNames: []string{"sts"}, Table: statefulSetTable, Generation: true, ResetStatusOnCreate: true,
		ValidateObject: validatePodSpecAt(field.NewPath("spec", "template", "spec"), func(obj runtime.Object) *corev1.PodSpec { return &obj.(*appsv1.StatefulSet).Spec.Template.Spec }),
		Default:        defaultStatefulSet,
	},
	{Group: "apps", Resource: "daemonsets"}: {
		ShortNames: []string{"ds"}, Table: daemonSetTable, Generation: true, ResetStatusOnCreate: true,
		ValidateObject: validatePodSpecAt(field.NewPath("spec", "template", "spec"), func(obj runtime.Object) *corev1.PodSpec { return &obj.(*appsv1.DaemonSet).Spec.Template.Spec }),
		Default:        defaultDaemonSet,
	},
	{Group: "apps", Resource: "controllerrevisions"}: {Table: controllerRevisionTable},
}

// defaultStatefulSet is SetDefaults_StatefulSet (pkg/apis/apps/v1/defaults.go).
func defaultStatefulSet(obj runtime.Object, _ metav1.Time) {
	s := &obj.(*appsv1.StatefulSet).Spec
	if s.PodManagementPolicy == "" {
		s.PodManagementPolicy = appsv1.OrderedReadyPodManagement
	}
	if s.UpdateStrategy.Type == "" {
		s.UpdateStrategy.Type = appsv1.RollingUpdateStatefulSetStrategyType
		if s.UpdateStrategy.RollingUpdate == nil {
			s.UpdateStrategy.RollingUpdate = &appsv1.RollingUpdateStatefulSetStrategy{}
		}
	}
	if s.UpdateStrategy.Type == appsv1.RollingUpdateStatefulSetStrategyType && s.UpdateStrategy.RollingUpdate != nil &&
		s.UpdateStrategy.RollingUpdate.Partition == nil {
		s.UpdateStrategy.RollingUpdate.Partition = ptr.To[int32](0)
	}
	if s.PersistentVolumeClaimRetentionPolicy == nil {
		s.PersistentVolumeClaimRetentionPolicy = &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{}
	}
	if s.PersistentVolumeClaimRetentionPolicy.WhenDeleted == "" {
		s.PersistentVolumeClaimRetentionPolicy.WhenDeleted = appsv1.RetainPersistentVolumeClaimRetentionPolicyType
	}
	if s.PersistentVolumeClaimRetentionPolicy.WhenScaled == "" {
		s.PersistentVolumeClaimRetentionPolicy.WhenScaled = appsv1.RetainPersistentVolumeClaimRetentionPolicyType
	}
	if s.Replicas == nil {
		s.Replicas = ptr.To[int32](1)
	}
	if s.RevisionHistoryLimit == nil {
		s.RevisionHistoryLimit = ptr.To[int32](10)
	}
	defaultPodSpec(&s.Template.Spec)
}

// defaultDaemonSet is SetDefaults_DaemonSet.
func defaultDaemonSet(obj runtime.Object, _ metav1.Time) {
	s := &obj.(*appsv1.DaemonSet).Spec
	u := &s.UpdateStrategy
	if u.Type == "" {
		u.Type = appsv1.RollingUpdateDaemonSetStrategyType
	}
	if u.Type == appsv1.RollingUpdateDaemonSetStrategyType {
		if u.RollingUpdate == nil {
			u.RollingUpdate = &appsv1.RollingUpdateDaemonSet{}
		}
		if u.RollingUpdate.MaxUnavailable == nil {
			u.RollingUpdate.MaxUnavailable = ptr.To(intstr.FromInt32(1))
		}
		if u.RollingUpdate.MaxSurge == nil {
			u.RollingUpdate.MaxSurge = ptr.To(intstr.FromInt32(0))
		}
	}
	if s.RevisionHistoryLimit == nil {
		s.RevisionHistoryLimit = ptr.To[int32](10)
	}
	defaultPodSpec(&s.Template.Spec)
}

// defaultDeployment mirrors apps/v1 defaulting (transcript 30) and the pod
// template defaults.
func defaultDeployment(obj runtime.Object, now metav1.Time) {
	d := obj.(*appsv1.Deployment)
	if d.Spec.Replicas == nil {
		d.Spec.Replicas = ptr.To[int32](1)
	}
	if d.Spec.Strategy.Type == "" {
		d.Spec.Strategy.Type = appsv1.RollingUpdateDeploymentStrategyType
	}
	if d.Spec.Strategy.Type == appsv1.RollingUpdateDeploymentStrategyType && d.Spec.Strategy.RollingUpdate == nil {
		q := intOrPercent("25%")
		d.Spec.Strategy.RollingUpdate = &appsv1.RollingUpdateDeployment{MaxUnavailable: &q, MaxSurge: ptr.To(q)}
	}
	if d.Spec.RevisionHistoryLimit == nil {
		d.Spec.RevisionHistoryLimit = ptr.To[int32](10)
	}
	if d.Spec.ProgressDeadlineSeconds == nil {
		d.Spec.ProgressDeadlineSeconds = ptr.To[int32](600)
	}
	defaultPodSpec(&d.Spec.Template.Spec)
}

func intOrPercent(s string) intstr.IntOrString { return intstr.FromString(s) }

// deploymentTable: AddHandlers' deploymentColumnDefinitions and
// printDeployment. Up-to-date and Available are integers in a column
// typed string, as upstream has them (transcript 54).
var deploymentTable = &tablePrinter{
	columns: []metav1.TableColumnDefinition{
		nameColumn,
		{Name: "Ready", Type: "string", Description: "Number of the pod with ready state"},
		{Name: "Up-to-date", Type: "string", Description: appsv1.DeploymentStatus{}.SwaggerDoc()["updatedReplicas"]},
		{Name: "Available", Type: "string", Description: appsv1.DeploymentStatus{}.SwaggerDoc()["availableReplicas"]},
		ageColumn,
		{Name: "Containers", Type: "string", Priority: 1, Description: "Names of each container in the template."},
		{Name: "Images", Type: "string", Priority: 1, Description: "Images referenced by each container in the template."},
		{Name: "Selector", Type: "string", Priority: 1, Description: appsv1.DeploymentSpec{}.SwaggerDoc()["selector"]},
	},
	cells: func(obj runtime.Object, age func(metav1.Time) string) []any {
		d := obj.(*appsv1.Deployment)
		var desired int32
		if d.Spec.Replicas != nil {
			desired = *d.Spec.Replicas
		}
		selector := "<invalid>"
		if s, err := metav1.LabelSelectorAsSelector(d.Spec.Selector); err == nil {
			selector = s.String()
		}
		names, images := containerCells(d.Spec.Template.Spec.Containers)
		return []any{
			d.Name, fmt.Sprintf("%d/%d", d.Status.ReadyReplicas, desired),
			int64(d.Status.UpdatedReplicas), int64(d.Status.AvailableReplicas), age(d.CreationTimestamp),
			names, images, selector,
		}
	},
}

// replicaSetTable: replicaSetColumnDefinitions and printReplicaSet.
var replicaSetTable = &tablePrinter{
	columns: columns(
		nameColumn,
		metav1.TableColumnDefinition{Name: "Desired", Type: "integer", Description: appsv1.ReplicaSetSpec{}.SwaggerDoc()["replicas"]},
		metav1.TableColumnDefinition{Name: "Current", Type: "integer", Description: appsv1.ReplicaSetStatus{}.SwaggerDoc()["replicas"]},
		metav1.TableColumnDefinition{Name: "Ready", Type: "integer", Description: appsv1.ReplicaSetStatus{}.SwaggerDoc()["readyReplicas"]},
		ageColumn,
		containersColumns,
		metav1.TableColumnDefinition{Name: "Selector", Type: "string", Priority: 1, Description: appsv1.ReplicaSetSpec{}.SwaggerDoc()["selector"]},
	),
	cells: func(obj runtime.Object, age func(metav1.Time) string) []any {
		rs := obj.(*appsv1.ReplicaSet)
		names, images := containerCells(rs.Spec.Template.Spec.Containers)
		return []any{
			rs.Name, replicas(rs.Spec.Replicas), int64(rs.Status.Replicas), int64(rs.Status.ReadyReplicas), age(rs.CreationTimestamp),
			names, images, metav1.FormatLabelSelector(rs.Spec.Selector),
		}
	},
}

// statefulSetTable: statefulSetColumnDefinitions and printStatefulSet.
var statefulSetTable = &tablePrinter{
	columns: columns(
		nameColumn,
		metav1.TableColumnDefinition{Name: "Ready", Type: "string", Description: "Number of the pod with ready state"},
		ageColumn,
		containersColumns,
	),
	cells: func(obj runtime.Object, age func(metav1.Time) string) []any {
		s := obj.(*appsv1.StatefulSet)
		names, images := containerCells(s.Spec.Template.Spec.Containers)
		return []any{s.Name, fmt.Sprintf("%d/%d", s.Status.ReadyReplicas, replicas(s.Spec.Replicas)), age(s.CreationTimestamp), names, images}
	},
}

// daemonSetTable: daemonSetColumnDefinitions and printDaemonSet.
var daemonSetTable = &tablePrinter{
	columns: columns(
		nameColumn,
		metav1.TableColumnDefinition{Name: "Desired", Type: "integer", Description: appsv1.DaemonSetStatus{}.SwaggerDoc()["desiredNumberScheduled"]},
		metav1.TableColumnDefinition{Name: "Current", Type: "integer", Description: appsv1.DaemonSetStatus{}.SwaggerDoc()["currentNumberScheduled"]},
		metav1.TableColumnDefinition{Name: "Ready", Type: "integer", Description: appsv1.DaemonSetStatus{}.SwaggerDoc()["numberReady"]},
		metav1.TableColumnDefinition{Name: "Up-to-date", Type: "integer", Description: appsv1.DaemonSetStatus{}.SwaggerDoc()["updatedNumberScheduled"]},
		metav1.TableColumnDefinition{Name: "Available", Type: "integer", Description: appsv1.DaemonSetStatus{}.SwaggerDoc()["numberAvailable"]},
		metav1.TableColumnDefinition{Name: "Node Selector", Type: "string", Description: corev1.PodSpec{}.SwaggerDoc()["nodeSelector"]},
		ageColumn,
		containersColumns,
		metav1.TableColumnDefinition{Name: "Selector", Type: "string", Priority: 1, Description: appsv1.DaemonSetSpec{}.SwaggerDoc()["selector"]},
	),
	cells: func(obj runtime.Object, age func(metav1.Time) string) []any {
		d := obj.(*appsv1.DaemonSet)
		st := d.Status
		names, images := containerCells(d.Spec.Template.Spec.Containers)
		return []any{
			d.Name, int64(st.DesiredNumberScheduled), int64(st.CurrentNumberScheduled), int64(st.NumberReady),
			int64(st.UpdatedNumberScheduled), int64(st.NumberAvailable), labels.FormatLabels(d.Spec.Template.Spec.NodeSelector),
			age(d.CreationTimestamp), names, images, metav1.FormatLabelSelector(d.Spec.Selector),
		}
	},
}

// controllerRevisionTable: controllerRevisionColumnDefinition and
// printControllerRevision. Revision is an integer cell in a column
// typed string, as upstream has it.
var controllerRevisionTable = &tablePrinter{
	columns: []metav1.TableColumnDefinition{
		nameColumn,
		{Name: "Controller", Type: "string", Description: "Controller of the object"},
		{Name: "Revision", Type: "string", Description: appsv1.ControllerRevision{}.SwaggerDoc()["revision"]},
		ageColumn,
	},
	cells: func(obj runtime.Object, age func(metav1.Time) string) []any {
		cr := obj.(*appsv1.ControllerRevision)
		controller := "<none>"
		if ref := metav1.GetControllerOf(cr); ref != nil {
			// formatResourceName(kind, name, true). Upstream fails the
			// Table on an apiVersion that does not parse; kube-apiserver
			// never stores one (ValidateOwnerReferences: "version must
			// not be empty"), this server does not check, and prints
			// the kind alone.
			gk := schema.FromAPIVersionAndKind(ref.APIVersion, ref.Kind).GroupKind()
			controller = ref.Name
			if !gk.Empty() {
				controller = strings.ToLower(gk.String()) + "/" + ref.Name
			}
		}
		return []any{cr.Name, controller, cr.Revision, age(cr.CreationTimestamp)}
	},
}
