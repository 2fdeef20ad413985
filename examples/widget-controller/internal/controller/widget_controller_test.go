package controller

import (
	"context"
	"maps"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/informer-walkthrough/informer-walkthrough/check/leakcheck"
	examplev1 "github.com/informer-walkthrough/informer-walkthrough/examples/widget-controller/api/v1"
)

func TestWidget(t *testing.T) {
	leakcheck.Verify(t) // first: it checks after the manager and the cluster have stopped
	testWidget(t, startWorkshop(t))
}

// testWidget is the suite's one test, the same on any server that serves
// the Widget CRD: a Widget gets its ConfigMap, a change to the Widget
// reaches the ConfigMap, and a deleted ConfigMap is made again.
func testWidget(t testing.TB, cfg *rest.Config) {
	k8sClient := startManager(t, cfg)
	ctx := t.Context()

	// A namespace of its own, so that the test also runs on a shared cluster.
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "widget-test-"}}
	if err := k8sClient.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// On envtest the namespace stays Terminating: no namespace controller.
		if err := k8sClient.Delete(context.Background(), ns); err != nil {
			t.Error(err)
		}
	})

	w := &examplev1.Widget{
		ObjectMeta: metav1.ObjectMeta{Name: "w1", Namespace: ns.Name},
		Spec:       examplev1.WidgetSpec{Data: map[string]string{"color": "blue"}},
	}
	if err := k8sClient.Create(ctx, w); err != nil {
		t.Fatal(err)
	}
	cmKey := types.NamespacedName{Namespace: ns.Name, Name: ConfigMapName(w)}

	var cm corev1.ConfigMap
	hasData := func(want map[string]string) func() (bool, error) {
		return func() (bool, error) {
			err := k8sClient.Get(ctx, cmKey, &cm)
			if apierrors.IsNotFound(err) {
				return false, nil
			}
			return err == nil && maps.Equal(cm.Data, want), err
		}
	}
	observed := func(generation int64) func() (bool, error) {
		return func() (bool, error) {
			err := k8sClient.Get(ctx, client.ObjectKeyFromObject(w), w)
			return err == nil && w.Status.ObservedGeneration == generation, err
		}
	}

	eventually(t, "the ConfigMap", hasData(map[string]string{"color": "blue"}))
	if ref := metav1.GetControllerOf(&cm); ref == nil || ref.UID != w.UID || ref.Kind != "Widget" {
		t.Errorf("ConfigMap's controller = %+v, want the Widget %s", ref, w.UID)
	}
	eventually(t, "status for generation 1", observed(1))
	if w.Status.ConfigMap != cmKey.Name {
		t.Errorf("status.configMap = %q, want %q", w.Status.ConfigMap, cmKey.Name)
	}

	// A change to the spec: a merge patch, which needs no resourceVersion.
	patch := client.MergeFrom(w.DeepCopy())
	w.Spec.Data = map[string]string{"color": "red"}
	if err := k8sClient.Patch(ctx, w, patch); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the ConfigMap updated", hasData(map[string]string{"color": "red"}))
	eventually(t, "status for generation 2", observed(2))

	// The ConfigMap deleted by someone else: Owns enqueues its Widget.
	oldUID := cm.UID
	if err := k8sClient.Delete(ctx, &cm); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the ConfigMap made again", func() (bool, error) {
		ok, err := hasData(map[string]string{"color": "red"})()
		return ok && cm.UID != oldUID, err
	})
}
