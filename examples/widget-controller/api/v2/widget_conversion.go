package v2

import (
	"maps"
	"slices"

	"sigs.k8s.io/controller-runtime/pkg/conversion"

	examplev1 "github.com/informer-walkthrough/informer-walkthrough/examples/widget-controller/api/v1"
)

// A v2 Widget converts to and from the hub, v1 (controller-runtime's
// pkg/conversion: Convertible), as kubebuilder's "create webhook
// --conversion --spoke v2" lays it out; the manager's conversion webhook
// (/convert) calls these for every ConversionReview kube-apiserver sends.

// ConvertTo converts this Widget to the hub version: its entries become
// v1's data map (a key given twice keeps its last value).
func (src *Widget) ConvertTo(dstRaw conversion.Hub) error {
	dst := dstRaw.(*examplev1.Widget)
	dst.ObjectMeta = src.ObjectMeta
	dst.Spec.Data = nil
	for _, e := range src.Spec.Entries {
		if dst.Spec.Data == nil {
			dst.Spec.Data = map[string]string{}
		}
		dst.Spec.Data[e.Key] = e.Value
	}
	dst.Status = examplev1.WidgetStatus(src.Status)
	return nil
}

// ConvertFrom converts from the hub version to this one: v1's data map
// becomes entries, sorted by key so that a conversion always gives the
// same list.
func (dst *Widget) ConvertFrom(srcRaw conversion.Hub) error {
	src := srcRaw.(*examplev1.Widget)
	dst.ObjectMeta = src.ObjectMeta
	dst.Spec.Entries = nil
	for _, k := range slices.Sorted(maps.Keys(src.Spec.Data)) {
		dst.Spec.Entries = append(dst.Spec.Entries, Entry{Key: k, Value: src.Spec.Data[k]})
	}
	dst.Status = WidgetStatus(src.Status)
	return nil
}
