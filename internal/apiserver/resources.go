package apiserver

import (
	"fmt"
	"hash/fnv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

// Resource declares one REST resource the workshop cluster serves. Adding a
// resource means adding one entry to [resources]: the store and the HTTP
// layer are generic.
type Resource struct {
	GVR        schema.GroupVersionResource
	Kind       string // e.g. "Pod"; the list kind is Kind+"List"
	ShortNames []string
	Namespaced bool

	New     func() runtime.Object // an empty object of Kind
	NewList func() runtime.Object // an empty list of Kind

	// StatusSubresource: PUT .../status writes only .status, and a PUT of
	// the main resource leaves .status as it was.
	StatusSubresource bool
	// Generation: metadata.generation starts at 1 and grows when .spec
	// changes (and when deletion starts), as kube-apiserver does for pods
	// and deployments. ConfigMaps, Namespaces and Nodes have none.
	Generation bool
	// GenerationOnAnnotations: annotation changes bump the generation too
	// (deployments, whose annotations are copied to their ReplicaSets).
	GenerationOnAnnotations bool
	// GracefulDelete: a DELETE first stamps deletionTimestamp (a MODIFIED
	// event), then removes the object (DELETED), and answers with the
	// object. This is what kube-apiserver does for a pod bound to no node
	// (transcripts 21, 37, 39). Others answer a Status and emit one DELETED.
	GracefulDelete bool
	// Scale: the resource has a scale subresource (autoscaling/v1 Scale
	// of .spec.replicas, scale.go), as deployments have.
	Scale bool
	// NameIsLabel: names must be DNS-1123 labels (namespaces), not subdomains.
	NameIsLabel bool

	// Table is how kubectl get prints the resource: the columns and
	// cells of a Table answer (table.go).
	Table *tablePrinter

	// Fields returns the field-selector fields of an object. Every
	// resource supports metadata.name and metadata.namespace.
	Fields func(obj runtime.Object) fields.Set
	// Default fills the scheme's defaults on create (kube-apiserver's
	// defaulting functions). They run before managedFields are recorded,
	// so the writer owns them.
	Default func(obj runtime.Object, now metav1.Time)
	// Admit does what admission plugins and the create strategy add
	// after that (tolerations, priority, initial status): kube-apiserver
	// records no owner for these.
	Admit func(obj runtime.Object, now metav1.Time)
}

// GroupResource is what Status errors name ("pods", "deployments.apps").
func (r *Resource) GroupResource() schema.GroupResource { return r.GVR.GroupResource() }

// GroupVersionKind of the objects of this resource.
func (r *Resource) GroupVersionKind() schema.GroupVersionKind {
	return r.GVR.GroupVersion().WithKind(r.Kind)
}

// String is how the request log names the resource: "pods", "deployments.apps".
func (r *Resource) String() string { return r.GroupResource().String() }

// resources is the resource table of the workshop cluster.
var resources = []*Resource{
	{
		GVR:  corev1.SchemeGroupVersion.WithResource("namespaces"),
		Kind: "Namespace", Table: namespaceTable, ShortNames: []string{"ns"},
		New: func() runtime.Object { return &corev1.Namespace{} }, NewList: func() runtime.Object { return &corev1.NamespaceList{} },
		StatusSubresource: true, NameIsLabel: true,
		Fields: func(obj runtime.Object) fields.Set {
			return fields.Set{"status.phase": string(obj.(*corev1.Namespace).Status.Phase)}
		},
		Default: defaultNamespace,
		Admit:   admitNamespace,
	},
	{
		GVR:  corev1.SchemeGroupVersion.WithResource("nodes"),
		Kind: "Node", Table: nodeTable, ShortNames: []string{"no"},
		New: func() runtime.Object { return &corev1.Node{} }, NewList: func() runtime.Object { return &corev1.NodeList{} },
		StatusSubresource: true,
		Fields: func(obj runtime.Object) fields.Set {
			return fields.Set{"spec.unschedulable": fmt.Sprint(obj.(*corev1.Node).Spec.Unschedulable)}
		},
		Admit: admitNode,
	},
	{
		GVR:  corev1.SchemeGroupVersion.WithResource("pods"),
		Kind: "Pod", Table: podTable, ShortNames: []string{"po"}, Namespaced: true,
		New: func() runtime.Object { return &corev1.Pod{} }, NewList: func() runtime.Object { return &corev1.PodList{} },
		StatusSubresource: true, Generation: true, GracefulDelete: true,
		Fields:  podFields,
		Default: defaultPod,
		Admit:   admitPod,
	},
	{
		GVR:  corev1.SchemeGroupVersion.WithResource("configmaps"),
		Kind: "ConfigMap", Table: configMapTable, ShortNames: []string{"cm"}, Namespaced: true,
		New: func() runtime.Object { return &corev1.ConfigMap{} }, NewList: func() runtime.Object { return &corev1.ConfigMapList{} },
	},
	{
		GVR:  appsv1.SchemeGroupVersion.WithResource("deployments"),
		Kind: "Deployment", Table: deploymentTable, ShortNames: []string{"deploy"}, Namespaced: true,
		New: func() runtime.Object { return &appsv1.Deployment{} }, NewList: func() runtime.Object { return &appsv1.DeploymentList{} },
		StatusSubresource: true, Generation: true, GenerationOnAnnotations: true, Scale: true,
		Default: defaultDeployment,
	},
}

// fieldsOf returns every field-selector field of obj: the common metadata
// fields plus the resource's own.
func (r *Resource) fieldsOf(obj runtime.Object) fields.Set {
	m := metaOf(obj)
	set := fields.Set{"metadata.name": m.GetName()}
	if r.Namespaced {
		set["metadata.namespace"] = m.GetNamespace()
	}
	if r.Fields != nil {
		for k, v := range r.Fields(obj) {
			set[k] = v
		}
	}
	return set
}

// checkFieldSelector rejects a selector on a field the resource does not
// support, with kube-apiserver's message (transcript 09).
func (r *Resource) checkFieldSelector(sel fields.Selector) error {
	if sel == nil || sel.Empty() {
		return nil
	}
	supported := r.fieldsOf(r.New())
	for _, req := range sel.Requirements() {
		if _, ok := supported[req.Field]; !ok {
			return fmt.Errorf("field label not supported: %s", req.Field)
		}
	}
	return nil
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
