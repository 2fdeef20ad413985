package apiserver

import (
	"fmt"
	"strconv"
	"strings"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// autoscaling/v2 (kubernetes pkg/registry/autoscaling).
var autoscalingStrategies = map[schema.GroupResource]strategy{
	{Group: "autoscaling", Resource: "horizontalpodautoscalers"}: {
		ShortNames: []string{"hpa"}, Table: horizontalPodAutoscalerTable, Generation: true, ResetStatusOnCreate: true,
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
