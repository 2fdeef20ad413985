package apiserver

import (
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// events.k8s.io/v1: the same Events as the core group's, by other field
// names (pkg/apis/events/v1/conversion.go maps them to the core ones).
// The workshop cluster stores the two apart.
var eventsStrategies = map[schema.GroupResource]strategy{
	// field names (pkg/apis/events/v1/conversion.go maps them to the
	{Group: "events.k8s.io", Resource: "events"}: {
		ShortNames: []string{"ev"}, Table: eventTable,
		Fields: func(obj runtime.Object) fields.Set { return eventsV1Fields(obj.(*eventsv1.Event)) },
		FieldLabel: fieldLabels("reason", "regarding.kind", "regarding.namespace", "regarding.name", "regarding.uid",
			"regarding.apiVersion", "regarding.resourceVersion", "regarding.fieldPath", "reportingController",
			"type", "metadata.namespace", "metadata.name"),
	},
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
