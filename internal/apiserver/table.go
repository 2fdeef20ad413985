package apiserver

import (
	"fmt"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metainternalscheme "k8s.io/apimachinery/pkg/apis/meta/internalversion/scheme"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	tablevalidation "k8s.io/apimachinery/pkg/apis/meta/v1beta1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/duration"
)

// Table answers: what kubectl get asks for.
//
//	Accept: application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json
//
// kube-apiserver answers with a meta.k8s.io Table: the columns kubectl
// prints, computed on the server (recorded transcripts 52-58). The
// columns and cells of each kind come from kube-apiserver's printers,
// k8s.io/kubernetes/pkg/printers/internalversion/printers.go (AddHandlers
// for the column definitions; printPod, printDeployment, printConfigMap,
// printNamespace and printNode for the cells), which this package cannot
// import; they are written out below and in table_kinds.go (services,
// secrets, jobs, rbac bindings... each kind's print<Kind>) for the kinds
// the workshop cluster serves, each rule beside the upstream function it
// copies; the kinds whose registry has no printer get the default
// TableConvertor's Name and Created At (defaultConvertorTable). The table
// around them is kube-apiserver's asTable and TableConvertor
// (apiserver/pkg/endpoints/handlers/response.go,
// kubernetes/pkg/printers/storage).

// tablePrinter is one kind's columns and how to fill a row.
type tablePrinter struct {
	columns []metav1.TableColumnDefinition
	// cells returns a row's cells, the wide ones included: the server
	// always prints wide (printers.GenerateOptions{Wide: true}) and
	// kubectl hides priority-1 columns unless -o wide. age formats a
	// timestamp relative to the server's clock.
	cells func(obj runtime.Object, age func(metav1.Time) string) []any
	// listCells, if set, fills a list's rows where one row depends on
	// the others (a StorageClass list marks its default).
	listCells func(items []runtime.Object, age func(metav1.Time) string) [][]any
}

// tableOptions are a Table request's own parameters (metav1.TableOptions)
// and what the server needs to fill the table.
type tableOptions struct {
	include   metav1.IncludeObjectPolicy // includeObject: the row's object
	noHeaders bool                       // leave out columnDefinitions (watch events after the first)
	now       func() metav1.Time         // the server's clock, for Age
}

// parseTableOptions reads includeObject as kube-apiserver does
// (optionsForTransform): apimachinery's parameter codec, then its
// validation, a bad value being a 400.
func parseTableOptions(q url.Values, now func() metav1.Time) (*tableOptions, error) {
	opts := &metav1.TableOptions{}
	if err := metainternalscheme.ParameterCodec.DecodeParameters(q, metav1.SchemeGroupVersion, opts); err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	switch errs := tablevalidation.ValidateTableOptions(opts); len(errs) {
	case 0:
	case 1:
		return nil, apierrors.NewBadRequest(fmt.Sprintf("Unable to convert to Table as requested: %v", errs[0].Error()))
	default:
		return nil, apierrors.NewBadRequest(fmt.Sprintf("Unable to convert to Table as requested: %v", errs))
	}
	return &tableOptions{include: opts.IncludeObject, now: now}, nil
}

// toTable turns an object or a list into a Table (kube-apiserver's
// TableConvertor, then asTable): one row per object, the list's
// resourceVersion and continue token, and each row's object as
// PartialObjectMetadata unless includeObject says otherwise. obj carries
// its kind and apiVersion (see typed).
func (as *transformation) toTable(obj runtime.Object) (runtime.Object, error) {
	p := as.res.Table
	if p == nil {
		return nil, notAcceptable(fmt.Sprintf("the resource %s does not support being converted to a Table", as.res))
	}
	opts := as.table
	now := opts.now()
	age := func(t metav1.Time) string { return translateTimestampSince(t, now) }
	table := &metav1.Table{}
	if !opts.noHeaders {
		table.ColumnDefinitions = p.columns
	}
	var items []runtime.Object
	if li, ok := obj.(metav1.ListInterface); ok {
		table.ResourceVersion = li.GetResourceVersion()
		table.Continue = li.GetContinue()
		table.RemainingItemCount = li.GetRemainingItemCount()
		if err := meta.EachListItem(obj, func(o runtime.Object) error {
			items = append(items, typed(o, as.res))
			return nil
		}); err != nil {
			return nil, err
		}
	} else {
		table.ResourceVersion = metaOf(obj).GetResourceVersion()
		items = []runtime.Object{obj}
	}
	var cells [][]any
	if _, list := obj.(metav1.ListInterface); list && p.listCells != nil {
		cells = p.listCells(items, age)
	}
	table.Rows = make([]metav1.TableRow, 0, len(items))
	for i, item := range items {
		row := metav1.TableRow{}
		if cells != nil {
			row.Cells = cells[i]
		} else {
			row.Cells = p.cells(item, age)
		}
		if pod, ok := item.(*corev1.Pod); ok {
			row.Conditions = podRowConditions(pod)
		}
		switch opts.include {
		case metav1.IncludeObject:
			row.Object.Object = item
		case metav1.IncludeMetadata, "":
			partial := meta.AsPartialObjectMetadata(metaOf(item))
			partial.GetObjectKind().SetGroupVersionKind(as.gv.WithKind("PartialObjectMetadata"))
			row.Object.Object = partial
		case metav1.IncludeNone:
		}
		table.Rows = append(table.Rows, row)
	}
	table.GetObjectKind().SetGroupVersionKind(as.gv.WithKind("Table"))
	return table, nil
}

// translateTimestampSince is the Age cell (printers.go
// translateTimestampSince), relative to the server's clock rather than
// time.Since, so that a fixed clock gives a fixed age.
func translateTimestampSince(ts metav1.Time, now metav1.Time) string {
	if ts.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(now.Sub(ts.Time))
}

// The descriptions of the columns that describe a field are the field's
// own documentation, as upstream takes them from SwaggerDoc(); the others
// are upstream's literal text (transcripts 52-56).
var (
	nameColumn = metav1.TableColumnDefinition{Name: "Name", Type: "string", Format: "name", Description: metav1.ObjectMeta{}.SwaggerDoc()["name"]}
	ageColumn  = metav1.TableColumnDefinition{Name: "Age", Type: "string", Description: metav1.ObjectMeta{}.SwaggerDoc()["creationTimestamp"]}
)

// defaultConvertorTable is kube-apiserver's default TableConvertor
// (k8s.io/apiserver pkg/registry/rest/table.go,
// defaultTableConvertor.ConvertToTable), which the registries of the
// kinds without a printer use (limitranges, roles, clusterroles): Name,
// and Created At as an RFC 3339 time in UTC, of type date.
var defaultConvertorTable = &tablePrinter{
	columns: []metav1.TableColumnDefinition{
		nameColumn,
		{Name: "Created At", Type: "date", Description: metav1.ObjectMeta{}.SwaggerDoc()["creationTimestamp"]},
	},
	cells: func(obj runtime.Object, _ func(metav1.Time) string) []any {
		m := metaOf(obj)
		return []any{m.GetName(), m.GetCreationTimestamp().UTC().Format(time.RFC3339)}
	},
}

// podTable: AddHandlers' podColumnDefinitions and printPod.
var podTable = &tablePrinter{
	columns: []metav1.TableColumnDefinition{
		nameColumn,
		{Name: "Ready", Type: "string", Description: "The aggregate readiness state of this pod for accepting traffic."},
		{Name: "Status", Type: "string", Description: "The aggregate status of the containers in this pod."},
		{Name: "Restarts", Type: "string", Description: "The number of times the containers in this pod have been restarted and when the last container in this pod has restarted."},
		ageColumn,
		{Name: "IP", Type: "string", Priority: 1, Description: corev1.PodStatus{}.SwaggerDoc()["podIP"]},
		{Name: "Node", Type: "string", Priority: 1, Description: corev1.PodSpec{}.SwaggerDoc()["nodeName"]},
		{Name: "Nominated Node", Type: "string", Priority: 1, Description: corev1.PodStatus{}.SwaggerDoc()["nominatedNodeName"]},
		{Name: "Readiness Gates", Type: "string", Priority: 1, Description: corev1.PodSpec{}.SwaggerDoc()["readinessGates"]},
	},
	cells: func(obj runtime.Object, age func(metav1.Time) string) []any {
		return podCells(obj.(*corev1.Pod), age)
	},
}

// podCells is printPod: Ready counts ready containers (restartable init
// containers, i.e. sidecars, included); Status is the phase, overridden
// by a reason: the pod's, SchedulingGated, an init container's, a
// container's, Terminating; Restarts adds when the last restart was.
func podCells(pod *corev1.Pod, age func(metav1.Time) string) []any {
	restarts, sidecarRestarts := 0, 0
	total := len(pod.Spec.Containers)
	ready := 0
	var lastRestart, lastSidecarRestart metav1.Time

	reason := string(pod.Status.Phase)
	if pod.Status.Reason != "" {
		reason = pod.Status.Reason
	}
	// A pod held by scheduling gates says so (PodScheduled, reason
	// SchedulingGated): transcript 52.
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Reason == corev1.PodReasonSchedulingGated {
			reason = corev1.PodReasonSchedulingGated
		}
	}

	initContainers := map[string]*corev1.Container{}
	for i := range pod.Spec.InitContainers {
		initContainers[pod.Spec.InitContainers[i].Name] = &pod.Spec.InitContainers[i]
		if isRestartableInitContainer(&pod.Spec.InitContainers[i]) {
			total++
		}
	}
	later := func(last *metav1.Time, cs corev1.ContainerStatus) {
		if t := cs.LastTerminationState.Terminated; t != nil && last.Before(&t.FinishedAt) {
			*last = t.FinishedAt
		}
	}

	initializing := false
	for i, c := range pod.Status.InitContainerStatuses {
		restarts += int(c.RestartCount)
		later(&lastRestart, c)
		sidecar := isRestartableInitContainer(initContainers[c.Name])
		if sidecar {
			sidecarRestarts += int(c.RestartCount)
			later(&lastSidecarRestart, c)
		}
		switch {
		case c.State.Terminated != nil && c.State.Terminated.ExitCode == 0:
			continue
		case sidecar && c.Started != nil && *c.Started:
			if c.Ready {
				ready++
			}
			continue
		case c.State.Terminated != nil:
			t := c.State.Terminated
			switch {
			case t.Reason != "":
				reason = "Init:" + t.Reason
			case t.Signal != 0:
				reason = fmt.Sprintf("Init:Signal:%d", t.Signal)
			default:
				reason = fmt.Sprintf("Init:ExitCode:%d", t.ExitCode)
			}
		case c.State.Waiting != nil && c.State.Waiting.Reason != "" && c.State.Waiting.Reason != "PodInitializing":
			reason = "Init:" + c.State.Waiting.Reason
		default:
			reason = fmt.Sprintf("Init:%d/%d", i, len(pod.Spec.InitContainers))
		}
		initializing = true
		break
	}

	if !initializing || podConditionTrue(pod.Status.Conditions, corev1.PodInitialized) {
		restarts, lastRestart = sidecarRestarts, lastSidecarRestart
		running := false
		for i := len(pod.Status.ContainerStatuses) - 1; i >= 0; i-- {
			c := pod.Status.ContainerStatuses[i]
			restarts += int(c.RestartCount)
			later(&lastRestart, c)
			switch {
			case c.State.Waiting != nil && c.State.Waiting.Reason != "":
				reason = c.State.Waiting.Reason
			case c.State.Terminated != nil && c.State.Terminated.Reason != "":
				reason = c.State.Terminated.Reason
			case c.State.Terminated != nil && c.State.Terminated.Signal != 0:
				reason = fmt.Sprintf("Signal:%d", c.State.Terminated.Signal)
			case c.State.Terminated != nil:
				reason = fmt.Sprintf("ExitCode:%d", c.State.Terminated.ExitCode)
			case c.Ready && c.State.Running != nil:
				running = true
				ready++
			}
		}
		// Back to Running if a container still runs.
		if reason == "Completed" && running {
			reason = "NotReady"
			if podConditionTrue(pod.Status.Conditions, corev1.PodReady) {
				reason = "Running"
			}
		}
	}

	terminal := pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed
	switch {
	case pod.DeletionTimestamp != nil && pod.Status.Reason == "NodeLost": // node.NodeUnreachablePodReason
		reason = "Unknown"
	case pod.DeletionTimestamp != nil && !terminal:
		reason = "Terminating" // transcript 58
	}

	restartsCell := strconv.Itoa(restarts)
	if restarts != 0 && !lastRestart.IsZero() {
		restartsCell = fmt.Sprintf("%d (%s ago)", restarts, age(lastRestart))
	}

	ip := "<none>"
	if len(pod.Status.PodIPs) > 0 && pod.Status.PodIPs[0].IP != "" {
		ip = pod.Status.PodIPs[0].IP
	}
	readinessGates := "<none>"
	if n := len(pod.Spec.ReadinessGates); n > 0 {
		met := 0
		for _, g := range pod.Spec.ReadinessGates {
			if podConditionTrue(pod.Status.Conditions, g.ConditionType) {
				met++
			}
		}
		readinessGates = fmt.Sprintf("%d/%d", met, n)
	}
	return []any{
		pod.Name, fmt.Sprintf("%d/%d", ready, total), reason, restartsCell, age(pod.CreationTimestamp),
		orNone(ip), orNone(pod.Spec.NodeName), orNone(pod.Status.NominatedNodeName), readinessGates,
	}
}

// podRowConditions marks a finished pod's row Completed (printPod's
// podSuccessConditions and podFailedConditions).
func podRowConditions(pod *corev1.Pod) []metav1.TableRowCondition {
	switch pod.Status.Phase {
	case corev1.PodSucceeded:
		return []metav1.TableRowCondition{{Type: metav1.RowCompleted, Status: metav1.ConditionTrue, Reason: string(corev1.PodSucceeded), Message: "The pod has completed successfully."}}
	case corev1.PodFailed:
		return []metav1.TableRowCondition{{Type: metav1.RowCompleted, Status: metav1.ConditionTrue, Reason: string(corev1.PodFailed), Message: "The pod failed."}}
	}
	return nil
}

// isRestartableInitContainer: a sidecar, an init container with
// restartPolicy Always.
func isRestartableInitContainer(c *corev1.Container) bool {
	return c != nil && c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways
}

// podConditionTrue reports whether the pod's first condition of type t
// is True (printers.go isPodInitializedConditionTrue, hasPodReadyCondition
// and the readiness-gates count).
func podConditionTrue(conditions []corev1.PodCondition, t corev1.PodConditionType) bool {
	for _, c := range conditions {
		if c.Type == t {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func orNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}

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

// containerCells is printers.go layoutContainerCells: names and images,
// comma-separated.
func containerCells(containers []corev1.Container) (names, images string) {
	var n, i []string
	for _, c := range containers {
		n, i = append(n, c.Name), append(i, c.Image)
	}
	return strings.Join(n, ","), strings.Join(i, ",")
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

func orUnknown(s string) string {
	if s == "" {
		return "<unknown>"
	}
	return s
}
