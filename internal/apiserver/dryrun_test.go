package apiserver

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

// TestDryRun: ?dryRun=All (and DeleteOptions.dryRun in a DELETE's body,
// where client-go sends it) makes kube-apiserver validate, default and
// answer a write as if it were made, and store nothing: no new
// resourceVersion, no event (k8s.io/apiserver pkg/registry/generic/registry
// dryrun.go, DryRunnableStorage). A dry-run create answers with a uid and
// managedFields but no resourceVersion; a dry-run update, patch or apply
// with the stored resourceVersion; a dry-run delete with what a delete
// answers. Measured on kube-apiserver v1.37.2 (hack/realk8s). Found by
// controller-runtime's pkg/client suite (DryRunClient), run against the
// workshop cluster with USE_EXISTING_CLUSTER.
func TestDryRun(t *testing.T) {
	s := startServer(t)
	client := kubernetes.NewForConfigOrDie(s.Config())
	ctx := t.Context()
	ns := createNamespace(t, client, "dry")
	cms := client.CoreV1().ConfigMaps(ns)
	dry := []string{metav1.DryRunAll}
	if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "kept"}, Data: map[string]string{"a": "1"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	rv := s.ResourceVersion()
	w, err := cms.Watch(ctx, metav1.ListOptions{ResourceVersion: rv})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	created, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "only-dry"}, Data: map[string]string{"a": "1"}}, metav1.CreateOptions{DryRun: dry, FieldManager: "m"})
	if err != nil {
		t.Fatal(err)
	}
	if created.UID == "" || created.ResourceVersion != "" || len(created.ManagedFields) != 1 || created.ManagedFields[0].Manager != "m" {
		t.Errorf("dry-run create answered uid %q, resourceVersion %q, managedFields %v; want a uid, none, one entry of m",
			created.UID, created.ResourceVersion, created.ManagedFields)
	}
	if _, err := cms.Get(ctx, "only-dry", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("get after a dry-run create: %v, want NotFound", err)
	}
	// A dry-run create is checked as a real one is.
	if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "kept"}}, metav1.CreateOptions{DryRun: dry}); !apierrors.IsAlreadyExists(err) {
		t.Errorf("dry-run create of an existing name: %v, want AlreadyExists", err)
	}

	kept, err := cms.Get(ctx, "kept", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	changed := kept.DeepCopy()
	changed.Data["a"] = "2"
	updated, err := cms.Update(ctx, changed, metav1.UpdateOptions{DryRun: dry})
	if err != nil {
		t.Fatal(err)
	}
	if updated.Data["a"] != "2" || updated.ResourceVersion != kept.ResourceVersion {
		t.Errorf("dry-run update answered a=%q at %s, want a=2 at the stored %s", updated.Data["a"], updated.ResourceVersion, kept.ResourceVersion)
	}
	patched, err := cms.Patch(ctx, "kept", types.MergePatchType, []byte(`{"data":{"a":"3"}}`), metav1.PatchOptions{DryRun: dry})
	if err != nil {
		t.Fatal(err)
	}
	if patched.Data["a"] != "3" {
		t.Errorf("dry-run patch answered a=%q, want 3", patched.Data["a"])
	}
	applied, err := cms.Apply(ctx, corev1ac.ConfigMap("kept", ns).WithData(map[string]string{"b": "4"}), metav1.ApplyOptions{FieldManager: "applier", DryRun: dry})
	if err != nil {
		t.Fatal(err)
	}
	if applied.Data["b"] != "4" {
		t.Errorf("dry-run apply answered b=%q, want 4", applied.Data["b"])
	}
	if err := cms.Delete(ctx, "kept", metav1.DeleteOptions{DryRun: dry}); err != nil {
		t.Fatal(err)
	}
	if err := cms.DeleteCollection(ctx, metav1.DeleteOptions{DryRun: dry}, metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := client.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{DryRun: dry}); err != nil {
		t.Fatal(err)
	}

	// The scale subresource too.
	deps := client.AppsV1().Deployments(ns)
	dep := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx"}}},
			},
		},
	}
	if _, err := deps.Create(ctx, dep, metav1.CreateOptions{DryRun: dry}); err != nil {
		t.Fatal(err)
	}
	if _, err := deps.Create(ctx, dep, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	rv = s.ResourceVersion()
	sc := &autoscalingv1.Scale{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns}, Spec: autoscalingv1.ScaleSpec{Replicas: 5}}
	if got, err := deps.UpdateScale(ctx, "web", sc, metav1.UpdateOptions{DryRun: dry}); err != nil || got.Spec.Replicas != 5 {
		t.Fatalf("dry-run scale: %v, %v", got, err)
	}

	after, err := cms.Get(ctx, "kept", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("after dry-run deletes: %v", err)
	}
	if after.ResourceVersion != kept.ResourceVersion || after.Data["a"] != "1" || len(after.Data) != 1 {
		t.Errorf("after dry-run writes: %v at %s, want a=1 at %s", after.Data, after.ResourceVersion, kept.ResourceVersion)
	}
	if got, _ := deps.Get(ctx, "web", metav1.GetOptions{}); *got.Spec.Replicas != 1 {
		t.Errorf("after a dry-run scale: %d replicas, want 1", *got.Spec.Replicas)
	}
	if s.ResourceVersion() != rv {
		t.Errorf("the cluster's resourceVersion moved from %s to %s on dry runs", rv, s.ResourceVersion())
	}
	// The watch sees nothing of the dry runs: its first event is the
	// next real write.
	if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "marker"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if ev := <-w.ResultChan(); ev.Type != watch.Added || ev.Object.(*corev1.ConfigMap).Name != "marker" {
		t.Errorf("first watch event %s %v, want ADDED marker: nothing from a dry run", ev.Type, ev.Object)
	}
}

// TestDryRunInvalid: a dryRun other than All is refused as kube-apiserver
// refuses it: 422, CreateOptions (UpdateOptions, DeleteOptions) in
// meta.k8s.io, the cause at dryRun (apimachinery's ValidateCreateOptions).
func TestDryRunInvalid(t *testing.T) {
	s := startServer(t)
	c := newClient(t, s)
	c.mustDo(201, "POST", "/api/v1/namespaces", map[string]any{"metadata": map[string]any{"name": "dry"}})
	_, st := c.do("POST", "/api/v1/namespaces/dry/configmaps?dryRun=Bye", map[string]any{"metadata": map[string]any{"name": "x"}})
	want := `CreateOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: ["Bye"]: supported values: "All"`
	if st["message"] != want || st["code"] != float64(422) {
		t.Errorf("dryRun=Bye: %v, want 422 %s", st, want)
	}
	_, st = c.do("DELETE", "/api/v1/namespaces/dry/configmaps/x", map[string]any{"kind": "DeleteOptions", "apiVersion": "v1", "dryRun": []string{"Bye"}})
	if st["code"] != float64(422) || st["details"].(map[string]any)["kind"] != "DeleteOptions" {
		t.Errorf("DeleteOptions dryRun Bye: %v, want 422 DeleteOptions", st)
	}
}

// TestDryRunCreateWithResourceVersion: a dry-run create of an object
// that carries a resourceVersion (a copy of one read back) is answered
// as made; kube-apiserver refuses such a create only when it reaches
// etcd (controller-runtime's DryRunClient creates a copy of a stored
// Deployment so). A Deployment without containers is refused either way.
func TestDryRunCreateWithResourceVersion(t *testing.T) {
	s := startServer(t)
	client := kubernetes.NewForConfigOrDie(s.Config())
	ctx := t.Context()
	ns := createNamespace(t, client, "dry")
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "copy", ResourceVersion: "5"}}
	if _, err := client.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
		t.Errorf("dry-run create with a resourceVersion: %v, want it answered", err)
	}
	_, err := client.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{})
	if !apierrors.IsInternalError(err) {
		t.Errorf("create with a resourceVersion: %v, want 500 resourceVersion should not be set", err)
	}
	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "empty"}, Spec: appsv1.DeploymentSpec{
		Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"a": "b"}},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"a": "b"}}},
	}}
	_, err = client.AppsV1().Deployments(ns).Create(ctx, dep, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	if want := `Deployment.apps "empty" is invalid: spec.template.spec.containers: Required value`; err == nil || err.Error() != want {
		t.Errorf("deployment without containers: %v, want %s", err, want)
	}
}
