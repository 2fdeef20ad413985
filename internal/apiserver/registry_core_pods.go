package apiserver

import (
	"cmp"
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
)

// Pods and pod templates (kubernetes pkg/registry/core/pod,
// pkg/registry/core/podtemplate): their strategies, the pod spec's
// defaults and validation, shared by every kind with a pod template, the
// admission plugins that act on a pod, and their printers. A pod's
// subresources binding and eviction are in podsubresources.go.
var podStrategies = map[schema.GroupResource]strategy{
	{Resource: "pods"}: {
		ShortNames: []string{"po"}, Generation: true, GracefulDelete: true, Table: podTable,
		ValidateObject:   validatePodSpecAt(field.NewPath("spec"), func(obj runtime.Object) *corev1.PodSpec { return &obj.(*corev1.Pod).Spec }),
		ValidateUpdate:   validatePodUpdate,
		Fields:           podFields,
		FieldLabel:       podFieldLabel,
		Default:          defaultPod,
		PrepareForCreate: preparePodForCreate,
		// podStatusStrategy: a status write may not touch ownerReferences.
		PrepareStatusUpdate: func(next, old runtime.Object, _ metav1.Time) {
			next.(*corev1.Pod).OwnerReferences = old.(*corev1.Pod).OwnerReferences
		},
	},
	{Resource: "podtemplates"}: {
		Generation: true, Table: podTemplateTable,
		ValidateObject: validatePodSpecAt(field.NewPath("template", "spec"), func(obj runtime.Object) *corev1.PodSpec {
			return &obj.(*corev1.PodTemplate).Template.Spec
		}),
		Default: func(obj runtime.Object, _ metav1.Time) { defaultPodSpec(&obj.(*corev1.PodTemplate).Template.Spec) },
	},
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

// preparePodForCreate is podStrategy's PrepareForCreate
// (https://github.com/kubernetes/kubernetes/blob/v1.37.2/pkg/registry/core/pod/strategy.go):
// the initial status, phase Pending and the QoS class, and the
// PodScheduled condition of a pod held by scheduling gates (transcript
// 01). The admission plugins that act on a pod before it are below.
func preparePodForCreate(obj runtime.Object, now metav1.Time) {
	p := obj.(*corev1.Pod)
	s := &p.Spec
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

// podCreated is the pod a's create would store, for the admission
// plugins that act only on a pod's create (nil: a is not one).
func podCreated(a admissionAttributes) *corev1.Pod {
	if a.Operation != admissionCreate || a.Resource.GVR != podsGVR || a.Subresource != "" {
		return nil
	}
	return a.Object.(*corev1.Pod)
}

// defaultTolerationSeconds is the DefaultTolerationSeconds admission
// plugin
// (https://github.com/kubernetes/kubernetes/blob/v1.37.2/plugin/pkg/admission/defaulttolerationseconds/admission.go):
// a new pod tolerates the not-ready and unreachable taints for 300 s,
// unless it tolerates them itself. One of store_admission.go's
// mutatingAdmissionPlugins.
func defaultTolerationSeconds(_ *store, a admissionAttributes) error {
	p := podCreated(a)
	if p == nil {
		return nil
	}
	for _, key := range []string{corev1.TaintNodeNotReady, corev1.TaintNodeUnreachable} {
		if toleratesNoExecute(p.Spec.Tolerations, key) {
			continue
		}
		p.Spec.Tolerations = append(p.Spec.Tolerations, corev1.Toleration{
			Key: key, Operator: corev1.TolerationOpExists,
			Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](300),
		})
	}
	return nil
}

// priority is the Priority admission plugin
// (https://github.com/kubernetes/kubernetes/blob/v1.37.2/plugin/pkg/admission/priority/admission.go)
// in a cluster with no PriorityClass: a new pod's priority is 0, its
// preemption policy PreemptLowerPriority. One of store_admission.go's
// mutatingAdmissionPlugins.
func priority(_ *store, a admissionAttributes) error {
	p := podCreated(a)
	if p == nil {
		return nil
	}
	if p.Spec.Priority == nil {
		p.Spec.Priority = ptr.To[int32](0)
	}
	if p.Spec.PreemptionPolicy == nil {
		p.Spec.PreemptionPolicy = ptr.To(corev1.PreemptLowerPriority)
	}
	return nil
}

// serviceAccount is the ServiceAccount admission plugin's Admit of a
// pod's create (admitServiceAccount, below). One of store_admission.go's
// mutatingAdmissionPlugins.
func serviceAccount(_ *store, a admissionAttributes) error {
	if p := podCreated(a); p != nil {
		admitServiceAccount(p)
	}
	return nil
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
		// The plugin runs before a generateName is made into a name.
		name = serviceAccountVolume + "-" + volumeSuffix(p.Namespace, cmp.Or(p.Name, p.GenerateName))
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

// validatePodSpecAt is the ValidateObject of a kind with a pod spec (a
// pod's, or a pod template's at path): the few field validations the
// chapters and the suites tried on the workshop cluster meet, a pod spec
// needs a container (ValidatePodSpec; kube-apiserver v1.37.2 answers
// "spec.template.spec.containers: Required value" for a Deployment).
func validatePodSpecAt(path *field.Path, spec func(obj runtime.Object) *corev1.PodSpec) func(obj runtime.Object) field.ErrorList {
	return func(obj runtime.Object) field.ErrorList {
		if len(spec(obj).Containers) == 0 {
			return field.ErrorList{field.Required(path.Child("containers"), "")}
		}
		return nil
	}
}

// validatePodUpdate refuses what kube-apiserver refuses: a pod's spec is
// immutable but for container images, activeDeadlineSeconds, added
// tolerations and removed scheduling gates.
// It is the pods' ValidateUpdate, for the object and its subresources.
func validatePodUpdate(next, old runtime.Object, _ string) field.ErrorList {
	np, op := next.(*corev1.Pod), old.(*corev1.Pod)
	a, b := np.Spec.DeepCopy(), op.Spec.DeepCopy()
	for _, s := range []*corev1.PodSpec{a, b} {
		for i := range s.Containers {
			s.Containers[i].Image = ""
		}
		for i := range s.InitContainers {
			s.InitContainers[i].Image = ""
		}
		s.ActiveDeadlineSeconds = nil
		s.SchedulingGates = nil
	}
	if len(a.Tolerations) >= len(b.Tolerations) &&
		apiequality.Semantic.DeepEqual(a.Tolerations[:len(b.Tolerations)], b.Tolerations) {
		a.Tolerations, b.Tolerations = nil, nil // only additions
	}
	gatesOK := len(np.Spec.SchedulingGates) <= len(op.Spec.SchedulingGates) // gates may only go
	if apiequality.Semantic.DeepEqual(a, b) && gatesOK {
		return nil
	}
	return field.ErrorList{
		field.Forbidden(field.NewPath("spec"), "pod updates may not change fields other than "+
			"`spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,"+
			"`spec.tolerations` (only additions to existing tolerations),"+
			"`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)"),
	}
}
