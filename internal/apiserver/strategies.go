package apiserver

import (
	"fmt"
	"hash/fnv"
	"maps"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	networkingv1 "k8s.io/api/networking/v1"
	storagev1 "k8s.io/api/storage/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
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

// podFieldLabel is the Pod's conversion (pkg/apis/core/v1/conversion.go),
// with spec.host, the old name of spec.nodeName.
func podFieldLabel(label, value string) (string, string, error) {
	if label == "spec.host" {
		return "spec.nodeName", value, nil
	}
	return fieldLabels("metadata.name", "metadata.namespace", "spec.nodeName", "spec.restartPolicy",
		"spec.schedulerName", "spec.serviceAccountName", "spec.hostNetwork", "status.phase",
		"status.podIP", "status.podIPs", "status.nominatedNodeName")(label, value)
}

// defaultService is SetDefaults_Service (pkg/apis/core/v1/defaults.go):
// the writer owns these (transcript 92).
func defaultService(obj runtime.Object, _ metav1.Time) {
	s := &obj.(*corev1.Service).Spec
	if s.SessionAffinity == "" {
		s.SessionAffinity = corev1.ServiceAffinityNone
	}
	if s.SessionAffinity == corev1.ServiceAffinityNone {
		s.SessionAffinityConfig = nil
	}
	if s.SessionAffinity == corev1.ServiceAffinityClientIP &&
		(s.SessionAffinityConfig == nil || s.SessionAffinityConfig.ClientIP == nil || s.SessionAffinityConfig.ClientIP.TimeoutSeconds == nil) {
		s.SessionAffinityConfig = &corev1.SessionAffinityConfig{ClientIP: &corev1.ClientIPConfig{
			TimeoutSeconds: ptr.To(corev1.DefaultClientIPServiceAffinitySeconds),
		}}
	}
	if s.Type == "" {
		s.Type = corev1.ServiceTypeClusterIP
	}
	for i := range s.Ports {
		p := &s.Ports[i]
		if p.Protocol == "" {
			p.Protocol = corev1.ProtocolTCP
		}
		if p.TargetPort == intstr.FromInt32(0) || p.TargetPort == intstr.FromString("") {
			p.TargetPort = intstr.FromInt32(p.Port)
		}
	}
	external := s.Type == corev1.ServiceTypeNodePort || s.Type == corev1.ServiceTypeLoadBalancer || len(s.ExternalIPs) > 0
	if external && s.ExternalTrafficPolicy == "" {
		s.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyCluster
	}
	if s.InternalTrafficPolicy == nil &&
		(s.Type == corev1.ServiceTypeNodePort || s.Type == corev1.ServiceTypeLoadBalancer || s.Type == corev1.ServiceTypeClusterIP) {
		s.InternalTrafficPolicy = ptr.To(corev1.ServiceInternalTrafficPolicyCluster)
	}
	if s.Type == corev1.ServiceTypeLoadBalancer && s.AllocateLoadBalancerNodePorts == nil {
		s.AllocateLoadBalancerNodePorts = ptr.To(true)
	}
}

// The service ranges: kube-apiserver's defaults,
// --service-cluster-ip-range 10.0.0.0/24 (the transcripts' server's:
// the kubernetes Service is 10.0.0.1, transcript 91) and
// --service-node-port-range 30000-32767.
const (
	serviceIPPrefix  = "10.0.0."
	serviceIPFirst   = 1   // 10.0.0.1, the kubernetes Service's
	serviceIPLast    = 254 // the broadcast address is never handed out
	serviceIPDynamic = 16  // the lower band is kept for IPs asked for by name
	nodePortFirst    = 30000
	nodePortLast     = 32767
)

// allocateService is what kube-apiserver's service REST storage does on
// create (pkg/registry/core/service/storage/alloc.go): a ClusterIP,
// NodePort or LoadBalancer Service gets a cluster IP from the service
// range, unless it names one ("None" makes it headless), and its
// ipFamilies and ipFamilyPolicy (single-stack IPv4 here); NodePort and
// LoadBalancer ports get node ports. kube-apiserver picks free values at
// random; the workshop cluster takes the lowest free one (for cluster
// IPs, above the lower band, as kube-apiserver prefers), so that output
// is the same at every run. An IP or port already taken is refused as
// kube-apiserver refuses it.
func allocateService(s *store, obj runtime.Object) error {
	svc := obj.(*corev1.Service)
	spec := &svc.Spec
	if spec.Type == corev1.ServiceTypeExternalName {
		return nil
	}
	usedIPs, usedPorts := map[string]bool{}, map[int32]bool{}
	for _, o := range s.objectsOf(servicesGVR) {
		other := o.(*corev1.Service)
		for _, ip := range other.Spec.ClusterIPs {
			usedIPs[ip] = true
		}
		for _, p := range other.Spec.Ports {
			if p.NodePort != 0 {
				usedPorts[p.NodePort] = true
			}
		}
	}
	invalid := func(path *field.Path, value any, msg string) error {
		return apierrors.NewInvalid(schema.GroupKind{Kind: "Service"}, svc.Name, field.ErrorList{field.Invalid(path, value, msg)})
	}
	switch {
	case spec.ClusterIP == corev1.ClusterIPNone:
		spec.ClusterIPs = []string{corev1.ClusterIPNone}
	case spec.ClusterIP != "":
		if usedIPs[spec.ClusterIP] {
			return invalid(field.NewPath("spec", "clusterIPs").Index(0), []string{spec.ClusterIP},
				fmt.Sprintf("failed to allocate IP %s: provided IP is already allocated", spec.ClusterIP))
		}
		spec.ClusterIPs = []string{spec.ClusterIP}
	default:
		ip := ""
		for _, n := range append(seq(serviceIPDynamic, serviceIPLast), seq(serviceIPFirst+1, serviceIPDynamic-1)...) {
			if c := serviceIPPrefix + strconv.Itoa(n); !usedIPs[c] {
				ip = c
				break
			}
		}
		if ip == "" {
			return apierrors.NewInternalError(fmt.Errorf("failed to allocate a serviceIP: range is full"))
		}
		spec.ClusterIP, spec.ClusterIPs = ip, []string{ip}
	}
	if len(spec.IPFamilies) == 0 {
		spec.IPFamilies = []corev1.IPFamily{corev1.IPv4Protocol}
	}
	if spec.IPFamilyPolicy == nil {
		spec.IPFamilyPolicy = ptr.To(corev1.IPFamilyPolicySingleStack)
	}
	wantsNodePorts := spec.Type == corev1.ServiceTypeNodePort ||
		(spec.Type == corev1.ServiceTypeLoadBalancer && (spec.AllocateLoadBalancerNodePorts == nil || *spec.AllocateLoadBalancerNodePorts))
	if !wantsNodePorts {
		return nil
	}
	next := int32(nodePortFirst)
	for i := range spec.Ports {
		p := &spec.Ports[i]
		if p.NodePort != 0 {
			if usedPorts[p.NodePort] {
				return invalid(field.NewPath("spec", "ports").Index(i).Child("nodePort"), p.NodePort,
					"provided port is already allocated")
			}
			usedPorts[p.NodePort] = true
			continue
		}
		for next <= nodePortLast && usedPorts[next] {
			next++
		}
		if next > nodePortLast {
			return apierrors.NewInternalError(fmt.Errorf("failed to allocate a nodePort: range is full"))
		}
		p.NodePort = next
		usedPorts[next] = true
	}
	return nil
}

var servicesGVR = corev1.SchemeGroupVersion.WithResource("services")

func seq(from, to int) []int {
	var out []int
	for n := from; n <= to; n++ {
		out = append(out, n)
	}
	return out
}

// defaultEndpoints: SetDefaults_EndpointPort, each port's protocol TCP.
func defaultEndpoints(obj runtime.Object, _ metav1.Time) {
	for i := range obj.(*corev1.Endpoints).Subsets {
		ss := &obj.(*corev1.Endpoints).Subsets[i]
		for j := range ss.Ports {
			if ss.Ports[j].Protocol == "" {
				ss.Ports[j].Protocol = corev1.ProtocolTCP
			}
		}
	}
}

// defaultSecret: the v1 conversion writes stringData over data (it is
// never stored), and SetDefaults_Secret types it Opaque (transcript 94;
// both happen at decoding, so the writer owns them).
func defaultSecret(obj runtime.Object, _ metav1.Time) {
	s := obj.(*corev1.Secret)
	if len(s.StringData) > 0 {
		if s.Data == nil {
			s.Data = map[string][]byte{}
		}
		for k, v := range s.StringData {
			s.Data[k] = []byte(v)
		}
		s.StringData = nil
	}
	if s.Type == "" {
		s.Type = corev1.SecretTypeOpaque
	}
}

// validateSecretUpdate is ValidateSecretUpdate's own rules
// (pkg/apis/core/validation/validation.go): the type never changes, and
// an immutable Secret keeps its data and stays immutable.
func validateSecretUpdate(next, old runtime.Object, _ string) field.ErrorList {
	n, o := next.(*corev1.Secret), old.(*corev1.Secret)
	errs := apimachineryvalidation.ValidateImmutableField(n.Type, o.Type, field.NewPath("type"))
	if ptr.Deref(o.Immutable, false) {
		errs = append(errs, immutableFields(n.Immutable, map[string]bool{"data": !apiequality.Semantic.DeepEqual(n.Data, o.Data)}, "data")...)
	}
	return errs
}

// validateConfigMapUpdate is ValidateConfigMapUpdate's own rule: an
// immutable ConfigMap keeps its data and binaryData and stays immutable.
func validateConfigMapUpdate(next, old runtime.Object, _ string) field.ErrorList {
	n, o := next.(*corev1.ConfigMap), old.(*corev1.ConfigMap)
	if !ptr.Deref(o.Immutable, false) {
		return nil
	}
	return immutableFields(n.Immutable, map[string]bool{
		"data":       !apiequality.Semantic.DeepEqual(n.Data, o.Data),
		"binaryData": !apiequality.Semantic.DeepEqual(n.BinaryData, o.BinaryData),
	}, "data", "binaryData")
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

// eventFields is the core Event's ToSelectableFields
// (pkg/registry/core/event/strategy.go).
func eventFields(e *corev1.Event) fields.Set {
	source := e.Source.Component
	if source == "" {
		source = e.ReportingController
	}
	return fields.Set{
		"involvedObject.kind":            e.InvolvedObject.Kind,
		"involvedObject.namespace":       e.InvolvedObject.Namespace,
		"involvedObject.name":            e.InvolvedObject.Name,
		"involvedObject.uid":             string(e.InvolvedObject.UID),
		"involvedObject.apiVersion":      e.InvolvedObject.APIVersion,
		"involvedObject.resourceVersion": e.InvolvedObject.ResourceVersion,
		"involvedObject.fieldPath":       e.InvolvedObject.FieldPath,
		"reason":                         e.Reason,
		"reportingComponent":             e.ReportingController,
		"source":                         source,
		"type":                           e.Type,
	}
}

// eventsV1Fields are the same fields of an events.k8s.io Event, by the
// names its conversion accepts (pkg/apis/events/v1/conversion.go).
func eventsV1Fields(e *eventsv1.Event) fields.Set {
	return fields.Set{
		"regarding.kind":            e.Regarding.Kind,
		"regarding.namespace":       e.Regarding.Namespace,
		"regarding.name":            e.Regarding.Name,
		"regarding.uid":             string(e.Regarding.UID),
		"regarding.apiVersion":      e.Regarding.APIVersion,
		"regarding.resourceVersion": e.Regarding.ResourceVersion,
		"regarding.fieldPath":       e.Regarding.FieldPath,
		"reason":                    e.Reason,
		"reportingController":       e.ReportingController,
		"type":                      e.Type,
	}
}

// defaultPVC: SetDefaults_PersistentVolumeClaimSpec, volumeMode Filesystem.
func defaultPVC(obj runtime.Object, _ metav1.Time) {
	p := obj.(*corev1.PersistentVolumeClaim)
	if p.Spec.VolumeMode == nil {
		p.Spec.VolumeMode = ptr.To(corev1.PersistentVolumeFilesystem)
	}
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

// defaultJob is SetDefaults_Job (pkg/apis/batch/v1/defaults.go) and the
// template's pod defaults (transcript 93).
func defaultJob(obj runtime.Object, _ metav1.Time) {
	j := obj.(*batchv1.Job)
	s := &j.Spec
	if s.Completions == nil && s.Parallelism == nil {
		s.Completions = ptr.To[int32](1)
		s.Parallelism = ptr.To[int32](1)
	}
	if s.Parallelism == nil {
		s.Parallelism = ptr.To[int32](1)
	}
	if s.BackoffLimit == nil {
		s.BackoffLimit = ptr.To[int32](6)
		if s.BackoffLimitPerIndex != nil {
			s.BackoffLimit = ptr.To[int32](1<<31 - 1)
		}
	}
	if s.Template.Labels != nil && len(j.Labels) == 0 {
		j.Labels = maps.Clone(s.Template.Labels)
	}
	if s.CompletionMode == nil {
		s.CompletionMode = ptr.To(batchv1.NonIndexedCompletion)
	}
	if s.Suspend == nil {
		s.Suspend = ptr.To(false)
	}
	if s.PodReplacementPolicy == nil {
		s.PodReplacementPolicy = ptr.To(batchv1.TerminatingOrFailed)
		if s.PodFailurePolicy != nil {
			s.PodReplacementPolicy = ptr.To(batchv1.Failed)
		}
	}
	if s.ManualSelector == nil {
		s.ManualSelector = ptr.To(false)
	}
	defaultPodSpec(&s.Template.Spec)
}

// admitJob is the Job strategy's generateSelector
// (pkg/registry/batch/job/strategy.go): the template is labelled with
// the Job's name and uid, and selected by its uid. The labels then reach
// the Job's own metadata as SetDefaults_Job copies them when the stored
// Job is read back (transcript 93: no one owns them).
func admitJob(obj runtime.Object, _ metav1.Time) {
	j := obj.(*batchv1.Job)
	if j.Spec.ManualSelector != nil && *j.Spec.ManualSelector {
		return
	}
	t := &j.Spec.Template
	if t.Labels == nil {
		t.Labels = map[string]string{}
	}
	for _, k := range []string{"job-name", batchv1.JobNameLabel} {
		if _, ok := t.Labels[k]; !ok {
			t.Labels[k] = j.Name
		}
	}
	for _, k := range []string{"controller-uid", batchv1.ControllerUidLabel} {
		if _, ok := t.Labels[k]; !ok {
			t.Labels[k] = string(j.UID)
		}
	}
	if j.Spec.Selector == nil {
		j.Spec.Selector = &metav1.LabelSelector{}
	}
	if j.Spec.Selector.MatchLabels == nil {
		j.Spec.Selector.MatchLabels = map[string]string{}
	}
	if _, ok := j.Spec.Selector.MatchLabels[batchv1.ControllerUidLabel]; !ok {
		j.Spec.Selector.MatchLabels[batchv1.ControllerUidLabel] = string(j.UID)
	}
	if len(j.Labels) == 0 {
		j.Labels = maps.Clone(t.Labels)
	}
}

// defaultCronJob is SetDefaults_CronJob, and its job template's pod defaults.
func defaultCronJob(obj runtime.Object, _ metav1.Time) {
	s := &obj.(*batchv1.CronJob).Spec
	if s.ConcurrencyPolicy == "" {
		s.ConcurrencyPolicy = batchv1.AllowConcurrent
	}
	if s.Suspend == nil {
		s.Suspend = ptr.To(false)
	}
	if s.SuccessfulJobsHistoryLimit == nil {
		s.SuccessfulJobsHistoryLimit = ptr.To[int32](3)
	}
	if s.FailedJobsHistoryLimit == nil {
		s.FailedJobsHistoryLimit = ptr.To[int32](1)
	}
	defaultPodSpec(&s.JobTemplate.Spec.Template.Spec)
}

// defaultNetworkPolicy is SetDefaults_NetworkPolicy and
// SetDefaults_NetworkPolicyPort (pkg/apis/networking/v1/defaults.go).
func defaultNetworkPolicy(obj runtime.Object, _ metav1.Time) {
	s := &obj.(*networkingv1.NetworkPolicy).Spec
	if len(s.PolicyTypes) == 0 {
		s.PolicyTypes = []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}
		if len(s.Egress) != 0 {
			s.PolicyTypes = append(s.PolicyTypes, networkingv1.PolicyTypeEgress)
		}
	}
	tcp := func(ports []networkingv1.NetworkPolicyPort) {
		for i := range ports {
			if ports[i].Protocol == nil {
				ports[i].Protocol = ptr.To(corev1.ProtocolTCP)
			}
		}
	}
	for i := range s.Ingress {
		tcp(s.Ingress[i].Ports)
	}
	for i := range s.Egress {
		tcp(s.Egress[i].Ports)
	}
}

// defaultStorageClass is SetDefaults_StorageClass (pkg/apis/storage/v1/defaults.go).
func defaultStorageClass(obj runtime.Object, _ metav1.Time) {
	sc := obj.(*storagev1.StorageClass)
	if sc.ReclaimPolicy == nil {
		sc.ReclaimPolicy = ptr.To(corev1.PersistentVolumeReclaimDelete)
	}
	if sc.VolumeBindingMode == nil {
		sc.VolumeBindingMode = ptr.To(storagev1.VolumeBindingImmediate)
	}
}

func podFields(obj runtime.Object) fields.Set {
	p := obj.(*corev1.Pod)
	return fields.Set{
		"spec.nodeName":            p.Spec.NodeName,
		"spec.restartPolicy":       string(p.Spec.RestartPolicy),
		"spec.schedulerName":       p.Spec.SchedulerName,
		"spec.serviceAccountName":  p.Spec.ServiceAccountName,
		"spec.hostNetwork":         fmt.Sprint(p.Spec.HostNetwork),
		"status.phase":             string(p.Status.Phase),
		"status.podIP":             p.Status.PodIP,
		"status.nominatedNodeName": p.Status.NominatedNodeName,
	}
}

// defaultNamespace: the metadata.name label is a default, owned by the
// writer (transcript 00).
func defaultNamespace(obj runtime.Object, _ metav1.Time) {
	ns := obj.(*corev1.Namespace)
	if ns.Labels == nil {
		ns.Labels = map[string]string{}
	}
	ns.Labels[corev1.LabelMetadataName] = ns.Name
}

// admitNamespace: the create strategy adds the kubernetes finalizer and
// phase Active.
func admitNamespace(obj runtime.Object, _ metav1.Time) {
	ns := obj.(*corev1.Namespace)
	ns.Spec.Finalizers = []corev1.FinalizerName{corev1.FinalizerKubernetes}
	ns.Status = corev1.NamespaceStatus{Phase: corev1.NamespaceActive}
}

// admitNode mirrors the TaintNodesByCondition admission plugin: a new
// node is tainted not-ready until its kubelet reports in (transcript 28).
func admitNode(obj runtime.Object, _ metav1.Time) {
	n := obj.(*corev1.Node)
	for _, t := range n.Spec.Taints {
		if t.Key == corev1.TaintNodeNotReady && t.Effect == corev1.TaintEffectNoSchedule {
			return
		}
	}
	n.Spec.Taints = append(n.Spec.Taints, corev1.Taint{Key: corev1.TaintNodeNotReady, Effect: corev1.TaintEffectNoSchedule})
}

// defaultPod fills the pod defaults of kube-apiserver's scheme
// (transcript 01), so that objects read the same in both modes.
func defaultPod(obj runtime.Object, _ metav1.Time) {
	p := obj.(*corev1.Pod)
	defaultPodSpec(&p.Spec)
	if p.Spec.EnableServiceLinks == nil {
		p.Spec.EnableServiceLinks = ptr.To(true)
	}
}

// defaultPodSpec fills the defaults of a pod spec, a pod's or a
// template's (transcript 30).
func defaultPodSpec(s *corev1.PodSpec) {
	// serviceAccount is the deprecated alias of serviceAccountName; the
	// defaults keep the two equal, serviceAccountName winning
	// (https://github.com/kubernetes/kubernetes/blob/v1.37.2/pkg/apis/core/v1/defaults.go#L249).
	if s.ServiceAccountName == "" {
		s.ServiceAccountName = s.DeprecatedServiceAccount
	}
	s.DeprecatedServiceAccount = s.ServiceAccountName
	for i := range s.InitContainers {
		defaultContainer(&s.InitContainers[i])
	}
	for i := range s.Containers {
		defaultContainer(&s.Containers[i])
	}
	if s.RestartPolicy == "" {
		s.RestartPolicy = corev1.RestartPolicyAlways
	}
	if s.TerminationGracePeriodSeconds == nil {
		s.TerminationGracePeriodSeconds = ptr.To[int64](corev1.DefaultTerminationGracePeriodSeconds)
	}
	if s.DNSPolicy == "" {
		s.DNSPolicy = corev1.DNSClusterFirst
	}
	if s.SecurityContext == nil {
		s.SecurityContext = &corev1.PodSecurityContext{}
	}
	if s.SchedulerName == "" {
		s.SchedulerName = corev1.DefaultSchedulerName
	}
}

// defaultContainer is kube-apiserver's SetDefaults_Container, which its
// generated defaulters apply to init containers and containers alike.
func defaultContainer(c *corev1.Container) {
	if c.TerminationMessagePath == "" {
		c.TerminationMessagePath = corev1.TerminationMessagePathDefault
	}
	if c.TerminationMessagePolicy == "" {
		c.TerminationMessagePolicy = corev1.TerminationMessageReadFile
	}
	if c.ImagePullPolicy == "" {
		c.ImagePullPolicy = corev1.PullIfNotPresent
		if tagIsLatest(c.Image) {
			c.ImagePullPolicy = corev1.PullAlways
		}
	}
}

// admitPod adds what admission plugins and the pod create strategy add:
// the service account and its token volume, default tolerations,
// priority, and the initial status (transcript 01; the service account
// as kube-apiserver v1.37.2's ServiceAccount admission plugin does,
// which the transcripts' server ran without).
func admitPod(obj runtime.Object, now metav1.Time) {
	p := obj.(*corev1.Pod)
	s := &p.Spec
	// The DefaultTolerationSeconds admission plugin: unless the pod
	// tolerates the taint itself.
	for _, key := range []string{corev1.TaintNodeNotReady, corev1.TaintNodeUnreachable} {
		if toleratesNoExecute(s.Tolerations, key) {
			continue
		}
		s.Tolerations = append(s.Tolerations, corev1.Toleration{
			Key: key, Operator: corev1.TolerationOpExists,
			Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](300),
		})
	}
	// The Priority admission plugin.
	if s.Priority == nil {
		s.Priority = ptr.To[int32](0)
	}
	if s.PreemptionPolicy == nil {
		pp := corev1.PreemptLowerPriority
		s.PreemptionPolicy = &pp
	}
	admitServiceAccount(p)
	if p.Status.Phase == "" {
		p.Status.Phase = corev1.PodPending
	}
	if len(s.SchedulingGates) > 0 && s.NodeName == "" {
		p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{
			Type: corev1.PodScheduled, Status: corev1.ConditionFalse,
			LastTransitionTime: now,
			Reason:             corev1.PodReasonSchedulingGated,
			Message:            "Scheduling is blocked due to non-empty scheduling gates",
		})
	}
	if p.Status.QOSClass == "" {
		p.Status.QOSClass = corev1.PodQOSBestEffort
		for _, c := range s.Containers {
			if len(c.Resources.Requests) > 0 || len(c.Resources.Limits) > 0 {
				p.Status.QOSClass = corev1.PodQOSBurstable
			}
		}
	}
}

// The ServiceAccount admission plugin's names
// (https://github.com/kubernetes/kubernetes/blob/v1.37.2/plugin/pkg/admission/serviceaccount/admission.go#L44).
const (
	defaultServiceAccount   = "default"
	serviceAccountVolume    = "kube-api-access"
	serviceAccountMountPath = "/var/run/secrets/kubernetes.io/serviceaccount"
)

// admitServiceAccount is the ServiceAccount admission plugin's Admit on a
// pod's create (admission.go#L138): a pod with no service account gets
// "default", and unless automountServiceAccountToken says false, every
// init container and container that mounts nothing at
// serviceAccountMountPath mounts a projected volume of the token, the
// cluster's CA and the namespace, named kube-api-access-<5 characters>
// (mountServiceAccountToken, admission.go#L418). The workshop cluster has
// no ServiceAccount objects: it acts as if every namespace had its
// "default" one, as the controller-manager makes them, with no
// automountServiceAccountToken and no imagePullSecrets of its own. A
// mirror pod (kubelet's) is left alone, as the plugin leaves it.
func admitServiceAccount(p *corev1.Pod) {
	s := &p.Spec
	if _, mirror := p.Annotations[corev1.MirrorPodAnnotationKey]; mirror {
		return
	}
	if s.ServiceAccountName == "" {
		s.ServiceAccountName = defaultServiceAccount
		s.DeprecatedServiceAccount = defaultServiceAccount
	}
	if s.AutomountServiceAccountToken != nil && !*s.AutomountServiceAccountToken {
		return
	}
	name := ""
	for _, v := range s.Volumes {
		if strings.HasPrefix(v.Name, serviceAccountVolume+"-") {
			name = v.Name
			break
		}
	}
	hasVolume := name != ""
	if !hasVolume {
		name = serviceAccountVolume + "-" + volumeSuffix(p.Namespace, p.Name)
	}
	mounted := false
	mount := func(c *corev1.Container) {
		for _, m := range c.VolumeMounts {
			if m.MountPath == serviceAccountMountPath {
				return
			}
		}
		c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: name, ReadOnly: true, MountPath: serviceAccountMountPath})
		mounted = true
	}
	for i := range s.InitContainers {
		mount(&s.InitContainers[i])
	}
	for i := range s.Containers {
		mount(&s.Containers[i])
	}
	if hasVolume || !mounted {
		return
	}
	s.Volumes = append(s.Volumes, corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{
		Projected: &corev1.ProjectedVolumeSource{
			DefaultMode: ptr.To(corev1.ProjectedVolumeSourceDefaultMode),
			Sources: []corev1.VolumeProjection{
				// An hour and 7 s: kube-apiserver's
				// WarnOnlyBoundTokenExpirationSeconds.
				{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: ptr.To[int64](3607)}},
				{ConfigMap: &corev1.ConfigMapProjection{
					LocalObjectReference: corev1.LocalObjectReference{Name: "kube-root-ca.crt"},
					Items:                []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}},
				}},
				{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{{
					Path: "namespace", FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"},
				}}}},
			},
		},
	}})
}

// volumeSuffix stands in for the 5 random characters kube-apiserver
// gives the token volume (names.SimpleNameGenerator): the same
// characters, but taken from a hash of the pod's namespace and name, so
// that the workshop cluster's output is the same at every run, and a pod
// made again under its old name gets its old volume name.
func volumeSuffix(namespace, name string) string {
	const alphabet = "bcdfghjklmnpqrstvwxz2456789" // k8s.io/apimachinery/pkg/util/rand's
	h := fnv.New32a()
	h.Write([]byte(namespace + "/" + name))
	n := h.Sum32()
	b := make([]byte, 5)
	for i := range b {
		b[i] = alphabet[n%uint32(len(alphabet))]
		n /= uint32(len(alphabet))
	}
	return string(b)
}

// toleratesNoExecute reports whether tolerations already tolerate the
// NoExecute taint key (any key, for an empty key with Exists).
func toleratesNoExecute(tolerations []corev1.Toleration, key string) bool {
	for _, t := range tolerations {
		if (t.Effect == "" || t.Effect == corev1.TaintEffectNoExecute) &&
			(t.Key == key || (t.Key == "" && t.Operator == corev1.TolerationOpExists)) {
			return true
		}
	}
	return false
}

func tagIsLatest(image string) bool {
	if i := strings.LastIndex(image, "@"); i >= 0 {
		return false
	}
	slash := strings.LastIndex(image, "/")
	colon := strings.LastIndex(image, ":")
	return colon <= slash || image[colon+1:] == "latest"
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
