package apiserver

import (
	"fmt"
	"maps"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/duration"
)

// The Tables of the other built-in kinds, each copied from
// k8s.io/kubernetes v1.37.2 pkg/printers/internalversion/printers.go:
// the column definitions from AddHandlers (<kind>ColumnDefinitions) and
// the cells from the print<Kind> function named beside each. Upstream
// prints from the internal types; the v1 types have the same fields
// (pointers where the v1 type has them: a nil replicas count reads 0, as
// the internal type, defaulted, never has one). The server always prints
// wide, so every column's cell is filled; kubectl hides priority-1
// columns unless -o wide.

// containersColumns are the Containers and Images columns of the kinds
// with a pod template, priority 1.
var containersColumns = []metav1.TableColumnDefinition{
	{Name: "Containers", Type: "string", Priority: 1, Description: "Names of each container in the template."},
	{Name: "Images", Type: "string", Priority: 1, Description: "Images referenced by each container in the template."},
}

func columns(cols ...any) []metav1.TableColumnDefinition {
	var out []metav1.TableColumnDefinition
	for _, c := range cols {
		switch c := c.(type) {
		case metav1.TableColumnDefinition:
			out = append(out, c)
		case []metav1.TableColumnDefinition:
			out = append(out, c...)
		}
	}
	return out
}

func replicas(p *int32) int64 {
	if p == nil {
		return 0
	}
	return int64(*p)
}

// serviceTable: serviceColumnDefinitions and printService.
var serviceTable = &tablePrinter{
	columns: []metav1.TableColumnDefinition{
		nameColumn,
		{Name: "Type", Type: "string", Description: corev1.ServiceSpec{}.SwaggerDoc()["type"]},
		{Name: "Cluster-IP", Type: "string", Description: corev1.ServiceSpec{}.SwaggerDoc()["clusterIP"]},
		{Name: "External-IP", Type: "string", Description: corev1.ServiceSpec{}.SwaggerDoc()["externalIPs"]},
		{Name: "Port(s)", Type: "string", Description: corev1.ServiceSpec{}.SwaggerDoc()["ports"]},
		ageColumn,
		{Name: "Selector", Type: "string", Priority: 1, Description: corev1.ServiceSpec{}.SwaggerDoc()["selector"]},
	},
	cells: func(obj runtime.Object, age func(metav1.Time) string) []any {
		s := obj.(*corev1.Service)
		internalIP := "<none>"
		if len(s.Spec.ClusterIPs) > 0 {
			internalIP = s.Spec.ClusterIPs[0]
		}
		ports := make([]string, len(s.Spec.Ports)) // makePortString
		for i, p := range s.Spec.Ports {
			ports[i] = fmt.Sprintf("%d/%s", p.Port, p.Protocol)
			if p.NodePort > 0 {
				ports[i] = fmt.Sprintf("%d:%d/%s", p.Port, p.NodePort, p.Protocol)
			}
		}
		return []any{
			s.Name, string(s.Spec.Type), internalIP, serviceExternalIP(s), orNone(strings.Join(ports, ",")),
			age(s.CreationTimestamp), labels.FormatLabels(s.Spec.Selector),
		}
	},
}

// serviceExternalIP is getServiceExternalIP, wide (no clipping).
func serviceExternalIP(s *corev1.Service) string {
	switch s.Spec.Type {
	case corev1.ServiceTypeClusterIP, corev1.ServiceTypeNodePort:
		if len(s.Spec.ExternalIPs) > 0 {
			return strings.Join(s.Spec.ExternalIPs, ",")
		}
		return "<none>"
	case corev1.ServiceTypeLoadBalancer:
		var lb []string
		for _, in := range s.Status.LoadBalancer.Ingress {
			lb = append(lb, cmpOr(in.IP, in.Hostname))
		}
		lbIPs := sortedSet(lb)
		if len(s.Spec.ExternalIPs) > 0 {
			var out []string
			if lbIPs != "" {
				out = append(out, strings.Split(lbIPs, ",")...)
			}
			return strings.Join(append(out, s.Spec.ExternalIPs...), ",")
		}
		if lbIPs != "" {
			return lbIPs
		}
		return "<pending>"
	case corev1.ServiceTypeExternalName:
		return s.Spec.ExternalName
	}
	return "<unknown>"
}

// sortedSet is sets.NewString(...).List() joined: the non-empty values,
// sorted, without duplicates.
func sortedSet(vs []string) string {
	var out []string
	for _, v := range vs {
		if v != "" {
			out = append(out, v)
		}
	}
	slices.Sort(out)
	return strings.Join(slices.Compact(out), ",")
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// secretTable: secretColumnDefinitions and printSecret.
var secretTable = &tablePrinter{
	columns: []metav1.TableColumnDefinition{
		nameColumn,
		{Name: "Type", Type: "string", Description: corev1.Secret{}.SwaggerDoc()["type"]},
		{Name: "Data", Type: "string", Description: corev1.Secret{}.SwaggerDoc()["data"]},
		ageColumn,
	},
	cells: func(obj runtime.Object, age func(metav1.Time) string) []any {
		s := obj.(*corev1.Secret)
		return []any{s.Name, string(s.Type), int64(len(s.Data)), age(s.CreationTimestamp)}
	},
}

// serviceAccountTable: serviceAccountColumnDefinitions and
// printServiceAccount: Name and Age only.
var serviceAccountTable = &tablePrinter{
	columns: []metav1.TableColumnDefinition{nameColumn, ageColumn},
	cells: func(obj runtime.Object, age func(metav1.Time) string) []any {
		sa := obj.(*corev1.ServiceAccount)
		return []any{sa.Name, age(sa.CreationTimestamp)}
	},
}

// limitRangeTable, roleTable, clusterRoleTable: their registries
// (pkg/registry/core/limitrange/storage, pkg/registry/rbac/role/storage,
// pkg/registry/rbac/clusterrole/storage) have no printer but
// rest.NewDefaultTableConvertor: Name and Created At.
var (
	limitRangeTable  = defaultConvertorTable
	roleTable        = defaultConvertorTable
	clusterRoleTable = defaultConvertorTable
)

// persistentVolumeTable: persistentVolumeColumnDefinitions and
// printPersistentVolume.
var persistentVolumeTable = &tablePrinter{
	columns: []metav1.TableColumnDefinition{
		nameColumn,
		{Name: "Capacity", Type: "string", Description: corev1.PersistentVolumeSpec{}.SwaggerDoc()["capacity"]},
		{Name: "Access Modes", Type: "string", Description: corev1.PersistentVolumeSpec{}.SwaggerDoc()["accessModes"]},
		{Name: "Reclaim Policy", Type: "string", Description: corev1.PersistentVolumeSpec{}.SwaggerDoc()["persistentVolumeReclaimPolicy"]},
		{Name: "Status", Type: "string", Description: corev1.PersistentVolumeStatus{}.SwaggerDoc()["phase"]},
		{Name: "Claim", Type: "string", Description: corev1.PersistentVolumeSpec{}.SwaggerDoc()["claimRef"]},
		{Name: "StorageClass", Type: "string", Description: "StorageClass of the pv"},
		{Name: "VolumeAttributesClass", Type: "string", Description: "VolumeAttributesClass of the pv"},
		{Name: "Reason", Type: "string", Description: corev1.PersistentVolumeStatus{}.SwaggerDoc()["reason"]},
		ageColumn,
		{Name: "VolumeMode", Type: "string", Priority: 1, Description: corev1.PersistentVolumeSpec{}.SwaggerDoc()["volumeMode"]},
	},
	cells: func(obj runtime.Object, age func(metav1.Time) string) []any {
		pv := obj.(*corev1.PersistentVolume)
		var claim string
		if ref := pv.Spec.ClaimRef; ref != nil {
			claim = ref.Namespace + "/" + ref.Name
		}
		size := pv.Spec.Capacity[corev1.ResourceStorage]
		phase := string(pv.Status.Phase)
		if pv.DeletionTimestamp != nil {
			phase = "Terminating"
		}
		volumeMode, vac := "<unset>", "<unset>"
		if pv.Spec.VolumeMode != nil {
			volumeMode = string(*pv.Spec.VolumeMode)
		}
		if pv.Spec.VolumeAttributesClassName != nil {
			vac = *pv.Spec.VolumeAttributesClassName
		}
		// GetPersistentVolumeClass: the beta annotation first.
		class, ok := pv.Annotations[corev1.BetaStorageClassAnnotation]
		if !ok {
			class = pv.Spec.StorageClassName
		}
		return []any{
			pv.Name, size.String(), accessModesString(pv.Spec.AccessModes), string(pv.Spec.PersistentVolumeReclaimPolicy),
			phase, claim, class, vac, pv.Status.Reason, age(pv.CreationTimestamp), volumeMode,
		}
	},
}

// resourceQuotaTable: resourceQuotaColumnDefinitions and
// printResourceQuota: used/hard of each resource the status holds, by
// name; those named limits.* under Limit, the others under Request.
var resourceQuotaTable = &tablePrinter{
	columns: []metav1.TableColumnDefinition{
		nameColumn,
		{Name: "Request", Type: "string", Description: "Request represents a minimum amount of cpu/memory that a container may consume."},
		{Name: "Limit", Type: "string", Description: "Limits control the maximum amount of cpu/memory that a container may use independent of contention on the node."},
		ageColumn,
	},
	cells: func(obj runtime.Object, age func(metav1.Time) string) []any {
		q := obj.(*corev1.ResourceQuota)
		var request, limit []string
		for _, name := range slices.Sorted(maps.Keys(q.Status.Hard)) {
			used, hard := q.Status.Used[name], q.Status.Hard[name]
			s := fmt.Sprintf("%s: %s/%s", name, used.String(), hard.String())
			if pieces := strings.Split(string(name), "."); len(pieces) > 1 && pieces[0] == "limits" {
				limit = append(limit, s)
			} else {
				request = append(request, s)
			}
		}
		return []any{q.Name, strings.Join(request, ", "), strings.Join(limit, ", "), age(q.CreationTimestamp)}
	},
}

// podTemplateTable: podTemplateColumnDefinitions and printPodTemplate:
// no Age, and the containers are not wide.
var podTemplateTable = &tablePrinter{
	columns: []metav1.TableColumnDefinition{
		nameColumn,
		{Name: "Containers", Type: "string", Description: "Names of each container in the template."},
		{Name: "Images", Type: "string", Description: "Images referenced by each container in the template."},
		{Name: "Pod Labels", Type: "string", Description: "The labels for the pod template."},
	},
	cells: func(obj runtime.Object, _ func(metav1.Time) string) []any {
		pt := obj.(*corev1.PodTemplate)
		names, images := containerCells(pt.Template.Spec.Containers)
		return []any{pt.Name, names, images, labels.FormatLabels(pt.Template.Labels)}
	},
}

// endpointsTable: endpointColumnDefinitions and printEndpoints.
var endpointsTable = &tablePrinter{
	columns: []metav1.TableColumnDefinition{
		nameColumn,
		{Name: "Endpoints", Type: "string", Description: corev1.Endpoints{}.SwaggerDoc()["subsets"]},
		ageColumn,
	},
	cells: func(obj runtime.Object, age func(metav1.Time) string) []any {
		e := obj.(*corev1.Endpoints)
		return []any{e.Name, formatEndpoints(e), age(e.CreationTimestamp)}
	},
}

// formatEndpoints is printers.go formatEndpoints (with no port filter):
// the first three addresses (host:port where the subset has ports), then
// how many more.
func formatEndpoints(e *corev1.Endpoints) string {
	if len(e.Subsets) == 0 {
		return "<none>"
	}
	const max = 3
	var list []string
	more, count := false, 0
	add := func(s string) {
		if len(list) == max {
			more = true
			return
		}
		list = append(list, s)
	}
	for _, ss := range e.Subsets {
		if len(ss.Ports) == 0 {
			count += len(ss.Addresses)
			for _, a := range ss.Addresses {
				if add(a.IP); more {
					break
				}
			}
			continue
		}
		for _, p := range ss.Ports {
			count += len(ss.Addresses)
			for _, a := range ss.Addresses {
				if add(net.JoinHostPort(a.IP, strconv.Itoa(int(p.Port)))); more {
					break
				}
			}
		}
	}
	ret := strings.Join(list, ",")
	if more {
		return fmt.Sprintf("%s + %d more...", ret, count-max)
	}
	return ret
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

// horizontalPodAutoscalerTable: horizontalPodAutoscalerColumnDefinitions
// and printHorizontalPodAutoscaler. MaxPods and Replicas are integer
// cells in columns typed string, as upstream has them.
var horizontalPodAutoscalerTable = &tablePrinter{
	columns: []metav1.TableColumnDefinition{
		nameColumn,
		{Name: "Reference", Type: "string", Description: autoscalingv2.HorizontalPodAutoscalerSpec{}.SwaggerDoc()["scaleTargetRef"]},
		{Name: "Targets", Type: "string", Description: autoscalingv2.HorizontalPodAutoscalerSpec{}.SwaggerDoc()["metrics"]},
		{Name: "MinPods", Type: "string", Description: autoscalingv2.HorizontalPodAutoscalerSpec{}.SwaggerDoc()["minReplicas"]},
		{Name: "MaxPods", Type: "string", Description: autoscalingv2.HorizontalPodAutoscalerSpec{}.SwaggerDoc()["maxReplicas"]},
		{Name: "Replicas", Type: "string", Description: autoscalingv2.HorizontalPodAutoscalerStatus{}.SwaggerDoc()["currentReplicas"]},
		ageColumn,
	},
	cells: func(obj runtime.Object, age func(metav1.Time) string) []any {
		h := obj.(*autoscalingv2.HorizontalPodAutoscaler)
		minPods := "<unset>"
		if h.Spec.MinReplicas != nil {
			minPods = strconv.Itoa(int(*h.Spec.MinReplicas))
		}
		return []any{
			h.Name, h.Spec.ScaleTargetRef.Kind + "/" + h.Spec.ScaleTargetRef.Name, formatHPAMetrics(h.Spec.Metrics, h.Status.CurrentMetrics),
			minPods, int64(h.Spec.MaxReplicas), int64(h.Status.CurrentReplicas), age(h.CreationTimestamp),
		}
	},
}

// formatHPAMetrics is printers.go formatHPAMetrics: each metric's
// current/target, the first two, then how many more.
func formatHPAMetrics(specs []autoscalingv2.MetricSpec, statuses []autoscalingv2.MetricStatus) string {
	if len(specs) == 0 {
		return "<none>"
	}
	const max = 2
	list := []string{}
	// utilization is current/target of a Resource or ContainerResource
	// metric: a value, or a percentage.
	utilization := func(name corev1.ResourceName, target autoscalingv2.MetricTarget, current *autoscalingv2.MetricValueStatus) string {
		if target.AverageValue != nil {
			cur := "<unknown>"
			if current != nil {
				cur = current.AverageValue.String()
			}
			return fmt.Sprintf("%s: %s/%s", name.String(), cur, target.AverageValue.String())
		}
		cur := "<unknown>"
		if current != nil && current.AverageUtilization != nil {
			cur = fmt.Sprintf("%d%%", *current.AverageUtilization)
		}
		tgt := "<auto>"
		if target.AverageUtilization != nil {
			tgt = fmt.Sprintf("%d%%", *target.AverageUtilization)
		}
		return fmt.Sprintf("%s: %s/%s", name.String(), cur, tgt)
	}
	for i, spec := range specs {
		var st *autoscalingv2.MetricStatus
		if len(statuses) > i {
			st = &statuses[i]
		}
		switch spec.Type {
		case autoscalingv2.ExternalMetricSourceType:
			var cur *autoscalingv2.MetricValueStatus
			if st != nil && st.External != nil {
				cur = &st.External.Current
			}
			list = append(list, valueMetric(spec.External.Target, cur))
		case autoscalingv2.PodsMetricSourceType:
			current := "<unknown>"
			if st != nil && st.Pods != nil {
				current = st.Pods.Current.AverageValue.String()
			}
			list = append(list, fmt.Sprintf("%s/%s", current, spec.Pods.Target.AverageValue.String()))
		case autoscalingv2.ObjectMetricSourceType:
			var cur *autoscalingv2.MetricValueStatus
			if st != nil && st.Object != nil {
				cur = &st.Object.Current
			}
			list = append(list, valueMetric(spec.Object.Target, cur))
		case autoscalingv2.ResourceMetricSourceType:
			var cur *autoscalingv2.MetricValueStatus
			if st != nil && st.Resource != nil {
				cur = &st.Resource.Current
			}
			list = append(list, utilization(spec.Resource.Name, spec.Resource.Target, cur))
		case autoscalingv2.ContainerResourceMetricSourceType:
			var cur *autoscalingv2.MetricValueStatus
			if st != nil && st.ContainerResource != nil {
				cur = &st.ContainerResource.Current
			}
			list = append(list, utilization(spec.ContainerResource.Name, spec.ContainerResource.Target, cur))
		default:
			list = append(list, "<unknown type>")
		}
	}
	if count := len(list); count > max {
		return fmt.Sprintf("%s + %d more...", strings.Join(list[:max], ", "), count-max)
	}
	return strings.Join(list, ", ")
}

// valueMetric is current/target of an External or Object metric: an
// average value ("(avg)"), or a value.
func valueMetric(target autoscalingv2.MetricTarget, current *autoscalingv2.MetricValueStatus) string {
	cur := "<unknown>"
	if target.AverageValue != nil {
		if current != nil && current.AverageValue != nil {
			cur = current.AverageValue.String()
		}
		return fmt.Sprintf("%s/%s (avg)", cur, target.AverageValue.String())
	}
	if current != nil {
		cur = current.Value.String()
	}
	return fmt.Sprintf("%s/%s", cur, target.Value.String())
}

// jobTable: jobColumnDefinitions and printJob. A running job's
// Duration is measured to the server's clock (upstream: time.Since).
var jobTable = &tablePrinter{
	columns: columns(
		nameColumn,
		metav1.TableColumnDefinition{Name: "Status", Type: "string", Description: "Status of the job."},
		metav1.TableColumnDefinition{Name: "Completions", Type: "string", Description: batchv1.JobStatus{}.SwaggerDoc()["succeeded"]},
		metav1.TableColumnDefinition{Name: "Duration", Type: "string", Description: "Time required to complete the job."},
		ageColumn,
		containersColumns,
		metav1.TableColumnDefinition{Name: "Selector", Type: "string", Priority: 1, Description: batchv1.JobSpec{}.SwaggerDoc()["selector"]},
	),
	cells: func(obj runtime.Object, age func(metav1.Time) string) []any {
		j := obj.(*batchv1.Job)
		var completions string
		switch parallelism := replicas(j.Spec.Parallelism); {
		case j.Spec.Completions != nil:
			completions = fmt.Sprintf("%d/%d", j.Status.Succeeded, *j.Spec.Completions)
		case parallelism > 1:
			completions = fmt.Sprintf("%d/1 of %d", j.Status.Succeeded, parallelism)
		default:
			completions = fmt.Sprintf("%d/1", j.Status.Succeeded)
		}
		var took string
		switch {
		case j.Status.StartTime == nil:
		case j.Status.CompletionTime == nil:
			took = age(*j.Status.StartTime)
		default:
			took = translateTimestampSince(*j.Status.StartTime, *j.Status.CompletionTime)
		}
		has := func(t batchv1.JobConditionType) bool {
			for _, c := range j.Status.Conditions {
				if c.Type == t && c.Status == corev1.ConditionTrue {
					return true
				}
			}
			return false
		}
		status := "Running"
		switch {
		case has(batchv1.JobComplete):
			status = "Complete"
		case has(batchv1.JobFailed):
			status = "Failed"
		case j.DeletionTimestamp != nil:
			status = "Terminating"
		case has(batchv1.JobSuspended):
			status = "Suspended"
		case has(batchv1.JobFailureTarget):
			status = "FailureTarget"
		case has(batchv1.JobSuccessCriteriaMet):
			status = "SuccessCriteriaMet"
		}
		names, images := containerCells(j.Spec.Template.Spec.Containers)
		return []any{j.Name, status, completions, took, age(j.CreationTimestamp), names, images, metav1.FormatLabelSelector(j.Spec.Selector)}
	},
}

// cronJobTable: cronJobColumnDefinitions and printCronJob.
var cronJobTable = &tablePrinter{
	columns: columns(
		nameColumn,
		metav1.TableColumnDefinition{Name: "Schedule", Type: "string", Description: batchv1.CronJobSpec{}.SwaggerDoc()["schedule"]},
		metav1.TableColumnDefinition{Name: "Timezone", Type: "string", Description: batchv1.CronJobSpec{}.SwaggerDoc()["timeZone"]},
		metav1.TableColumnDefinition{Name: "Suspend", Type: "boolean", Description: batchv1.CronJobSpec{}.SwaggerDoc()["suspend"]},
		metav1.TableColumnDefinition{Name: "Active", Type: "integer", Description: batchv1.CronJobStatus{}.SwaggerDoc()["active"]},
		metav1.TableColumnDefinition{Name: "Last Schedule", Type: "string", Description: batchv1.CronJobStatus{}.SwaggerDoc()["lastScheduleTime"]},
		ageColumn,
		containersColumns,
		metav1.TableColumnDefinition{Name: "Selector", Type: "string", Priority: 1, Description: batchv1.JobSpec{}.SwaggerDoc()["selector"]},
	),
	cells: func(obj runtime.Object, age func(metav1.Time) string) []any {
		c := obj.(*batchv1.CronJob)
		last := "<none>"
		if c.Status.LastScheduleTime != nil {
			last = age(*c.Status.LastScheduleTime)
		}
		tz := "<none>"
		if c.Spec.TimeZone != nil {
			tz = *c.Spec.TimeZone
		}
		suspend := "<unset>" // printBoolPtr
		if c.Spec.Suspend != nil {
			suspend = "False"
			if *c.Spec.Suspend {
				suspend = "True"
			}
		}
		t := c.Spec.JobTemplate.Spec
		names, images := containerCells(t.Template.Spec.Containers)
		return []any{
			c.Name, c.Spec.Schedule, tz, suspend, int64(len(c.Status.Active)), last, age(c.CreationTimestamp),
			names, images, metav1.FormatLabelSelector(t.Selector),
		}
	},
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

// ingressTable: ingressColumnDefinitions and printIngress.
var ingressTable = &tablePrinter{
	columns: []metav1.TableColumnDefinition{
		nameColumn,
		{Name: "Class", Type: "string", Description: "The name of the IngressClass resource that should be used for additional configuration"},
		{Name: "Hosts", Type: "string", Description: "Hosts that incoming requests are matched against before the ingress rule"},
		{Name: "Address", Type: "string", Description: "Address is a list containing ingress points for the load-balancer"},
		{Name: "Ports", Type: "string", Description: "Ports of TLS configurations that open"},
		ageColumn,
	},
	cells: func(obj runtime.Object, age func(metav1.Time) string) []any {
		in := obj.(*networkingv1.Ingress)
		class := "<none>"
		if in.Spec.IngressClassName != nil {
			class = *in.Spec.IngressClassName
		}
		// formatHosts: the first three hosts, then how many more rules.
		var hosts []string
		const max = 3
		more := false
		for _, r := range in.Spec.Rules {
			if len(hosts) == max {
				more = true
			}
			if !more && r.Host != "" {
				hosts = append(hosts, r.Host)
			}
		}
		hostsCell := "*"
		if len(hosts) > 0 {
			hostsCell = strings.Join(hosts, ",")
			if more {
				hostsCell = fmt.Sprintf("%s + %d more...", hostsCell, len(in.Spec.Rules)-max)
			}
		}
		var lb []string // ingressLoadBalancerStatusStringer, wide
		for _, i := range in.Status.LoadBalancer.Ingress {
			lb = append(lb, cmpOr(i.IP, i.Hostname))
		}
		ports := "80" // formatPorts
		if len(in.Spec.TLS) != 0 {
			ports = "80, 443"
		}
		return []any{in.Name, class, hostsCell, sortedSet(lb), ports, age(in.CreationTimestamp)}
	},
}

// ingressClassTable: ingressClassColumnDefinitions and
// printIngressClass: the default class (annotated
// ingressclass.kubernetes.io/is-default-class: "true") is marked, on a
// get as on a list.
var ingressClassTable = &tablePrinter{
	columns: []metav1.TableColumnDefinition{
		nameColumn,
		{Name: "Controller", Type: "string", Description: "Controller that is responsible for handling this class"},
		{Name: "Parameters", Type: "string", Description: "A reference to a resource with additional parameters"},
		ageColumn,
	},
	cells: func(obj runtime.Object, age func(metav1.Time) string) []any {
		ic := obj.(*networkingv1.IngressClass)
		name := ic.Name
		if ic.Annotations[networkingv1.AnnotationIsDefaultIngressClass] == "true" { // HasDefaultAnnotation
			name += " (default)"
		}
		parameters := "<none>"
		if p := ic.Spec.Parameters; p != nil {
			parameters = p.Kind
			if p.APIGroup != nil {
				parameters += "." + *p.APIGroup
			}
			parameters += "/" + p.Name
		}
		return []any{name, ic.Spec.Controller, parameters, age(ic.CreationTimestamp)}
	},
}

// networkPolicyTable: networkPolicyColumnDefinitioins (sic) and
// printNetworkPolicy.
var networkPolicyTable = &tablePrinter{
	columns: []metav1.TableColumnDefinition{
		nameColumn,
		{Name: "Pod-Selector", Type: "string", Description: networkingv1.NetworkPolicySpec{}.SwaggerDoc()["podSelector"]},
		ageColumn,
	},
	cells: func(obj runtime.Object, age func(metav1.Time) string) []any {
		n := obj.(*networkingv1.NetworkPolicy)
		return []any{n.Name, metav1.FormatLabelSelector(&n.Spec.PodSelector), age(n.CreationTimestamp)}
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

// persistentVolumeClaimTable: persistentVolumeClaimColumnDefinitions and
// printPersistentVolumeClaim.
var persistentVolumeClaimTable = &tablePrinter{
	columns: []metav1.TableColumnDefinition{
		nameColumn,
		{Name: "Status", Type: "string", Description: corev1.PersistentVolumeClaimStatus{}.SwaggerDoc()["phase"]},
		{Name: "Volume", Type: "string", Description: corev1.PersistentVolumeClaimSpec{}.SwaggerDoc()["volumeName"]},
		{Name: "Capacity", Type: "string", Description: corev1.PersistentVolumeClaimStatus{}.SwaggerDoc()["capacity"]},
		{Name: "Access Modes", Type: "string", Description: corev1.PersistentVolumeClaimStatus{}.SwaggerDoc()["accessModes"]},
		{Name: "StorageClass", Type: "string", Description: "StorageClass of the pvc"},
		{Name: "VolumeAttributesClass", Type: "string", Description: "VolumeAttributesClass of the pvc"},
		ageColumn,
		{Name: "VolumeMode", Type: "string", Priority: 1, Description: corev1.PersistentVolumeClaimSpec{}.SwaggerDoc()["volumeMode"]},
	},
	cells: func(obj runtime.Object, age func(metav1.Time) string) []any {
		p := obj.(*corev1.PersistentVolumeClaim)
		phase := string(p.Status.Phase)
		if p.DeletionTimestamp != nil {
			phase = "Terminating"
		}
		vac, volumeMode := "<unset>", "<unset>"
		if p.Spec.VolumeAttributesClassName != nil {
			vac = *p.Spec.VolumeAttributesClassName
		}
		if p.Spec.VolumeMode != nil {
			volumeMode = string(*p.Spec.VolumeMode)
		}
		var capacity, accessModes string
		if p.Spec.VolumeName != "" {
			accessModes = accessModesString(p.Status.AccessModes)
			c := p.Status.Capacity[corev1.ResourceStorage]
			capacity = c.String()
		}
		// GetPersistentVolumeClaimClass: the beta annotation first.
		class, ok := p.Annotations[corev1.BetaStorageClassAnnotation]
		if !ok && p.Spec.StorageClassName != nil {
			class = *p.Spec.StorageClassName
		}
		return []any{p.Name, phase, p.Spec.VolumeName, capacity, accessModes, class, vac, age(p.CreationTimestamp), volumeMode}
	},
}

// accessModesString is core/helper GetAccessModesAsString.
func accessModesString(modes []corev1.PersistentVolumeAccessMode) string {
	var out []string
	for _, m := range []struct {
		mode corev1.PersistentVolumeAccessMode
		s    string
	}{{corev1.ReadWriteOnce, "RWO"}, {corev1.ReadOnlyMany, "ROX"}, {corev1.ReadWriteMany, "RWX"}, {corev1.ReadWriteOncePod, "RWOP"}} {
		if slices.Contains(modes, m.mode) {
			out = append(out, m.s)
		}
	}
	return strings.Join(out, ",")
}

// storageClassTable: storageClassColumnDefinitions and
// printStorageClassInternal; a list marks its effective default
// (printStorageClassList, getEffectiveDefaultStorageClass), a get does
// not (printStorageClass).
var storageClassTable = &tablePrinter{
	columns: []metav1.TableColumnDefinition{
		nameColumn,
		{Name: "Provisioner", Type: "string", Description: storagev1.StorageClass{}.SwaggerDoc()["provisioner"]},
		{Name: "ReclaimPolicy", Type: "string", Description: storagev1.StorageClass{}.SwaggerDoc()["reclaimPolicy"]},
		{Name: "VolumeBindingMode", Type: "string", Description: storagev1.StorageClass{}.SwaggerDoc()["volumeBindingMode"]},
		{Name: "AllowVolumeExpansion", Type: "string", Description: storagev1.StorageClass{}.SwaggerDoc()["allowVolumeExpansion"]},
		ageColumn,
	},
	cells: func(obj runtime.Object, age func(metav1.Time) string) []any {
		return storageClassCells(obj.(*storagev1.StorageClass), "", age)
	},
	listCells: func(items []runtime.Object, age func(metav1.Time) string) [][]any {
		var def *storagev1.StorageClass
		for _, o := range items {
			sc := o.(*storagev1.StorageClass)
			if sc.Annotations["storageclass.kubernetes.io/is-default-class"] != "true" &&
				sc.Annotations["storageclass.beta.kubernetes.io/is-default-class"] != "true" {
				continue
			}
			switch {
			case def == nil, sc.CreationTimestamp.After(def.CreationTimestamp.Time),
				sc.CreationTimestamp.Equal(&def.CreationTimestamp) && sc.Name < def.Name:
				def = sc
			}
		}
		var defName string
		if def != nil {
			defName = def.Name
		}
		rows := make([][]any, len(items))
		for i, o := range items {
			rows[i] = storageClassCells(o.(*storagev1.StorageClass), defName, age)
		}
		return rows
	},
}

func storageClassCells(sc *storagev1.StorageClass, effectiveDefault string, age func(metav1.Time) string) []any {
	name := sc.Name
	if effectiveDefault != "" && sc.Name == effectiveDefault {
		name += " (default)"
	}
	reclaim := string(corev1.PersistentVolumeReclaimDelete)
	if sc.ReclaimPolicy != nil {
		reclaim = string(*sc.ReclaimPolicy)
	}
	binding := string(storagev1.VolumeBindingImmediate)
	if sc.VolumeBindingMode != nil {
		binding = string(*sc.VolumeBindingMode)
	}
	expansion := sc.AllowVolumeExpansion != nil && *sc.AllowVolumeExpansion
	return []any{name, sc.Provisioner, reclaim, binding, expansion, age(sc.CreationTimestamp)}
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

// endpointSliceTable: endpointSliceColumnDefinitions and
// printEndpointSlice (formatDiscoveryPorts, formatDiscoveryEndpoints).
var endpointSliceTable = &tablePrinter{
	columns: []metav1.TableColumnDefinition{
		nameColumn,
		{Name: "AddressType", Type: "string", Description: discoveryv1.EndpointSlice{}.SwaggerDoc()["addressType"]},
		{Name: "Ports", Type: "string", Description: discoveryv1.EndpointSlice{}.SwaggerDoc()["ports"]},
		{Name: "Endpoints", Type: "string", Description: discoveryv1.EndpointSlice{}.SwaggerDoc()["endpoints"]},
		ageColumn,
	},
	cells: func(obj runtime.Object, age func(metav1.Time) string) []any {
		e := obj.(*discoveryv1.EndpointSlice)
		var ports, addrs []string
		for _, p := range e.Ports {
			switch {
			case p.Port != nil:
				ports = append(ports, strconv.Itoa(int(*p.Port)))
			case p.Name != nil:
				ports = append(ports, *p.Name)
			default:
				ports = append(ports, "*")
			}
		}
		for _, ep := range e.Endpoints {
			addrs = append(addrs, ep.Addresses...)
		}
		return []any{e.Name, string(e.AddressType), listWithMore(ports), listWithMore(addrs), age(e.CreationTimestamp)}
	},
}

// listWithMore is listWithMoreString: the first three, then how many
// more; <unset> for none.
func listWithMore(list []string) string {
	const max = 3
	if len(list) > max {
		return fmt.Sprintf("%s + %d more...", strings.Join(list[:max], ","), len(list)-max)
	}
	if len(list) == 0 {
		return "<unset>"
	}
	return strings.Join(list, ",")
}

// eventTable: eventColumnDefinitions and printEvent, for the core
// group's Events and events.k8s.io's, which kube-apiserver stores as one
// kind and prints alike (eventsV1AsCore maps the fields back).
var eventTable = &tablePrinter{
	columns: []metav1.TableColumnDefinition{
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
	cells: func(obj runtime.Object, age func(metav1.Time) string) []any {
		e, ok := obj.(*corev1.Event)
		if !ok {
			e = eventsV1AsCore(obj.(*eventsv1.Event))
		}
		micro := func(t metav1.MicroTime) string { return age(metav1.Time(t)) } // translateMicroTimestampSince
		first := age(e.FirstTimestamp)
		if e.FirstTimestamp.IsZero() {
			first = micro(e.EventTime)
		}
		last := age(e.LastTimestamp)
		if e.LastTimestamp.IsZero() {
			last = first
		}
		count := e.Count
		if e.Series != nil {
			last, count = micro(e.Series.LastObservedTime), e.Series.Count
		} else if count == 0 {
			count = 1 // a singleton event of the new API
		}
		target := strings.ToLower(e.InvolvedObject.Kind)
		if e.InvolvedObject.Name != "" {
			target += "/" + e.InvolvedObject.Name
		}
		source := cmpOr(e.Source.Component, e.ReportingController) // formatEventSource
		if instance := cmpOr(e.Source.Host, e.ReportingInstance); instance != "" {
			source += ", " + instance
		}
		return []any{
			last, e.Type, e.Reason, target, e.InvolvedObject.FieldPath, source,
			strings.TrimSpace(e.Message), first, int64(count), e.Name,
		}
	},
}

// eventsV1AsCore is the events.k8s.io/v1 to core conversion of the
// fields printEvent reads (pkg/apis/events/v1/conversion.go).
func eventsV1AsCore(e *eventsv1.Event) *corev1.Event {
	out := &corev1.Event{
		ObjectMeta: e.ObjectMeta, InvolvedObject: e.Regarding, Reason: e.Reason, Message: e.Note, Type: e.Type,
		Source:         corev1.EventSource{Component: e.DeprecatedSource.Component, Host: e.DeprecatedSource.Host},
		FirstTimestamp: e.DeprecatedFirstTimestamp, LastTimestamp: e.DeprecatedLastTimestamp, Count: e.DeprecatedCount,
		EventTime: e.EventTime, ReportingController: e.ReportingController, ReportingInstance: e.ReportingInstance,
	}
	if e.Series != nil {
		out.Series = &corev1.EventSeries{Count: e.Series.Count, LastObservedTime: e.Series.LastObservedTime}
	}
	return out
}

// csrTable: certificateSigningRequestColumnDefinitions (their
// descriptions from v1beta1's documentation, as upstream takes them) and
// printCertificateSigningRequest with extractCSRStatus. Requestor is
// spec.username, empty here (no one is authenticated).
var csrTable = &tablePrinter{
	columns: []metav1.TableColumnDefinition{
		nameColumn,
		ageColumn,
		{Name: "SignerName", Type: "string", Description: certificatesv1beta1.CertificateSigningRequestSpec{}.SwaggerDoc()["signerName"]},
		{Name: "Requestor", Type: "string", Description: certificatesv1beta1.CertificateSigningRequestSpec{}.SwaggerDoc()["request"]},
		{Name: "RequestedDuration", Type: "string", Description: certificatesv1beta1.CertificateSigningRequestSpec{}.SwaggerDoc()["expirationSeconds"]},
		{Name: "Condition", Type: "string", Description: certificatesv1beta1.CertificateSigningRequestStatus{}.SwaggerDoc()["conditions"]},
	},
	cells: func(obj runtime.Object, age func(metav1.Time) string) []any {
		csr := obj.(*certificatesv1.CertificateSigningRequest)
		signer := "<none>"
		if csr.Spec.SignerName != "" {
			signer = csr.Spec.SignerName
		}
		requested := "<none>"
		if s := csr.Spec.ExpirationSeconds; s != nil {
			requested = duration.HumanDuration(time.Duration(*s) * time.Second)
		}
		var approved, denied, failed bool
		for _, c := range csr.Status.Conditions {
			switch c.Type {
			case certificatesv1.CertificateApproved:
				approved = true
			case certificatesv1.CertificateDenied:
				denied = true
			case certificatesv1.CertificateFailed:
				failed = true
			}
		}
		status := "Pending"
		if denied {
			status = "Denied"
		} else if approved {
			status = "Approved"
		}
		if failed {
			status += ",Failed"
		}
		if len(csr.Status.Certificate) > 0 {
			status += ",Issued"
		}
		return []any{csr.Name, age(csr.CreationTimestamp), signer, csr.Spec.Username, requested, status}
	},
}

// webhooksColumn is the Webhooks column of both webhook configurations
// (mutatingWebhookColumnDefinitions, validatingWebhookColumnDefinitions).
var webhooksColumn = metav1.TableColumnDefinition{Name: "Webhooks", Type: "integer", Description: "Webhooks indicates the number of webhooks registered in this configuration"}

// mutatingWebhookTable: printMutatingWebhook.
var mutatingWebhookTable = &tablePrinter{
	columns: []metav1.TableColumnDefinition{nameColumn, webhooksColumn, ageColumn},
	cells: func(obj runtime.Object, age func(metav1.Time) string) []any {
		c := obj.(*admissionregistrationv1.MutatingWebhookConfiguration)
		return []any{c.Name, int64(len(c.Webhooks)), age(c.CreationTimestamp)}
	},
}

// validatingWebhookTable: printValidatingWebhook.
var validatingWebhookTable = &tablePrinter{
	columns: []metav1.TableColumnDefinition{nameColumn, webhooksColumn, ageColumn},
	cells: func(obj runtime.Object, age func(metav1.Time) string) []any {
		c := obj.(*admissionregistrationv1.ValidatingWebhookConfiguration)
		return []any{c.Name, int64(len(c.Webhooks)), age(c.CreationTimestamp)}
	},
}

// validatingAdmissionPolicyTable: the validatingAdmissionPolicy columns
// and printValidatingAdmissionPolicy.
var validatingAdmissionPolicyTable = &tablePrinter{
	columns: []metav1.TableColumnDefinition{
		nameColumn,
		{Name: "Validations", Type: "integer", Description: "Validations indicates the number of validation rules defined in this configuration"},
		{Name: "ParamKind", Type: "string", Description: "ParamKind specifies the kind of resources used to parameterize this policy"},
		ageColumn,
	},
	cells: func(obj runtime.Object, age func(metav1.Time) string) []any {
		p := obj.(*admissionregistrationv1.ValidatingAdmissionPolicy)
		paramKind := "<unset>"
		if k := p.Spec.ParamKind; k != nil {
			paramKind = k.APIVersion + "/" + k.Kind
		}
		return []any{p.Name, int64(len(p.Spec.Validations)), paramKind, age(p.CreationTimestamp)}
	},
}

// validatingAdmissionPolicyBindingTable: the
// validatingAdmissionPolicyBinding columns and
// printValidatingAdmissionPolicyBinding.
var validatingAdmissionPolicyBindingTable = &tablePrinter{
	columns: []metav1.TableColumnDefinition{
		nameColumn,
		{Name: "PolicyName", Type: "string", Description: "PolicyName indicates the policy definition which the policy binding binded to"},
		{Name: "ParamRef", Type: "string", Description: "ParamRef indicates the param resource which sets the configuration param"},
		ageColumn,
	},
	cells: func(obj runtime.Object, age func(metav1.Time) string) []any {
		b := obj.(*admissionregistrationv1.ValidatingAdmissionPolicyBinding)
		param := "<unset>"
		if pr := b.Spec.ParamRef; pr != nil {
			switch {
			case pr.Name != "" && pr.Namespace != "":
				param = pr.Namespace + "/" + pr.Name
			case pr.Name != "":
				param = "*/" + pr.Name
			case pr.Selector != nil:
				param = pr.Selector.String()
			}
		}
		return []any{b.Name, b.Spec.PolicyName, param, age(b.CreationTimestamp)}
	},
}
