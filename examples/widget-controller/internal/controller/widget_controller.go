// Package controller holds the Widget reconciler: each Widget owns a
// ConfigMap named after it, holding the Widget's spec.data.
package controller

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	examplev1 "github.com/informer-walkthrough/informer-walkthrough/examples/widget-controller/api/v1"
)

// WidgetReconciler makes each Widget's ConfigMap match its spec.data, and
// records in the Widget's status which ConfigMap and generation it wrote.
type WidgetReconciler struct {
	client.Client
}

// ConfigMapName is the name of the ConfigMap that the Widget w owns.
func ConfigMapName(w *examplev1.Widget) string { return w.Name + "-data" }

// Reconcile is called with a Widget's key whenever the Widget or its
// ConfigMap changes (or was deleted).
func (r *WidgetReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var w examplev1.Widget
	if err := r.Get(ctx, req.NamespacedName, &w); err != nil {
		// Deleted: its ConfigMap goes with it, by the garbage collector.
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}

	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: ConfigMapName(&w), Namespace: w.Namespace}}
	if _, err := controllerutil.CreateOrUpdate(ctx, r.Client, cm, func() error {
		cm.Data = w.Spec.Data
		return controllerutil.SetControllerReference(&w, cm, r.Scheme())
	}); err != nil {
		return ctrl.Result{}, err
	}

	if w.Status.ConfigMap == cm.Name && w.Status.ObservedGeneration == w.Generation {
		return ctrl.Result{}, nil
	}
	w.Status.ConfigMap = cm.Name
	w.Status.ObservedGeneration = w.Generation
	// A 409 Conflict (the Widget changed since we read it) is returned,
	// and the request retried with the newer Widget.
	return ctrl.Result{}, r.Status().Update(ctx, &w)
}

// SetupWithManager registers the reconciler with mgr: Widgets are its
// objects, and a change to a ConfigMap a Widget controls enqueues that Widget.
func (r *WidgetReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&examplev1.Widget{}).
		Owns(&corev1.ConfigMap{}).
		Complete(r)
}
