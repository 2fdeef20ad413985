package apiserver

import (
	"fmt"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
)

// strategies are what each kind does differently from the generic
// store, keyed by group and resource; a kind with no entry is stored as
// it is sent (a ConfigMap, a Role). Each entry names the upstream code it
// copies, under https://github.com/kubernetes/kubernetes/blob/v1.37.2/:
// pkg/registry/<group>/<kind>/strategy.go (PrepareForCreate, generation,
// GetAttrs), pkg/apis/<group>/v1/defaults.go and conversion.go (defaults,
// field label conversion) and plugin/pkg/admission.
var strategies = map[schema.GroupResource]strategy{
	// core
	{Resource: "namespaces"}: {
		ShortNames: []string{"ns"}, NameIsLabel: true, Table: namespaceTable,
		Fields: func(obj runtime.Object) fields.Set {
			return fields.Set{"status.phase": string(obj.(*corev1.Namespace).Status.Phase)}
		},
		FieldLabel: fieldLabels("metadata.name", "status.phase"),
		Default:    defaultNamespace,
		Admit:      admitNamespace,
	},
	{Resource: "nodes"}: {
		ShortNames: []string{"no"}, Table: nodeTable,
		Fields: func(obj runtime.Object) fields.Set {
			return fields.Set{"spec.unschedulable": fmt.Sprint(obj.(*corev1.Node).Spec.Unschedulable)}
		},
		FieldLabel: fieldLabels("metadata.name", "spec.unschedulable"),
		Admit:      admitNode,
	},
	{Resource: "pods"}: {
		ShortNames: []string{"po"}, Generation: true, GracefulDelete: true, Table: podTable,
		Fields:     podFields,
		FieldLabel: podFieldLabel,
		Default:    defaultPod,
		Admit:      admitPod,
		// podStatusStrategy: a status write may not touch ownerReferences.
		PrepareStatusUpdate: func(next, old runtime.Object, _ metav1.Time) {
			next.(*corev1.Pod).OwnerReferences = old.(*corev1.Pod).OwnerReferences
		},
	},
	{Resource: "configmaps"}: {ShortNames: []string{"cm"}, Table: configMapTable, ValidateUpdate: validateConfigMapUpdate},
	{Resource: "services"}: {
		ShortNames: []string{"svc"}, Table: serviceTable, ResetStatusOnCreate: true,
		NameIsLabel: true, // ValidateServiceName: a DNS-1123 label in v1.37
		Fields: func(obj runtime.Object) fields.Set {
			s := obj.(*corev1.Service)
			return fields.Set{"spec.clusterIP": s.Spec.ClusterIP, "spec.type": string(s.Spec.Type)}
		},
		FieldLabel: fieldLabels("metadata.namespace", "metadata.name", "spec.clusterIP", "spec.type"),
		Default:    defaultService,
		Allocate:   allocateService,
	},
	{Resource: "endpoints"}: {ShortNames: []string{"ep"}, Table: endpointsTable, Default: defaultEndpoints},
	{Resource: "secrets"}: {
		Table:            secretTable,
		Fields:           func(obj runtime.Object) fields.Set { return fields.Set{"type": string(obj.(*corev1.Secret).Type)} },
		FieldLabel:       fieldLabels("type", "metadata.namespace", "metadata.name"),
		Default:          defaultSecret,
		PrepareForUpdate: func(next, _ runtime.Object) { defaultSecret(next, metav1.Time{}) },
		ValidateUpdate:   validateSecretUpdate,
	},
	{Resource: "serviceaccounts"}: {ShortNames: []string{"sa"}, Table: serviceAccountTable},
	{Resource: "events"}: {
		ShortNames: []string{"ev"}, Table: eventTable,
		Fields: func(obj runtime.Object) fields.Set { return eventFields(obj.(*corev1.Event)) },
		FieldLabel: fieldLabels("involvedObject.kind", "involvedObject.namespace", "involvedObject.name",
			"involvedObject.uid", "involvedObject.apiVersion", "involvedObject.resourceVersion",
			"involvedObject.fieldPath", "reason", "reportingComponent", "source", "type",
			"metadata.namespace", "metadata.name"),
	},
	{Resource: "persistentvolumeclaims"}: {
		ShortNames: []string{"pvc"}, Table: persistentVolumeClaimTable, ResetStatusOnCreate: true,
		Default: defaultPVC,
		Admit: func(obj runtime.Object, _ metav1.Time) {
			if p := obj.(*corev1.PersistentVolumeClaim); p.Status.Phase == "" {
				p.Status.Phase = corev1.ClaimPending
			}
		},
	},
	{Resource: "persistentvolumes"}: {
		ShortNames: []string{"pv"}, Table: persistentVolumeTable, ResetStatusOnCreate: true,
		Admit: func(obj runtime.Object, now metav1.Time) {
			pv := obj.(*corev1.PersistentVolume)
			pv.Status.Phase = corev1.VolumePending
			pv.Status.LastPhaseTransitionTime = &now
		},
	},
	{Resource: "limitranges"}:    {ShortNames: []string{"limits"}, Table: limitRangeTable},
	{Resource: "resourcequotas"}: {ShortNames: []string{"quota"}, Table: resourceQuotaTable, ResetStatusOnCreate: true},
	{Resource: "podtemplates"}: {Generation: true, Table: podTemplateTable, Default: func(obj runtime.Object, _ metav1.Time) {
		defaultPodSpec(&obj.(*corev1.PodTemplate).Template.Spec)
	}},

	// apps
	{Group: "apps", Resource: "deployments"}: {
		ShortNames: []string{"deploy"}, Generation: true, GenerationOnAnnotations: true, Table: deploymentTable,
		Default: defaultDeployment,
		// deploymentStatusStrategy: a status write keeps the labels.
		PrepareStatusUpdate: func(next, old runtime.Object, _ metav1.Time) {
			next.(*appsv1.Deployment).Labels = old.(*appsv1.Deployment).Labels
		},
	},
	{Group: "apps", Resource: "replicasets"}: {
		ShortNames: []string{"rs"}, Table: replicaSetTable, Generation: true, ResetStatusOnCreate: true,
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
		Default: defaultStatefulSet,
	},
	{Group: "apps", Resource: "daemonsets"}: {
		ShortNames: []string{"ds"}, Table: daemonSetTable, Generation: true, ResetStatusOnCreate: true,
		Default: defaultDaemonSet,
	},
	{Group: "apps", Resource: "controllerrevisions"}: {Table: controllerRevisionTable},

	// events.k8s.io: the same Events as the core group's, by other
	// field names (pkg/apis/events/v1/conversion.go maps them to the
	// core ones). The workshop cluster stores the two apart.
	{Group: "events.k8s.io", Resource: "events"}: {
		ShortNames: []string{"ev"}, Table: eventTable,
		Fields: func(obj runtime.Object) fields.Set { return eventsV1Fields(obj.(*eventsv1.Event)) },
		FieldLabel: fieldLabels("reason", "regarding.kind", "regarding.namespace", "regarding.name", "regarding.uid",
			"regarding.apiVersion", "regarding.resourceVersion", "regarding.fieldPath", "reportingController",
			"type", "metadata.namespace", "metadata.name"),
	},

	// autoscaling
	{Group: "autoscaling", Resource: "horizontalpodautoscalers"}: {
		ShortNames: []string{"hpa"}, Table: horizontalPodAutoscalerTable, Generation: true, ResetStatusOnCreate: true,
	},

	// batch
	{Group: "batch", Resource: "jobs"}: {
		Table: jobTable, Generation: true, ResetStatusOnCreate: true,
		Fields: func(obj runtime.Object) fields.Set {
			return fields.Set{"status.successful": strconv.Itoa(int(obj.(*batchv1.Job).Status.Succeeded))}
		},
		FieldLabel: func(label, value string) (string, string, error) {
			switch label {
			case "metadata.name", "metadata.namespace", "status.successful":
				return label, value, nil
			}
			return "", "", fmt.Errorf("field label %q not supported for Job", label)
		},
		Default: defaultJob,
		Admit:   admitJob,
	},
	{Group: "batch", Resource: "cronjobs"}: {
		ShortNames: []string{"cj"}, Table: cronJobTable, Generation: true, ResetStatusOnCreate: true,
		Default: defaultCronJob,
	},

	// networking.k8s.io
	{Group: "networking.k8s.io", Resource: "ingresses"}: {
		ShortNames: []string{"ing"}, Table: ingressTable, Generation: true, ResetStatusOnCreate: true,
	},
	{Group: "networking.k8s.io", Resource: "ingressclasses"}: {Generation: true, Table: ingressClassTable},
	{Group: "networking.k8s.io", Resource: "networkpolicies"}: {
		ShortNames: []string{"netpol"}, Table: networkPolicyTable, Generation: true,
		Default: defaultNetworkPolicy,
	},

	// policy
	{Group: "policy", Resource: "poddisruptionbudgets"}: {
		ShortNames: []string{"pdb"}, Table: podDisruptionBudgetTable, Generation: true, ResetStatusOnCreate: true,
	},

	// storage.k8s.io, scheduling.k8s.io
	{Group: "storage.k8s.io", Resource: "storageclasses"}: {
		ShortNames: []string{"sc"}, Table: storageClassTable,
		Default: defaultStorageClass,
	},
	// certificates.k8s.io (registry_certificates.go)
	{Group: "certificates.k8s.io", Resource: "certificatesigningrequests"}: csrStrategy,

	// admissionregistration.k8s.io (registry_admissionregistration.go): stored,
	// never called.
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

	{Group: "scheduling.k8s.io", Resource: "priorityclasses"}: {ShortNames: []string{"pc"}, Table: priorityClassTable, Generation: true},

	// coordination.k8s.io, rbac.authorization.k8s.io: stored as sent. RBAC
	// names are path segments (ValidateRBACName), not DNS subdomains.
	{Group: "coordination.k8s.io", Resource: "leases"}:                    {Table: leaseTable},
	{Group: "rbac.authorization.k8s.io", Resource: "roles"}:               {Table: roleTable, NameIsPathSegment: true},
	{Group: "rbac.authorization.k8s.io", Resource: "rolebindings"}:        {Table: roleBindingTable, NameIsPathSegment: true},
	{Group: "rbac.authorization.k8s.io", Resource: "clusterroles"}:        {Table: clusterRoleTable, NameIsPathSegment: true},
	{Group: "rbac.authorization.k8s.io", Resource: "clusterrolebindings"}: {Table: clusterRoleBindingTable, NameIsPathSegment: true},

	// discovery.k8s.io
	{Group: "discovery.k8s.io", Resource: "endpointslices"}: {Generation: true, Table: endpointSliceTable},
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
