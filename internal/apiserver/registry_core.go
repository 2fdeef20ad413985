package apiserver

import (
	"fmt"
	"maps"
	"net"
	"slices"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
)

// The core group ("", v1), but for pods and pod templates
// (registry_core_pods.go) and services (registry_core_services.go): each
// kind's strategy (kubernetes pkg/registry/core/<kind>/strategy.go), its
// defaults (pkg/apis/core/v1/defaults.go), the admission plugins that
// act on it, its validation and its printer, below.
var coreStrategies = map[schema.GroupResource]strategy{
	{Resource: "namespaces"}: {
		ShortNames: []string{"ns"}, NameIsLabel: true, Table: namespaceTable,
		Fields: func(obj runtime.Object) fields.Set {
			return fields.Set{"status.phase": string(obj.(*corev1.Namespace).Status.Phase)}
		},
		FieldLabel:       fieldLabels("metadata.name", "status.phase"),
		Default:          defaultNamespace,
		PrepareForCreate: prepareNamespaceForCreate,
		// An update's body is defaulted too, and the strategy's
		// Canonicalize labels it again: a write cannot drop the label.
		PrepareForUpdate: func(next, _ runtime.Object) { defaultNamespace(next, metav1.Time{}) },
		AfterCreate: func(s *store, obj runtime.Object) error {
			return createDefaultServiceAccount(s, obj.(*corev1.Namespace))
		},
		// The namespace's registry (pkg/registry/core/namespace/storage)
		// marks it Terminating; the namespace controller deletes its
		// contents, then it.
		PrepareForDelete: func(obj runtime.Object) { obj.(*corev1.Namespace).Status.Phase = corev1.NamespaceTerminating },
		DeleteContents:   deleteNamespaceContents,
	},
	{Resource: "nodes"}: {
		ShortNames: []string{"no"}, Table: nodeTable,
		Fields: func(obj runtime.Object) fields.Set {
			return fields.Set{"spec.unschedulable": fmt.Sprint(obj.(*corev1.Node).Spec.Unschedulable)}
		},
		FieldLabel: fieldLabels("metadata.name", "spec.unschedulable"),
	},
	{Resource: "configmaps"}: {ShortNames: []string{"cm"}, Table: configMapTable, ValidateUpdate: validateConfigMapUpdate},
	{Resource: "endpoints"}:  {ShortNames: []string{"ep"}, Table: endpointsTable, Default: defaultEndpoints},
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
		// SetDefaults_PersistentVolumeClaim's phase, which kube-apiserver
		// applies as it reads the claim back (PrepareForCreate has
		// emptied the status).
		PrepareForCreate: func(obj runtime.Object, _ metav1.Time) {
			if p := obj.(*corev1.PersistentVolumeClaim); p.Status.Phase == "" {
				p.Status.Phase = corev1.ClaimPending
			}
		},
	},
	{Resource: "persistentvolumes"}: {
		ShortNames: []string{"pv"}, Table: persistentVolumeTable, ResetStatusOnCreate: true,
		// persistentvolumeStrategy.PrepareForCreate.
		PrepareForCreate: func(obj runtime.Object, now metav1.Time) {
			pv := obj.(*corev1.PersistentVolume)
			pv.Status.Phase = corev1.VolumePending
			pv.Status.LastPhaseTransitionTime = &now
		},
	},
	{Resource: "limitranges"}:    {ShortNames: []string{"limits"}, Table: limitRangeTable},
	{Resource: "resourcequotas"}: {ShortNames: []string{"quota"}, Table: resourceQuotaTable, ResetStatusOnCreate: true},
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

// defaultPVC: SetDefaults_PersistentVolumeClaimSpec, volumeMode Filesystem.
func defaultPVC(obj runtime.Object, _ metav1.Time) {
	p := obj.(*corev1.PersistentVolumeClaim)
	if p.Spec.VolumeMode == nil {
		p.Spec.VolumeMode = ptr.To(corev1.PersistentVolumeFilesystem)
	}
}

// defaultNamespace is SetDefaults_Namespace
// (https://github.com/kubernetes/kubernetes/blob/v1.37.2/pkg/apis/core/v1/defaults.go#L368):
// the kubernetes.io/metadata.name label, which a namespaceSelector can
// match, is a default, owned by the writer (transcript 00). A namespace
// with no name yet (generateName) gets it from
// prepareNamespaceForCreate.
func defaultNamespace(obj runtime.Object, _ metav1.Time) {
	ns := obj.(*corev1.Namespace)
	if ns.Name == "" {
		return
	}
	if ns.Labels == nil {
		ns.Labels = map[string]string{}
	}
	ns.Labels[corev1.LabelMetadataName] = ns.Name
}

// prepareNamespaceForCreate is namespaceStrategy's PrepareForCreate
// (https://github.com/kubernetes/kubernetes/blob/v1.37.2/pkg/registry/core/namespace/strategy.go#L63):
// phase Active, and the kubernetes finalizer added to those sent; then
// its Canonicalize (#L110), which labels the namespace with its name
// once a generateName has made it, as defaultNamespace could not.
func prepareNamespaceForCreate(obj runtime.Object, now metav1.Time) {
	ns := obj.(*corev1.Namespace)
	ns.Status = corev1.NamespaceStatus{Phase: corev1.NamespaceActive}
	if !slices.Contains(ns.Spec.Finalizers, corev1.FinalizerKubernetes) {
		ns.Spec.Finalizers = append(ns.Spec.Finalizers, corev1.FinalizerKubernetes)
	}
	defaultNamespace(ns, now)
}

// createDefaultServiceAccount is kube-controller-manager's
// serviceaccounts controller, with Options.Bootstrap: a new namespace
// gets its "default" ServiceAccount, which has no managedFields
// (transcript 91).
func createDefaultServiceAccount(s *store, ns *corev1.Namespace) error {
	if !s.defaultServiceAccounts || s.dry {
		return nil
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: defaultServiceAccount, Namespace: ns.Name}}
	_, err := s.createLocked(s.reg.lookup(serviceAccountsGVR), ns.Name, "", sa, true)
	return err
}

// deleteNamespaceContents is what the namespace controller does, done
// at once: every namespaced object in the namespace is deleted.
func deleteNamespaceContents(s *store, obj runtime.Object) error {
	name := metaOf(obj).GetName()
	for _, r := range s.reg.all() {
		if !r.Namespaced {
			continue
		}
		for _, key := range sortedKeys(s.objects[storageOf(r)]) {
			o := metaOf(s.objects[storageOf(r)][key])
			if o.GetNamespace() == name {
				if _, err := s.deleteLocked(r, o.GetNamespace(), o.GetName()); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// namespaceLifecycle is the NamespaceLifecycle admission plugin's Admit
// (k8s.io/apiserver pkg/admission/plugin/namespace/lifecycle/admission.go)
// on a create: new content in a namespace that does not exist is refused
// 404, in one being terminated 403. It is the first of the workshop
// cluster's mutatingAdmissionPlugins (store_admission.go).
func namespaceLifecycle(s *store, a admissionAttributes) error {
	if a.Operation != admissionCreate || !a.Resource.Namespaced {
		return nil
	}
	ns, ok := s.objectsOf(namespacesGVR)[a.Namespace]
	if !ok {
		return apierrors.NewNotFound(s.reg.lookup(namespacesGVR).GroupResource(), a.Namespace)
	}
	if ns.(*corev1.Namespace).Status.Phase == corev1.NamespaceTerminating {
		return apierrors.NewForbidden(a.Resource.GroupResource(), a.Name,
			fmt.Errorf("unable to create new content in namespace %s because it is being terminated", a.Namespace))
	}
	return nil
}

// taintNodesByCondition is the TaintNodesByCondition admission plugin
// (https://github.com/kubernetes/kubernetes/blob/v1.37.2/plugin/pkg/admission/nodetaint/admission.go):
// a new node is tainted not-ready until its kubelet reports in
// (transcript 28). One of store_admission.go's mutatingAdmissionPlugins.
func taintNodesByCondition(_ *store, a admissionAttributes) error {
	if a.Operation != admissionCreate || a.Resource.GVR != nodesGVR || a.Subresource != "" {
		return nil
	}
	n := a.Object.(*corev1.Node)
	for _, t := range n.Spec.Taints {
		if t.Key == corev1.TaintNodeNotReady && t.Effect == corev1.TaintEffectNoSchedule {
			return nil
		}
	}
	n.Spec.Taints = append(n.Spec.Taints, corev1.Taint{Key: corev1.TaintNodeNotReady, Effect: corev1.TaintEffectNoSchedule})
	return nil
}

// configMapTable: configMapColumnDefinitions and printConfigMap; Data is
// the number of keys, binaryData's included (transcript 55).
var configMapTable = &tablePrinter{
	columns: []metav1.TableColumnDefinition{
		nameColumn,
		{Name: "Data", Type: "string", Description: corev1.ConfigMap{}.SwaggerDoc()["data"]},
		ageColumn,
	},
	cells: func(obj runtime.Object, age func(metav1.Time) string) []any {
		cm := obj.(*corev1.ConfigMap)
		return []any{cm.Name, int64(len(cm.Data) + len(cm.BinaryData)), age(cm.CreationTimestamp)}
	},
}

// namespaceTable: namespaceColumnDefinitions and printNamespace
// (transcript 56).
var namespaceTable = &tablePrinter{
	columns: []metav1.TableColumnDefinition{
		nameColumn,
		{Name: "Status", Type: "string", Description: "The status of the namespace"},
		ageColumn,
	},
	cells: func(obj runtime.Object, age func(metav1.Time) string) []any {
		ns := obj.(*corev1.Namespace)
		return []any{ns.Name, string(ns.Status.Phase), age(ns.CreationTimestamp)}
	},
}

// nodeTable: nodeColumnDefinitions and printNode. No recording has a
// node table; these follow upstream's source.
var nodeTable = &tablePrinter{
	columns: []metav1.TableColumnDefinition{
		nameColumn,
		{Name: "Status", Type: "string", Description: "The status of the node"},
		{Name: "Roles", Type: "string", Description: "The roles of the node"},
		ageColumn,
		{Name: "Version", Type: "string", Description: corev1.NodeSystemInfo{}.SwaggerDoc()["kubeletVersion"]},
		{Name: "Internal-IP", Type: "string", Priority: 1, Description: corev1.NodeStatus{}.SwaggerDoc()["addresses"]},
		{Name: "External-IP", Type: "string", Priority: 1, Description: corev1.NodeStatus{}.SwaggerDoc()["addresses"]},
		{Name: "OS-Image", Type: "string", Priority: 1, Description: corev1.NodeSystemInfo{}.SwaggerDoc()["osImage"]},
		{Name: "Kernel-Version", Type: "string", Priority: 1, Description: corev1.NodeSystemInfo{}.SwaggerDoc()["kernelVersion"]},
		{Name: "Container-Runtime", Type: "string", Priority: 1, Description: corev1.NodeSystemInfo{}.SwaggerDoc()["containerRuntimeVersion"]},
	},
	cells: func(obj runtime.Object, age func(metav1.Time) string) []any {
		n := obj.(*corev1.Node)
		// Status: Ready or NotReady from the Ready condition, Unknown
		// without one, then SchedulingDisabled if cordoned.
		var status []string
		for _, c := range n.Status.Conditions {
			if c.Type == corev1.NodeReady {
				if c.Status == corev1.ConditionTrue {
					status = append(status, string(c.Type))
				} else {
					status = append(status, "Not"+string(c.Type))
				}
				break
			}
		}
		if len(status) == 0 {
			status = append(status, "Unknown")
		}
		if n.Spec.Unschedulable {
			status = append(status, "SchedulingDisabled")
		}
		info := n.Status.NodeInfo
		return []any{
			n.Name, strings.Join(status, ","), orNone(strings.Join(nodeRoles(n), ",")), age(n.CreationTimestamp), info.KubeletVersion,
			nodeAddress(n, corev1.NodeInternalIP), nodeAddress(n, corev1.NodeExternalIP),
			orUnknown(info.OSImage), orUnknown(info.KernelVersion), orUnknown(info.ContainerRuntimeVersion),
		}
	},
}

// nodeRoles is printers.go findNodeRoles: node-role.kubernetes.io/<role>
// labels and the kubernetes.io/role label, sorted.
func nodeRoles(n *corev1.Node) []string {
	set := map[string]bool{}
	for k, v := range n.Labels {
		switch {
		case strings.HasPrefix(k, "node-role.kubernetes.io/"):
			if role := strings.TrimPrefix(k, "node-role.kubernetes.io/"); role != "" {
				set[role] = true
			}
		case k == "kubernetes.io/role" && v != "":
			set[v] = true
		}
	}
	roles := make([]string, 0, len(set))
	for r := range set {
		roles = append(roles, r)
	}
	sort.Strings(roles)
	return roles
}

// nodeAddress is getNodeInternalIP and getNodeExternalIP: the first
// address of the type, or <none>.
func nodeAddress(n *corev1.Node, t corev1.NodeAddressType) string {
	for _, a := range n.Status.Addresses {
		if a.Type == t {
			return a.Address
		}
	}
	return "<none>"
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

// limitRangeTable: its registry (pkg/registry/core/limitrange/storage)
// has no printer but rest.NewDefaultTableConvertor: Name and Created At.
var limitRangeTable = defaultConvertorTable

var serviceAccountsGVR = corev1.SchemeGroupVersion.WithResource("serviceaccounts")

var namespacesGVR = corev1.SchemeGroupVersion.WithResource("namespaces")
