package apiserver

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	certificatesv1beta1 "k8s.io/api/certificates/v1beta1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	eventsv1 "k8s.io/api/events/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	rbacv1beta1 "k8s.io/api/rbac/v1beta1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

// upstreamColumns are the column definitions of every served built-in
// kind as kube-apiserver v1.37.2 prints it, copied as test vectors from
// k8s.io/kubernetes pkg/printers/internalversion/printers.go AddHandlers
// (<kind>ColumnDefinitions, import alias apiv1 written corev1), and for
// the kinds whose registry has no printer (limitranges, roles,
// clusterroles: rest.NewDefaultTableConvertor) from k8s.io/apiserver
// pkg/registry/rest/table.go.
var upstreamColumns = map[schema.GroupResource][]metav1.TableColumnDefinition{
	{Resource: "namespaces"}: {
		{Name: "Name", Type: "string", Format: "name", Description: metav1.ObjectMeta{}.SwaggerDoc()["name"]},
		{Name: "Status", Type: "string", Description: "The status of the namespace"},
		{Name: "Age", Type: "string", Description: metav1.ObjectMeta{}.SwaggerDoc()["creationTimestamp"]},
	},
	{Resource: "nodes"}: {
		{Name: "Name", Type: "string", Format: "name", Description: metav1.ObjectMeta{}.SwaggerDoc()["name"]},
		{Name: "Status", Type: "string", Description: "The status of the node"},
		{Name: "Roles", Type: "string", Description: "The roles of the node"},
		{Name: "Age", Type: "string", Description: metav1.ObjectMeta{}.SwaggerDoc()["creationTimestamp"]},
		{Name: "Version", Type: "string", Description: corev1.NodeSystemInfo{}.SwaggerDoc()["kubeletVersion"]},
		{Name: "Internal-IP", Type: "string", Priority: 1, Description: corev1.NodeStatus{}.SwaggerDoc()["addresses"]},
		{Name: "External-IP", Type: "string", Priority: 1, Description: corev1.NodeStatus{}.SwaggerDoc()["addresses"]},
		{Name: "OS-Image", Type: "string", Priority: 1, Description: corev1.NodeSystemInfo{}.SwaggerDoc()["osImage"]},
		{Name: "Kernel-Version", Type: "string", Priority: 1, Description: corev1.NodeSystemInfo{}.SwaggerDoc()["kernelVersion"]},
		{Name: "Container-Runtime", Type: "string", Priority: 1, Description: corev1.NodeSystemInfo{}.SwaggerDoc()["containerRuntimeVersion"]},
	},
	{Resource: "pods"}: {
		{Name: "Name", Type: "string", Format: "name", Description: metav1.ObjectMeta{}.SwaggerDoc()["name"]},
		{Name: "Ready", Type: "string", Description: "The aggregate readiness state of this pod for accepting traffic."},
		{Name: "Status", Type: "string", Description: "The aggregate status of the containers in this pod."},
		{Name: "Restarts", Type: "string", Description: "The number of times the containers in this pod have been restarted and when the last container in this pod has restarted."},
		{Name: "Age", Type: "string", Description: metav1.ObjectMeta{}.SwaggerDoc()["creationTimestamp"]},
		{Name: "IP", Type: "string", Priority: 1, Description: corev1.PodStatus{}.SwaggerDoc()["podIP"]},
		{Name: "Node", Type: "string", Priority: 1, Description: corev1.PodSpec{}.SwaggerDoc()["nodeName"]},
		{Name: "Nominated Node", Type: "string", Priority: 1, Description: corev1.PodStatus{}.SwaggerDoc()["nominatedNodeName"]},
		{Name: "Readiness Gates", Type: "string", Priority: 1, Description: corev1.PodSpec{}.SwaggerDoc()["readinessGates"]},
	},
	{Resource: "configmaps"}: {
		{Name: "Name", Type: "string", Format: "name", Description: metav1.ObjectMeta{}.SwaggerDoc()["name"]},
		{Name: "Data", Type: "string", Description: corev1.ConfigMap{}.SwaggerDoc()["data"]},
		{Name: "Age", Type: "string", Description: metav1.ObjectMeta{}.SwaggerDoc()["creationTimestamp"]},
	},
	{Resource: "services"}: {
		{Name: "Name", Type: "string", Format: "name", Description: metav1.ObjectMeta{}.SwaggerDoc()["name"]},
		{Name: "Type", Type: "string", Description: corev1.ServiceSpec{}.SwaggerDoc()["type"]},
		{Name: "Cluster-IP", Type: "string", Description: corev1.ServiceSpec{}.SwaggerDoc()["clusterIP"]},
		{Name: "External-IP", Type: "string", Description: corev1.ServiceSpec{}.SwaggerDoc()["externalIPs"]},
		{Name: "Port(s)", Type: "string", Description: corev1.ServiceSpec{}.SwaggerDoc()["ports"]},
		{Name: "Age", Type: "string", Description: metav1.ObjectMeta{}.SwaggerDoc()["creationTimestamp"]},
		{Name: "Selector", Type: "string", Priority: 1, Description: corev1.ServiceSpec{}.SwaggerDoc()["selector"]},
	},
	{Resource: "endpoints"}: {
		{Name: "Name", Type: "string", Format: "name", Description: metav1.ObjectMeta{}.SwaggerDoc()["name"]},
		{Name: "Endpoints", Type: "string", Description: corev1.Endpoints{}.SwaggerDoc()["subsets"]},
		{Name: "Age", Type: "string", Description: metav1.ObjectMeta{}.SwaggerDoc()["creationTimestamp"]},
	},
	{Resource: "secrets"}: {
		{Name: "Name", Type: "string", Format: "name", Description: metav1.ObjectMeta{}.SwaggerDoc()["name"]},
		{Name: "Type", Type: "string", Description: corev1.Secret{}.SwaggerDoc()["type"]},
		{Name: "Data", Type: "string", Description: corev1.Secret{}.SwaggerDoc()["data"]},
		{Name: "Age", Type: "string", Description: metav1.ObjectMeta{}.SwaggerDoc()["creationTimestamp"]},
	},
	{Resource: "serviceaccounts"}: {
		{Name: "Name", Type: "string", Format: "name", Description: metav1.ObjectMeta{}.SwaggerDoc()["name"]},
		{Name: "Age", Type: "string", Description: metav1.ObjectMeta{}.SwaggerDoc()["creationTimestamp"]},
	},
	{Resource: "events"}: {
		{Name: "Last Seen", Type: "string", Description: corev1.Event{}.SwaggerDoc()["lastTimestamp"]},
		{Name: "Type", Type: "string", Description: corev1.Event{}.SwaggerDoc()["type"]},
		{Name: "Reason", Type: "string", Description: corev1.Event{}.SwaggerDoc()["reason"]},
		{Name: "Object", Type: "string", Description: corev1.Event{}.SwaggerDoc()["involvedObject"]},
		{Name: "Subobject", Type: "string", Priority: 1, Description: corev1.Event{}.InvolvedObject.SwaggerDoc()["fieldPath"]},
		{Name: "Source", Type: "string", Priority: 1, Description: corev1.Event{}.SwaggerDoc()["source"]},
		{Name: "Message", Type: "string", Description: corev1.Event{}.SwaggerDoc()["message"]},
		{Name: "First Seen", Type: "string", Priority: 1, Description: corev1.Event{}.SwaggerDoc()["firstTimestamp"]},
		{Name: "Count", Type: "string", Priority: 1, Description: corev1.Event{}.SwaggerDoc()["count"]},
		{Name: "Name", Type: "string", Priority: 1, Format: "name", Description: metav1.ObjectMeta{}.SwaggerDoc()["name"]},
	},
	{Resource: "persistentvolumeclaims"}: {
		{Name: "Name", Type: "string", Format: "name", Description: metav1.ObjectMeta{}.SwaggerDoc()["name"]},
		{Name: "Status", Type: "string", Description: corev1.PersistentVolumeClaimStatus{}.SwaggerDoc()["phase"]},
		{Name: "Volume", Type: "string", Description: corev1.PersistentVolumeClaimSpec{}.SwaggerDoc()["volumeName"]},
		{Name: "Capacity", Type: "string", Description: corev1.PersistentVolumeClaimStatus{}.SwaggerDoc()["capacity"]},
		{Name: "Access Modes", Type: "string", Description: corev1.PersistentVolumeClaimStatus{}.SwaggerDoc()["accessModes"]},
		{Name: "StorageClass", Type: "string", Description: "StorageClass of the pvc"},
		{Name: "VolumeAttributesClass", Type: "string", Description: "VolumeAttributesClass of the pvc"},
		{Name: "Age", Type: "string", Description: metav1.ObjectMeta{}.SwaggerDoc()["creationTimestamp"]},
		{Name: "VolumeMode", Type: "string", Priority: 1, Description: corev1.PersistentVolumeClaimSpec{}.SwaggerDoc()["volumeMode"]},
	},
	{Resource: "persistentvolumes"}: {
		{Name: "Name", Type: "string", Format: "name", Description: metav1.ObjectMeta{}.SwaggerDoc()["name"]},
		{Name: "Capacity", Type: "string", Description: corev1.PersistentVolumeSpec{}.SwaggerDoc()["capacity"]},
		{Name: "Access Modes", Type: "string", Description: corev1.PersistentVolumeSpec{}.SwaggerDoc()["accessModes"]},
		{Name: "Reclaim Policy", Type: "string", Description: corev1.PersistentVolumeSpec{}.SwaggerDoc()["persistentVolumeReclaimPolicy"]},
		{Name: "Status", Type: "string", Description: corev1.PersistentVolumeStatus{}.SwaggerDoc()["phase"]},
		{Name: "Claim", Type: "string", Description: corev1.PersistentVolumeSpec{}.SwaggerDoc()["claimRef"]},
		{Name: "StorageClass", Type: "string", Description: "StorageClass of the pv"},
		{Name: "VolumeAttributesClass", Type: "string", Description: "VolumeAttributesClass of the pv"},
		{Name: "Reason", Type: "string", Description: corev1.PersistentVolumeStatus{}.SwaggerDoc()["reason"]},
		{Name: "Age", Type: "string", Description: metav1.ObjectMeta{}.SwaggerDoc()["creationTimestamp"]},
		{Name: "VolumeMode", Type: "string", Priority: 1, Description: corev1.PersistentVolumeSpec{}.SwaggerDoc()["volumeMode"]},
	},
	{Resource: "limitranges"}: defaultTableConvertorColumns,
	{Resource: "resourcequotas"}: {
		{Name: "Name", Type: "string", Format: "name", Description: metav1.ObjectMeta{}.SwaggerDoc()["name"]},
		{Name: "Request", Type: "string", Description: "Request represents a minimum amount of cpu/memory that a container may consume."},
		{Name: "Limit", Type: "string", Description: "Limits control the maximum amount of cpu/memory that a container may use independent of contention on the node."},
		{Name: "Age", Type: "string", Description: metav1.ObjectMeta{}.SwaggerDoc()["creationTimestamp"]},
	},
	{Resource: "podtemplates"}: {
		{Name: "Name", Type: "string", Format: "name", Description: metav1.ObjectMeta{}.SwaggerDoc()["name"]},
		{Name: "Containers", Type: "string", Description: "Names of each container in the template."},
		{Name: "Images", Type: "string", Description: "Images referenced by each container in the template."},
		{Name: "Pod Labels", Type: "string", Description: "The labels for the pod template."},
	},
	{Group: "apps", Resource: "deployments"}: {
		{Name: "Name", Type: "string", Format: "name", Description: metav1.ObjectMeta{}.SwaggerDoc()["name"]},
		{Name: "Ready", Type: "string", Description: "Number of the pod with ready state"},
		{Name: "Up-to-date", Type: "string", Description: appsv1.DeploymentStatus{}.SwaggerDoc()["updatedReplicas"]},
		{Name: "Available", Type: "string", Description: appsv1.DeploymentStatus{}.SwaggerDoc()["availableReplicas"]},
		{Name: "Age", Type: "string", Description: metav1.ObjectMeta{}.SwaggerDoc()["creationTimestamp"]},
		{Name: "Containers", Type: "string", Priority: 1, Description: "Names of each container in the template."},
		{Name: "Images", Type: "string", Priority: 1, Description: "Images referenced by each container in the template."},
		{Name: "Selector", Type: "string", Priority: 1, Description: appsv1.DeploymentSpec{}.SwaggerDoc()["selector"]},
	},
	{Group: "apps", Resource: "replicasets"}: {
		{Name: "Name", Type: "string", Format: "name", Description: metav1.ObjectMeta{}.SwaggerDoc()["name"]},
		{Name: "Desired", Type: "integer", Description: appsv1.ReplicaSetSpec{}.SwaggerDoc()["replicas"]},
		{Name: "Current", Type: "integer", Description: appsv1.ReplicaSetStatus{}.SwaggerDoc()["replicas"]},
		{Name: "Ready", Type: "integer", Description: appsv1.ReplicaSetStatus{}.SwaggerDoc()["readyReplicas"]},
		{Name: "Age", Type: "string", Description: metav1.ObjectMeta{}.SwaggerDoc()["creationTimestamp"]},
		{Name: "Containers", Type: "string", Priority: 1, Description: "Names of each container in the template."},
		{Name: "Images", Type: "string", Priority: 1, Description: "Images referenced by each container in the template."},
		{Name: "Selector", Type: "string", Priority: 1, Description: appsv1.ReplicaSetSpec{}.SwaggerDoc()["selector"]},
	},
	{Group: "apps", Resource: "statefulsets"}: {
		{Name: "Name", Type: "string", Format: "name", Description: metav1.ObjectMeta{}.SwaggerDoc()["name"]},
		{Name: "Ready", Type: "string", Description: "Number of the pod with ready state"},
		{Name: "Age", Type: "string", Description: metav1.ObjectMeta{}.SwaggerDoc()["creationTimestamp"]},
		{Name: "Containers", Type: "string", Priority: 1, Description: "Names of each container in the template."},
		{Name: "Images", Type: "string", Priority: 1, Description: "Images referenced by each container in the template."},
	},
	{Group: "apps", Resource: "daemonsets"}: {
		{Name: "Name", Type: "string", Format: "name", Description: metav1.ObjectMeta{}.SwaggerDoc()["name"]},
		{Name: "Desired", Type: "integer", Description: appsv1.DaemonSetStatus{}.SwaggerDoc()["desiredNumberScheduled"]},
		{Name: "Current", Type: "integer", Description: appsv1.DaemonSetStatus{}.SwaggerDoc()["currentNumberScheduled"]},
		{Name: "Ready", Type: "integer", Description: appsv1.DaemonSetStatus{}.SwaggerDoc()["numberReady"]},
		{Name: "Up-to-date", Type: "integer", Description: appsv1.DaemonSetStatus{}.SwaggerDoc()["updatedNumberScheduled"]},
		{Name: "Available", Type: "integer", Description: appsv1.DaemonSetStatus{}.SwaggerDoc()["numberAvailable"]},
		{Name: "Node Selector", Type: "string", Description: corev1.PodSpec{}.SwaggerDoc()["nodeSelector"]},
		{Name: "Age", Type: "string", Description: metav1.ObjectMeta{}.SwaggerDoc()["creationTimestamp"]},
		{Name: "Containers", Type: "string", Priority: 1, Description: "Names of each container in the template."},
		{Name: "Images", Type: "string", Priority: 1, Description: "Images referenced by each container in the template."},
		{Name: "Selector", Type: "string", Priority: 1, Description: appsv1.DaemonSetSpec{}.SwaggerDoc()["selector"]},
	},
	{Group: "apps", Resource: "controllerrevisions"}: {
		{Name: "Name", Type: "string", Format: "name", Description: metav1.ObjectMeta{}.SwaggerDoc()["name"]},
		{Name: "Controller", Type: "string", Description: "Controller of the object"},
		{Name: "Revision", Type: "string", Description: appsv1.ControllerRevision{}.SwaggerDoc()["revision"]},
		{Name: "Age", Type: "string", Description: metav1.ObjectMeta{}.SwaggerDoc()["creationTimestamp"]},
	},
	{Group: "events.k8s.io", Resource: "events"}: {
		{Name: "Last Seen", Type: "string", Description: corev1.Event{}.SwaggerDoc()["lastTimestamp"]},
		{Name: "Type", Type: "string", Description: corev1.Event{}.SwaggerDoc()["type"]},
		{Name: "Reason", Type: "string", Description: corev1.Event{}.SwaggerDoc()["reason"]},
		{Name: "Object", Type: "string", Description: corev1.Event{}.SwaggerDoc()["involvedObject"]},
		{Name: "Subobject", Type: "string", Priority: 1, Description: corev1.Event{}.InvolvedObject.SwaggerDoc()["fieldPath"]},
		{Name: "Source", Type: "string", Priority: 1, Description: corev1.Event{}.SwaggerDoc()["source"]},
		{Name: "Message", Type: "string", Description: corev1.Event{}.SwaggerDoc()["message"]},
		{Name: "First Seen", Type: "string", Priority: 1, Description: corev1.Event{}.SwaggerDoc()["firstTimestamp"]},
		{Name: "Count", Type: "string", Priority: 1, Description: corev1.Event{}.SwaggerDoc()["count"]},
		{Name: "Name", Type: "string", Priority: 1, Format: "name", Description: metav1.ObjectMeta{}.SwaggerDoc()["name"]},
	},
	{Group: "autoscaling", Resource: "horizontalpodautoscalers"}: {
		{Name: "Name", Type: "string", Format: "name", Description: metav1.ObjectMeta{}.SwaggerDoc()["name"]},
		{Name: "Reference", Type: "string", Description: autoscalingv2.HorizontalPodAutoscalerSpec{}.SwaggerDoc()["scaleTargetRef"]},
		{Name: "Targets", Type: "string", Description: autoscalingv2.HorizontalPodAutoscalerSpec{}.SwaggerDoc()["metrics"]},
		{Name: "MinPods", Type: "string", Description: autoscalingv2.HorizontalPodAutoscalerSpec{}.SwaggerDoc()["minReplicas"]},
		{Name: "MaxPods", Type: "string", Description: autoscalingv2.HorizontalPodAutoscalerSpec{}.SwaggerDoc()["maxReplicas"]},
		{Name: "Replicas", Type: "string", Description: autoscalingv2.HorizontalPodAutoscalerStatus{}.SwaggerDoc()["currentReplicas"]},
		{Name: "Age", Type: "string", Description: metav1.ObjectMeta{}.SwaggerDoc()["creationTimestamp"]},
	},
	{Group: "batch", Resource: "jobs"}: {
		{Name: "Name", Type: "string", Format: "name", Description: metav1.ObjectMeta{}.SwaggerDoc()["name"]},
		{Name: "Status", Type: "string", Description: "Status of the job."},
		{Name: "Completions", Type: "string", Description: batchv1.JobStatus{}.SwaggerDoc()["succeeded"]},
		{Name: "Duration", Type: "string", Description: "Time required to complete the job."},
		{Name: "Age", Type: "string", Description: metav1.ObjectMeta{}.SwaggerDoc()["creationTimestamp"]},
		{Name: "Containers", Type: "string", Priority: 1, Description: "Names of each container in the template."},
		{Name: "Images", Type: "string", Priority: 1, Description: "Images referenced by each container in the template."},
		{Name: "Selector", Type: "string", Priority: 1, Description: batchv1.JobSpec{}.SwaggerDoc()["selector"]},
	},
	{Group: "batch", Resource: "cronjobs"}: {
		{Name: "Name", Type: "string", Format: "name", Description: metav1.ObjectMeta{}.SwaggerDoc()["name"]},
		{Name: "Schedule", Type: "string", Description: batchv1.CronJobSpec{}.SwaggerDoc()["schedule"]},
		{Name: "Timezone", Type: "string", Description: batchv1.CronJobSpec{}.SwaggerDoc()["timeZone"]},
		{Name: "Suspend", Type: "boolean", Description: batchv1.CronJobSpec{}.SwaggerDoc()["suspend"]},
		{Name: "Active", Type: "integer", Description: batchv1.CronJobStatus{}.SwaggerDoc()["active"]},
		{Name: "Last Schedule", Type: "string", Description: batchv1.CronJobStatus{}.SwaggerDoc()["lastScheduleTime"]},
		{Name: "Age", Type: "string", Description: metav1.ObjectMeta{}.SwaggerDoc()["creationTimestamp"]},
		{Name: "Containers", Type: "string", Priority: 1, Description: "Names of each container in the template."},
		{Name: "Images", Type: "string", Priority: 1, Description: "Images referenced by each container in the template."},
		{Name: "Selector", Type: "string", Priority: 1, Description: batchv1.JobSpec{}.SwaggerDoc()["selector"]},
	},
	{Group: "networking.k8s.io", Resource: "ingresses"}: {
		{Name: "Name", Type: "string", Format: "name", Description: metav1.ObjectMeta{}.SwaggerDoc()["name"]},
		{Name: "Class", Type: "string", Description: "The name of the IngressClass resource that should be used for additional configuration"},
		{Name: "Hosts", Type: "string", Description: "Hosts that incoming requests are matched against before the ingress rule"},
		{Name: "Address", Type: "string", Description: "Address is a list containing ingress points for the load-balancer"},
		{Name: "Ports", Type: "string", Description: "Ports of TLS configurations that open"},
		{Name: "Age", Type: "string", Description: metav1.ObjectMeta{}.SwaggerDoc()["creationTimestamp"]},
	},
	{Group: "networking.k8s.io", Resource: "ingressclasses"}: {
		{Name: "Name", Type: "string", Format: "name", Description: metav1.ObjectMeta{}.SwaggerDoc()["name"]},
		{Name: "Controller", Type: "string", Description: "Controller that is responsible for handling this class"},
		{Name: "Parameters", Type: "string", Description: "A reference to a resource with additional parameters"},
		{Name: "Age", Type: "string", Description: metav1.ObjectMeta{}.SwaggerDoc()["creationTimestamp"]},
	},
	{Group: "networking.k8s.io", Resource: "networkpolicies"}: {
		{Name: "Name", Type: "string", Format: "name", Description: metav1.ObjectMeta{}.SwaggerDoc()["name"]},
		{Name: "Pod-Selector", Type: "string", Description: networkingv1.NetworkPolicySpec{}.SwaggerDoc()["podSelector"]},
		{Name: "Age", Type: "string", Description: metav1.ObjectMeta{}.SwaggerDoc()["creationTimestamp"]},
	},
	{Group: "policy", Resource: "poddisruptionbudgets"}: {
		{Name: "Name", Type: "string", Format: "name", Description: metav1.ObjectMeta{}.SwaggerDoc()["name"]},
		{Name: "Min Available", Type: "string", Description: "The minimum number of pods that must be available."},
		{Name: "Max Unavailable", Type: "string", Description: "The maximum number of pods that may be unavailable."},
		{Name: "Allowed Disruptions", Type: "integer", Description: "Calculated number of pods that may be disrupted at this time."},
		{Name: "Age", Type: "string", Description: metav1.ObjectMeta{}.SwaggerDoc()["creationTimestamp"]},
	},
	{Group: "rbac.authorization.k8s.io", Resource: "roles"}: defaultTableConvertorColumns,
	{Group: "rbac.authorization.k8s.io", Resource: "rolebindings"}: {
		{Name: "Name", Type: "string", Format: "name", Description: metav1.ObjectMeta{}.SwaggerDoc()["name"]},
		{Name: "Role", Type: "string", Description: rbacv1beta1.RoleBinding{}.SwaggerDoc()["roleRef"]},
		{Name: "Age", Type: "string", Description: metav1.ObjectMeta{}.SwaggerDoc()["creationTimestamp"]},
		{Name: "Users", Type: "string", Priority: 1, Description: "Users in the roleBinding"},
		{Name: "Groups", Type: "string", Priority: 1, Description: "Groups in the roleBinding"},
		{Name: "ServiceAccounts", Type: "string", Priority: 1, Description: "ServiceAccounts in the roleBinding"},
	},
	{Group: "rbac.authorization.k8s.io", Resource: "clusterroles"}: defaultTableConvertorColumns,
	{Group: "rbac.authorization.k8s.io", Resource: "clusterrolebindings"}: {
		{Name: "Name", Type: "string", Format: "name", Description: metav1.ObjectMeta{}.SwaggerDoc()["name"]},
		{Name: "Role", Type: "string", Description: rbacv1beta1.ClusterRoleBinding{}.SwaggerDoc()["roleRef"]},
		{Name: "Age", Type: "string", Description: metav1.ObjectMeta{}.SwaggerDoc()["creationTimestamp"]},
		{Name: "Users", Type: "string", Priority: 1, Description: "Users in the clusterRoleBinding"},
		{Name: "Groups", Type: "string", Priority: 1, Description: "Groups in the clusterRoleBinding"},
		{Name: "ServiceAccounts", Type: "string", Priority: 1, Description: "ServiceAccounts in the clusterRoleBinding"},
	},
	{Group: "storage.k8s.io", Resource: "storageclasses"}: {
		{Name: "Name", Type: "string", Format: "name", Description: metav1.ObjectMeta{}.SwaggerDoc()["name"]},
		{Name: "Provisioner", Type: "string", Description: storagev1.StorageClass{}.SwaggerDoc()["provisioner"]},
		{Name: "ReclaimPolicy", Type: "string", Description: storagev1.StorageClass{}.SwaggerDoc()["reclaimPolicy"]},
		{Name: "VolumeBindingMode", Type: "string", Description: storagev1.StorageClass{}.SwaggerDoc()["volumeBindingMode"]},
		{Name: "AllowVolumeExpansion", Type: "string", Description: storagev1.StorageClass{}.SwaggerDoc()["allowVolumeExpansion"]},
		{Name: "Age", Type: "string", Description: metav1.ObjectMeta{}.SwaggerDoc()["creationTimestamp"]},
	},
	{Group: "scheduling.k8s.io", Resource: "priorityclasses"}: {
		{Name: "Name", Type: "string", Format: "name", Description: metav1.ObjectMeta{}.SwaggerDoc()["name"]},
		{Name: "Value", Type: "integer", Description: schedulingv1.PriorityClass{}.SwaggerDoc()["value"]},
		{Name: "Global-Default", Type: "boolean", Description: schedulingv1.PriorityClass{}.SwaggerDoc()["globalDefault"]},
		{Name: "Age", Type: "string", Description: metav1.ObjectMeta{}.SwaggerDoc()["creationTimestamp"]},
		{Name: "PreemptionPolicy", Type: "string", Description: schedulingv1.PriorityClass{}.SwaggerDoc()["preemptionPolicy"]},
	},
	{Group: "coordination.k8s.io", Resource: "leases"}: {
		{Name: "Name", Type: "string", Format: "name", Description: metav1.ObjectMeta{}.SwaggerDoc()["name"]},
		{Name: "Holder", Type: "string", Description: coordinationv1.LeaseSpec{}.SwaggerDoc()["holderIdentity"]},
		{Name: "Age", Type: "string", Description: metav1.ObjectMeta{}.SwaggerDoc()["creationTimestamp"]},
	},
	{Group: "certificates.k8s.io", Resource: "certificatesigningrequests"}: {
		{Name: "Name", Type: "string", Format: "name", Description: metav1.ObjectMeta{}.SwaggerDoc()["name"]},
		{Name: "Age", Type: "string", Description: metav1.ObjectMeta{}.SwaggerDoc()["creationTimestamp"]},
		{Name: "SignerName", Type: "string", Description: certificatesv1beta1.CertificateSigningRequestSpec{}.SwaggerDoc()["signerName"]},
		{Name: "Requestor", Type: "string", Description: certificatesv1beta1.CertificateSigningRequestSpec{}.SwaggerDoc()["request"]},
		{Name: "RequestedDuration", Type: "string", Description: certificatesv1beta1.CertificateSigningRequestSpec{}.SwaggerDoc()["expirationSeconds"]},
		{Name: "Condition", Type: "string", Description: certificatesv1beta1.CertificateSigningRequestStatus{}.SwaggerDoc()["conditions"]},
	},
	{Group: "admissionregistration.k8s.io", Resource: "mutatingwebhookconfigurations"}: {
		{Name: "Name", Type: "string", Format: "name", Description: metav1.ObjectMeta{}.SwaggerDoc()["name"]},
		{Name: "Webhooks", Type: "integer", Description: "Webhooks indicates the number of webhooks registered in this configuration"},
		{Name: "Age", Type: "string", Description: metav1.ObjectMeta{}.SwaggerDoc()["creationTimestamp"]},
	},
	{Group: "admissionregistration.k8s.io", Resource: "validatingwebhookconfigurations"}: {
		{Name: "Name", Type: "string", Format: "name", Description: metav1.ObjectMeta{}.SwaggerDoc()["name"]},
		{Name: "Webhooks", Type: "integer", Description: "Webhooks indicates the number of webhooks registered in this configuration"},
		{Name: "Age", Type: "string", Description: metav1.ObjectMeta{}.SwaggerDoc()["creationTimestamp"]},
	},
	{Group: "admissionregistration.k8s.io", Resource: "validatingadmissionpolicies"}: {
		{Name: "Name", Type: "string", Format: "name", Description: metav1.ObjectMeta{}.SwaggerDoc()["name"]},
		{Name: "Validations", Type: "integer", Description: "Validations indicates the number of validation rules defined in this configuration"},
		{Name: "ParamKind", Type: "string", Description: "ParamKind specifies the kind of resources used to parameterize this policy"},
		{Name: "Age", Type: "string", Description: metav1.ObjectMeta{}.SwaggerDoc()["creationTimestamp"]},
	},
	{Group: "admissionregistration.k8s.io", Resource: "validatingadmissionpolicybindings"}: {
		{Name: "Name", Type: "string", Format: "name", Description: metav1.ObjectMeta{}.SwaggerDoc()["name"]},
		{Name: "PolicyName", Type: "string", Description: "PolicyName indicates the policy definition which the policy binding binded to"},
		{Name: "ParamRef", Type: "string", Description: "ParamRef indicates the param resource which sets the configuration param"},
		{Name: "Age", Type: "string", Description: metav1.ObjectMeta{}.SwaggerDoc()["creationTimestamp"]},
	},
	{Group: "admissionregistration.k8s.io", Resource: "mutatingadmissionpolicies"}: {
		{Name: "Name", Type: "string", Format: "name", Description: metav1.ObjectMeta{}.SwaggerDoc()["name"]},
		{Name: "Mutations", Type: "integer", Description: "Mutation indicates the number of mutations rules defined in this configuration"},
		{Name: "ParamKind", Type: "string", Description: "ParamKind specifies the kind of resources used to parameterize this policy"},
		{Name: "Age", Type: "string", Description: metav1.ObjectMeta{}.SwaggerDoc()["creationTimestamp"]},
	},
	{Group: "admissionregistration.k8s.io", Resource: "mutatingadmissionpolicybindings"}: {
		{Name: "Name", Type: "string", Format: "name", Description: metav1.ObjectMeta{}.SwaggerDoc()["name"]},
		{Name: "PolicyName", Type: "string", Description: "PolicyName indicates the policy definition which the policy binding binded to"},
		{Name: "ParamRef", Type: "string", Description: "ParamRef indicates the param resource which sets the configuration param"},
		{Name: "Age", Type: "string", Description: metav1.ObjectMeta{}.SwaggerDoc()["creationTimestamp"]},
	},
	{Group: "discovery.k8s.io", Resource: "endpointslices"}: {
		{Name: "Name", Type: "string", Format: "name", Description: metav1.ObjectMeta{}.SwaggerDoc()["name"]},
		{Name: "AddressType", Type: "string", Description: discoveryv1.EndpointSlice{}.SwaggerDoc()["addressType"]},
		{Name: "Ports", Type: "string", Description: discoveryv1.EndpointSlice{}.SwaggerDoc()["ports"]},
		{Name: "Endpoints", Type: "string", Description: discoveryv1.EndpointSlice{}.SwaggerDoc()["endpoints"]},
		{Name: "Age", Type: "string", Description: metav1.ObjectMeta{}.SwaggerDoc()["creationTimestamp"]},
	},
}

// defaultTableConvertorColumns: defaultTableConvertor.ConvertToTable.
var defaultTableConvertorColumns = []metav1.TableColumnDefinition{
	{Name: "Name", Type: "string", Format: "name", Description: metav1.ObjectMeta{}.SwaggerDoc()["name"]},
	{Name: "Created At", Type: "date", Description: metav1.ObjectMeta{}.SwaggerDoc()["creationTimestamp"]},
}

// TestTableColumnsEveryKind: every served built-in kind prints upstream's
// columns (name, type, format, priority, description), none left with
// columns of no upstream printer; a row has one cell per column.
func TestTableColumnsEveryKind(t *testing.T) {
	served := map[schema.GroupResource]bool{}
	for _, res := range builtinResources() {
		gr := res.GroupResource()
		served[gr] = true
		want, ok := upstreamColumns[gr]
		if !ok {
			t.Errorf("%v: served, but no upstream columns recorded here", gr)
			continue
		}
		if res.Table == nil {
			t.Errorf("%v: no Table printer", gr)
			continue
		}
		if diff := cmp.Diff(want, res.Table.columns); diff != "" {
			t.Errorf("%v columns differ from upstream's (-upstream +workshop):\n%s", gr, diff)
		}
		obj := res.New()
		metaOf(obj).SetName("x")
		if cells := res.Table.cells(obj, func(metav1.Time) string { return "1s" }); len(cells) != len(want) {
			t.Errorf("%v: %d cells for %d columns: %q", gr, len(cells), len(want), cells)
		}
	}
	for gr := range upstreamColumns {
		if !served[gr] {
			t.Errorf("%v: upstream columns recorded for a kind not served", gr)
		}
	}
}

// TestTableKindCells pins a few cells of each printer, as upstream's
// print<Kind> fills them.
func TestTableKindCells(t *testing.T) {
	created := metav1.NewTime(tableCreated)
	now := metav1.NewTime(tableCreated.Add(time.Hour))
	age := func(ts metav1.Time) string { return translateTimestampSince(ts, now) }
	om := metav1.ObjectMeta{Name: "x", CreationTimestamp: created}
	tmpl := corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "a", Image: "i:1"}, {Name: "b", Image: "i:2"}}}}
	sel := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "x"}}
	start := metav1.NewTime(tableCreated.Add(10 * time.Minute))
	for _, tc := range []struct {
		name string
		p    *tablePrinter
		obj  runtime.Object
		want []any
	}{
		{"service ClusterIP", serviceTable, &corev1.Service{ObjectMeta: om, Spec: corev1.ServiceSpec{
			Type: corev1.ServiceTypeClusterIP, ClusterIPs: []string{"10.0.0.10"},
			Ports:    []corev1.ServicePort{{Port: 80, Protocol: corev1.ProtocolTCP}, {Port: 53, Protocol: corev1.ProtocolUDP}},
			Selector: map[string]string{"app": "x"}}},
			[]any{"x", "ClusterIP", "10.0.0.10", "<none>", "80/TCP,53/UDP", "60m", "app=x"}},
		{"service LoadBalancer pending", serviceTable, &corev1.Service{ObjectMeta: om, Spec: corev1.ServiceSpec{
			Type: corev1.ServiceTypeLoadBalancer, Ports: []corev1.ServicePort{{Port: 443, NodePort: 30001, Protocol: corev1.ProtocolTCP}}}},
			[]any{"x", "LoadBalancer", "<none>", "<pending>", "443:30001/TCP", "60m", "<none>"}},
		{"service ExternalName", serviceTable, &corev1.Service{ObjectMeta: om, Spec: corev1.ServiceSpec{
			Type: corev1.ServiceTypeExternalName, ExternalName: "example.com"}},
			[]any{"x", "ExternalName", "<none>", "example.com", "<none>", "60m", "<none>"}},
		{"secret", secretTable, &corev1.Secret{ObjectMeta: om, Type: corev1.SecretTypeOpaque, Data: map[string][]byte{"a": nil, "b": nil}},
			[]any{"x", "Opaque", int64(2), "60m"}},
		{"endpoints", endpointsTable, &corev1.Endpoints{ObjectMeta: om, Subsets: []corev1.EndpointSubset{{
			Addresses: []corev1.EndpointAddress{{IP: "10.1.0.1"}, {IP: "10.1.0.2"}},
			Ports:     []corev1.EndpointPort{{Port: 80}, {Port: 443}}}}},
			[]any{"x", "10.1.0.1:80,10.1.0.2:80,10.1.0.1:443 + 1 more...", "60m"}},
		{"endpoints none", endpointsTable, &corev1.Endpoints{ObjectMeta: om}, []any{"x", "<none>", "60m"}},
		{"replicaset", replicaSetTable, &appsv1.ReplicaSet{ObjectMeta: om,
			Spec:   appsv1.ReplicaSetSpec{Replicas: ptr.To[int32](3), Selector: sel, Template: tmpl},
			Status: appsv1.ReplicaSetStatus{Replicas: 2, ReadyReplicas: 1}},
			[]any{"x", int64(3), int64(2), int64(1), "60m", "a,b", "i:1,i:2", "app=x"}},
		{"statefulset", statefulSetTable, &appsv1.StatefulSet{ObjectMeta: om,
			Spec: appsv1.StatefulSetSpec{Replicas: ptr.To[int32](3), Template: tmpl}, Status: appsv1.StatefulSetStatus{ReadyReplicas: 2}},
			[]any{"x", "2/3", "60m", "a,b", "i:1,i:2"}},
		{"daemonset", daemonSetTable, &appsv1.DaemonSet{ObjectMeta: om,
			Spec:   appsv1.DaemonSetSpec{Selector: sel, Template: tmpl},
			Status: appsv1.DaemonSetStatus{DesiredNumberScheduled: 4, CurrentNumberScheduled: 3, NumberReady: 2, UpdatedNumberScheduled: 1}},
			[]any{"x", int64(4), int64(3), int64(2), int64(1), int64(0), "<none>", "60m", "a,b", "i:1,i:2", "app=x"}},
		{"job running", jobTable, &batchv1.Job{ObjectMeta: om,
			Spec:   batchv1.JobSpec{Completions: ptr.To[int32](2), Selector: sel, Template: tmpl},
			Status: batchv1.JobStatus{Succeeded: 1, StartTime: &start}},
			[]any{"x", "Running", "1/2", "50m", "60m", "a,b", "i:1,i:2", "app=x"}},
		{"job complete", jobTable, &batchv1.Job{ObjectMeta: om,
			Spec: batchv1.JobSpec{Parallelism: ptr.To[int32](3)},
			Status: batchv1.JobStatus{Succeeded: 1, StartTime: &start, CompletionTime: ptr.To(metav1.NewTime(start.Add(90 * time.Second))),
				Conditions: []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionTrue}}}},
			[]any{"x", "Complete", "1/1 of 3", "90s", "60m", "", "", "<none>"}},
		{"cronjob", cronJobTable, &batchv1.CronJob{ObjectMeta: om, Spec: batchv1.CronJobSpec{Schedule: "*/5 * * * *", Suspend: ptr.To(false)}},
			[]any{"x", "*/5 * * * *", "<none>", "False", int64(0), "<none>", "60m", "", "", "<none>"}},
		{"lease", leaseTable, &coordinationv1.Lease{ObjectMeta: om, Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("me")}},
			[]any{"x", "me", "60m"}},
		{"ingress", ingressTable, &networkingv1.Ingress{ObjectMeta: om, Spec: networkingv1.IngressSpec{
			Rules: []networkingv1.IngressRule{{Host: "a"}, {Host: "b"}, {Host: "c"}, {Host: "d"}, {}},
			TLS:   []networkingv1.IngressTLS{{}}},
			Status: networkingv1.IngressStatus{LoadBalancer: networkingv1.IngressLoadBalancerStatus{Ingress: []networkingv1.IngressLoadBalancerIngress{{IP: "1.2.3.4"}, {Hostname: "lb"}}}}},
			[]any{"x", "<none>", "a,b,c + 2 more...", "1.2.3.4,lb", "80, 443", "60m"}},
		{"networkpolicy", networkPolicyTable, &networkingv1.NetworkPolicy{ObjectMeta: om}, []any{"x", "<none>", "60m"}},
		{"pdb", podDisruptionBudgetTable, &policyv1.PodDisruptionBudget{ObjectMeta: om,
			Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: ptr.To(intstr.FromString("50%"))}, Status: policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: 1}},
			[]any{"x", "50%", "N/A", int64(1), "60m"}},
		{"pvc bound", persistentVolumeClaimTable, &corev1.PersistentVolumeClaim{ObjectMeta: om,
			Spec: corev1.PersistentVolumeClaimSpec{VolumeName: "pv1", StorageClassName: ptr.To("std"), VolumeMode: ptr.To(corev1.PersistentVolumeFilesystem)},
			Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound,
				AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany, corev1.ReadWriteOnce},
				Capacity:    corev1.ResourceList{corev1.ResourceStorage: mustQuantity("1Gi")}}},
			[]any{"x", "Bound", "pv1", "1Gi", "RWO,RWX", "std", "<unset>", "60m", "Filesystem"}},
		{"storageclass", storageClassTable, &storagev1.StorageClass{ObjectMeta: om, Provisioner: "p"},
			[]any{"x", "p", "Delete", "Immediate", false, "60m"}},
		{"priorityclass", priorityClassTable, &schedulingv1.PriorityClass{ObjectMeta: om, Value: 1000, PreemptionPolicy: ptr.To(corev1.PreemptNever)},
			[]any{"x", int64(1000), false, "60m", "Never"}},
		{"rolebinding", roleBindingTable, &rbacv1.RoleBinding{ObjectMeta: om, RoleRef: rbacv1.RoleRef{Kind: "ClusterRole", Name: "view"},
			Subjects: []rbacv1.Subject{{Kind: "User", Name: "u"}, {Kind: "ServiceAccount", Namespace: "ns", Name: "sa"}, {Kind: "User", Name: "v"}}},
			[]any{"x", "ClusterRole/view", "60m", "u, v", "", "ns/sa"}},
		{"event", eventTable, &corev1.Event{ObjectMeta: om, Type: "Normal", Reason: "Scheduled", Message: " placed \n",
			InvolvedObject: corev1.ObjectReference{Kind: "Pod", Name: "web-1", FieldPath: "spec.containers{c}"},
			Source:         corev1.EventSource{Component: "default-scheduler"}, FirstTimestamp: start, LastTimestamp: metav1.NewTime(start.Add(20 * time.Minute)), Count: 3},
			[]any{"30m", "Normal", "Scheduled", "pod/web-1", "spec.containers{c}", "default-scheduler", "placed", "50m", int64(3), "x"}},
		{"events.k8s.io event, singleton", eventTable, &eventsv1.Event{ObjectMeta: om, Type: "Warning", Reason: "Failed", Note: "no",
			Regarding: corev1.ObjectReference{Kind: "Node"}, EventTime: metav1.NewMicroTime(start.Time),
			ReportingController: "kubelet", ReportingInstance: "n1"},
			[]any{"50m", "Warning", "Failed", "node", "", "kubelet, n1", "no", "50m", int64(1), "x"}},
		{"endpointslice", endpointSliceTable, &discoveryv1.EndpointSlice{ObjectMeta: om, AddressType: discoveryv1.AddressTypeIPv4,
			Ports:     []discoveryv1.EndpointPort{{Port: ptr.To[int32](80)}, {Name: ptr.To("http")}, {}, {Port: ptr.To[int32](9)}},
			Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"10.1.0.1"}}, {Addresses: []string{"10.1.0.2"}}}},
			[]any{"x", "IPv4", "80,http,* + 1 more...", "10.1.0.1,10.1.0.2", "60m"}},
		{"endpointslice empty", endpointSliceTable, &discoveryv1.EndpointSlice{ObjectMeta: om, AddressType: discoveryv1.AddressTypeIPv4},
			[]any{"x", "IPv4", "<unset>", "<unset>", "60m"}},
		{"serviceaccount", serviceAccountTable, &corev1.ServiceAccount{ObjectMeta: om}, []any{"x", "60m"}},
		{"limitrange", limitRangeTable, &corev1.LimitRange{ObjectMeta: om}, []any{"x", "2026-11-22T22:22:00Z"}},
		{"role", roleTable, &rbacv1.Role{ObjectMeta: om}, []any{"x", "2026-11-22T22:22:00Z"}},
		{"clusterrole", clusterRoleTable, &rbacv1.ClusterRole{ObjectMeta: om}, []any{"x", "2026-11-22T22:22:00Z"}},
		{"persistentvolume", persistentVolumeTable, &corev1.PersistentVolume{ObjectMeta: om,
			Spec: corev1.PersistentVolumeSpec{
				Capacity:                      corev1.ResourceList{corev1.ResourceStorage: mustQuantity("5Gi")},
				AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadOnlyMany, corev1.ReadWriteOnce},
				PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
				ClaimRef:                      &corev1.ObjectReference{Namespace: "ns", Name: "c"},
				StorageClassName:              "std",
			},
			Status: corev1.PersistentVolumeStatus{Phase: corev1.VolumeBound}},
			[]any{"x", "5Gi", "RWO,ROX", "Retain", "Bound", "ns/c", "std", "<unset>", "", "60m", "<unset>"}},
		{"persistentvolume terminating, beta class", persistentVolumeTable, &corev1.PersistentVolume{
			ObjectMeta: metav1.ObjectMeta{Name: "x", CreationTimestamp: created, DeletionTimestamp: &now,
				Annotations: map[string]string{corev1.BetaStorageClassAnnotation: "beta"}},
			Spec: corev1.PersistentVolumeSpec{StorageClassName: "std", VolumeMode: ptr.To(corev1.PersistentVolumeBlock),
				VolumeAttributesClassName: ptr.To("gold")},
			Status: corev1.PersistentVolumeStatus{Phase: corev1.VolumeFailed, Reason: "Oops"}},
			[]any{"x", "0", "", "", "Terminating", "", "beta", "gold", "Oops", "60m", "Block"}},
		{"resourcequota", resourceQuotaTable, &corev1.ResourceQuota{ObjectMeta: om, Status: corev1.ResourceQuotaStatus{
			Hard: corev1.ResourceList{"pods": mustQuantity("10"), "limits.cpu": mustQuantity("2"), "requests.memory": mustQuantity("1Gi")},
			Used: corev1.ResourceList{"pods": mustQuantity("3"), "limits.cpu": mustQuantity("500m")}}},
			[]any{"x", "pods: 3/10, requests.memory: 0/1Gi", "limits.cpu: 500m/2", "60m"}},
		{"resourcequota empty", resourceQuotaTable, &corev1.ResourceQuota{ObjectMeta: om}, []any{"x", "", "", "60m"}},
		{"podtemplate", podTemplateTable, &corev1.PodTemplate{ObjectMeta: om, Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "x"}}, Spec: tmpl.Spec}},
			[]any{"x", "a,b", "i:1,i:2", "app=x"}},
		{"controllerrevision", controllerRevisionTable, &appsv1.ControllerRevision{
			ObjectMeta: metav1.ObjectMeta{Name: "x", CreationTimestamp: created, OwnerReferences: []metav1.OwnerReference{
				{APIVersion: "v1", Kind: "Pod", Name: "not-the-controller"},
				{APIVersion: "apps/v1", Kind: "DaemonSet", Name: "ds", Controller: ptr.To(true)}}},
			Revision: 3},
			[]any{"x", "daemonset.apps/ds", int64(3), "60m"}},
		{"controllerrevision, core controller", controllerRevisionTable, &appsv1.ControllerRevision{
			ObjectMeta: metav1.ObjectMeta{Name: "x", CreationTimestamp: created, OwnerReferences: []metav1.OwnerReference{
				{APIVersion: "v1", Kind: "Pod", Name: "p", Controller: ptr.To(true)}}}},
			[]any{"x", "pod/p", int64(0), "60m"}},
		{"controllerrevision, no controller", controllerRevisionTable, &appsv1.ControllerRevision{ObjectMeta: om, Revision: 1},
			[]any{"x", "<none>", int64(1), "60m"}},
		{"hpa", horizontalPodAutoscalerTable, &autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: om,
			Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
				ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{Kind: "Deployment", Name: "web"},
				MinReplicas:    ptr.To[int32](2), MaxReplicas: 5,
				Metrics: []autoscalingv2.MetricSpec{
					{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{
						Name: corev1.ResourceCPU, Target: autoscalingv2.MetricTarget{AverageUtilization: ptr.To[int32](80)}}},
					{Type: autoscalingv2.PodsMetricSourceType, Pods: &autoscalingv2.PodsMetricSource{
						Target: autoscalingv2.MetricTarget{AverageValue: ptr.To(mustQuantity("1k"))}}},
					{Type: autoscalingv2.ExternalMetricSourceType, External: &autoscalingv2.ExternalMetricSource{
						Target: autoscalingv2.MetricTarget{Value: ptr.To(mustQuantity("7"))}}},
				}},
			Status: autoscalingv2.HorizontalPodAutoscalerStatus{CurrentReplicas: 3, CurrentMetrics: []autoscalingv2.MetricStatus{
				{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricStatus{
					Name: corev1.ResourceCPU, Current: autoscalingv2.MetricValueStatus{AverageUtilization: ptr.To[int32](40)}}}}}},
			[]any{"x", "Deployment/web", "cpu: 40%/80%, <unknown>/1k + 1 more...", "2", int64(5), int64(3), "60m"}},
		{"hpa, two metrics", horizontalPodAutoscalerTable, &autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: om,
			Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
				ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{Kind: "StatefulSet", Name: "db"}, MaxReplicas: 3,
				Metrics: []autoscalingv2.MetricSpec{
					{Type: autoscalingv2.ContainerResourceMetricSourceType, ContainerResource: &autoscalingv2.ContainerResourceMetricSource{
						Name: corev1.ResourceMemory, Container: "c", Target: autoscalingv2.MetricTarget{}}},
					{Type: autoscalingv2.ObjectMetricSourceType, Object: &autoscalingv2.ObjectMetricSource{
						Target: autoscalingv2.MetricTarget{AverageValue: ptr.To(mustQuantity("10"))}}},
				}},
			Status: autoscalingv2.HorizontalPodAutoscalerStatus{CurrentMetrics: []autoscalingv2.MetricStatus{
				{Type: autoscalingv2.ContainerResourceMetricSourceType},
				{Type: autoscalingv2.ObjectMetricSourceType, Object: &autoscalingv2.ObjectMetricStatus{
					Current: autoscalingv2.MetricValueStatus{AverageValue: ptr.To(mustQuantity("4"))}}}}}},
			[]any{"x", "StatefulSet/db", "memory: <unknown>/<auto>, 4/10 (avg)", "<unset>", int64(3), int64(0), "60m"}},
		{"hpa, no metrics", horizontalPodAutoscalerTable, &autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: om},
			[]any{"x", "/", "<none>", "<unset>", int64(0), int64(0), "60m"}},
		{"ingressclass", ingressClassTable, &networkingv1.IngressClass{
			ObjectMeta: metav1.ObjectMeta{Name: "x", CreationTimestamp: created,
				Annotations: map[string]string{networkingv1.AnnotationIsDefaultIngressClass: "true"}},
			Spec: networkingv1.IngressClassSpec{Controller: "example.com/ingress", Parameters: &networkingv1.IngressClassParametersReference{
				APIGroup: ptr.To("k8s.example.com"), Kind: "IngressParameters", Name: "p"}}},
			[]any{"x (default)", "example.com/ingress", "IngressParameters.k8s.example.com/p", "60m"}},
		{"ingressclass, core parameters", ingressClassTable, &networkingv1.IngressClass{ObjectMeta: om,
			Spec: networkingv1.IngressClassSpec{Controller: "c", Parameters: &networkingv1.IngressClassParametersReference{Kind: "ConfigMap", Name: "p"}}},
			[]any{"x", "c", "ConfigMap/p", "60m"}},
	} {
		if got := tc.p.cells(tc.obj, age); !equalCells(got, tc.want) {
			t.Errorf("%s:\n got %#v\nwant %#v", tc.name, got, tc.want)
		}
	}
}

// TestTableStorageClassDefault: a list marks its effective default, the
// most recently created class annotated default; a get does not
// (printStorageClassList, printStorageClass).
func TestTableStorageClassDefault(t *testing.T) {
	s := startServerWith(t, Options{})
	c := metaClient{newClient(t, s)}
	for _, name := range []string{"fast", "slow"} {
		c.mustDo(http.StatusCreated, http.MethodPost, "/apis/storage.k8s.io/v1/storageclasses", map[string]any{
			"metadata":    map[string]any{"name": name, "annotations": map[string]any{"storageclass.kubernetes.io/is-default-class": "true"}},
			"provisioner": "p",
		})
	}
	const accept = "application/json;as=Table;v=v1;g=meta.k8s.io"
	names := func(path string) []any {
		resp := c.send(http.MethodGet, path, accept, "", nil)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		var out []any
		for _, r := range decode(t, b)["rows"].([]any) {
			out = append(out, r.(map[string]any)["cells"].([]any)[0])
		}
		return out
	}
	// Same creationTimestamp (the fixed clock): the first name wins.
	if got := names("/apis/storage.k8s.io/v1/storageclasses"); fmt.Sprint(got) != "[fast (default) slow]" {
		t.Errorf("list: %v", got)
	}
	if got := names("/apis/storage.k8s.io/v1/storageclasses/fast"); fmt.Sprint(got) != "[fast]" {
		t.Errorf("get: %v", got)
	}
}

func mustQuantity(s string) resource.Quantity { return resource.MustParse(s) }

// TestTableOverHTTP: kubectl get of a kind whose registry has no printer
// (roles: Name, and Created At in RFC 3339) and of one ported here
// (horizontalpodautoscalers: integer cells in string columns), as the
// server answers them.
func TestTableOverHTTP(t *testing.T) {
	clk := &clock{now: tableCreated}
	s := startServerWith(t, Options{Now: clk.Now})
	c := metaClient{newClient(t, s)}
	c.mustDo(http.StatusCreated, http.MethodPost, "/api/v1/namespaces", map[string]any{"metadata": map[string]any{"name": "t"}})
	c.mustDo(http.StatusCreated, http.MethodPost, "/apis/rbac.authorization.k8s.io/v1/namespaces/t/roles",
		map[string]any{"metadata": map[string]any{"name": "reader"}})
	c.mustDo(http.StatusCreated, http.MethodPost, "/apis/autoscaling/v2/namespaces/t/horizontalpodautoscalers", map[string]any{
		"metadata": map[string]any{"name": "web"},
		"spec": map[string]any{"scaleTargetRef": map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
			"minReplicas": 1, "maxReplicas": 4},
	})
	clk.Set(tableCreated.Add(3 * time.Minute))
	const accept = "application/json;as=Table;v=v1;g=meta.k8s.io"
	table := func(path string) (cols, cells string) {
		resp := c.send(http.MethodGet, path, accept, "", nil)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: HTTP %d: %s", path, resp.StatusCode, b)
		}
		m := decode(t, b)
		var names []string
		for _, c := range m["columnDefinitions"].([]any) {
			c := c.(map[string]any)
			names = append(names, fmt.Sprintf("%s/%s", c["name"], c["type"]))
		}
		rows := m["rows"].([]any)
		cellsJSON, _ := json.Marshal(rows[0].(map[string]any)["cells"])
		return fmt.Sprint(names), string(cellsJSON)
	}
	if cols, cells := table("/apis/rbac.authorization.k8s.io/v1/namespaces/t/roles"); cols != "[Name/string Created At/date]" ||
		cells != `["reader","2026-11-22T22:22:00Z"]` {
		t.Errorf("roles: %s %s", cols, cells)
	}
	if cols, cells := table("/apis/autoscaling/v2/namespaces/t/horizontalpodautoscalers/web"); cols != "[Name/string Reference/string Targets/string MinPods/string MaxPods/string Replicas/string Age/string]" ||
		cells != `["web","Deployment/web","\u003cnone\u003e","1",4,0,"3m"]` {
		t.Errorf("hpa: %s %s", cols, cells)
	}
}
