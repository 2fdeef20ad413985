package apiserver

import (
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
)

// Services (kubernetes pkg/registry/core/service): the strategy, the
// defaults, the allocation of cluster IPs and node ports, and the printer.
var serviceStrategies = map[schema.GroupResource]strategy{
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
