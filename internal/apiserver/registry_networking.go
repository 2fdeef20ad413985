package apiserver

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
)

// networking.k8s.io/v1 (kubernetes pkg/registry/networking).
var networkingStrategies = map[schema.GroupResource]strategy{
	{Group: "networking.k8s.io", Resource: "ingresses"}: {
		ShortNames: []string{"ing"}, Table: ingressTable, Generation: true, ResetStatusOnCreate: true,
	},
	{Group: "networking.k8s.io", Resource: "ingressclasses"}: {Generation: true, Table: ingressClassTable},
	{Group: "networking.k8s.io", Resource: "networkpolicies"}: {
		ShortNames: []string{"netpol"}, Table: networkPolicyTable, Generation: true,
		Default: defaultNetworkPolicy,
	},
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
