package apiserver

import (
	"strconv"

	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// discovery.k8s.io/v1 (kubernetes pkg/registry/discovery/endpointslice).
var discoveryStrategies = map[schema.GroupResource]strategy{
	{Group: "discovery.k8s.io", Resource: "endpointslices"}: {Generation: true, Table: endpointSliceTable},
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
