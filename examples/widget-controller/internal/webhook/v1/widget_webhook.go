// Package v1 holds the Widget's admission webhooks, laid out as
// kubebuilder's "create webhook --defaulting --programmatic-validation"
// lays them out: a defaulter and a validator that controller-runtime's
// webhook server serves, and the markers controller-gen makes
// config/webhook/manifests.yaml from.
package v1

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	examplev1 "github.com/informer-walkthrough/informer-walkthrough/examples/widget-controller/api/v1"
)

// DefaultGreeting is what a Widget's spec.data["greeting"] is when it is
// created or updated without one.
const DefaultGreeting = "hello"

// SetupWidgetWebhookWithManager registers the Widget's webhooks with
// mgr's webhook server.
func SetupWidgetWebhookWithManager(mgr ctrl.Manager) error {
	return ctrl.NewWebhookManagedBy(mgr, &examplev1.Widget{}).
		WithDefaulter(WidgetDefaulter{}).
		WithValidator(WidgetValidator{}).
		Complete()
}

// +kubebuilder:webhook:path=/mutate-example-com-v1-widget,mutating=true,failurePolicy=fail,sideEffects=None,groups=example.com,resources=widgets,verbs=create;update,versions=v1,name=mwidget-v1.kb.io,admissionReviewVersions=v1

// WidgetDefaulter fills in a Widget's greeting.
type WidgetDefaulter struct{}

// Default sets spec.data["greeting"] when it is missing.
func (WidgetDefaulter) Default(_ context.Context, w *examplev1.Widget) error {
	if _, ok := w.Spec.Data["greeting"]; !ok {
		if w.Spec.Data == nil {
			w.Spec.Data = map[string]string{}
		}
		w.Spec.Data["greeting"] = DefaultGreeting
	}
	return nil
}

// +kubebuilder:webhook:path=/validate-example-com-v1-widget,mutating=false,failurePolicy=fail,sideEffects=None,groups=example.com,resources=widgets,verbs=create;update,versions=v1,name=vwidget-v1.kb.io,admissionReviewVersions=v1

// WidgetValidator refuses a Widget whose data the controller could not
// copy into a ConfigMap.
type WidgetValidator struct{}

// ValidateCreate checks spec.data's keys.
func (WidgetValidator) ValidateCreate(_ context.Context, w *examplev1.Widget) (admission.Warnings, error) {
	return validate(w)
}

// ValidateUpdate checks spec.data's keys.
func (WidgetValidator) ValidateUpdate(_ context.Context, _, w *examplev1.Widget) (admission.Warnings, error) {
	return validate(w)
}

// ValidateDelete allows every delete.
func (WidgetValidator) ValidateDelete(context.Context, *examplev1.Widget) (admission.Warnings, error) {
	return nil, nil
}

// validate refuses a key that is not a ConfigMap key, as 422 Invalid
// naming the field, and warns of an empty value.
func validate(w *examplev1.Widget) (admission.Warnings, error) {
	var errs field.ErrorList
	var warnings admission.Warnings
	path := field.NewPath("spec", "data")
	for k, v := range w.Spec.Data {
		for _, msg := range validation.IsConfigMapKey(k) {
			errs = append(errs, field.Invalid(path.Key(k), k, msg))
		}
		if v == "" {
			warnings = append(warnings, fmt.Sprintf("spec.data[%s] is empty", k))
		}
	}
	if len(errs) > 0 {
		return warnings, apierrors.NewInvalid(examplev1.GroupVersion.WithKind("Widget").GroupKind(), w.Name, errs)
	}
	return warnings, nil
}
