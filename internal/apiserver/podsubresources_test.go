package apiserver

import (
	"maps"
	"testing"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

// TestPodBinding: POST pods/{name}/binding is kube-apiserver's
// BindingREST (kubernetes v1.37.2 pkg/registry/core/pod/storage/storage.go
// L177): the pod gets the node, the Binding's annotations and labels and
// PodScheduled=True, with no new managedFields entry or generation; a
// bound pod is not bound again (409). Answers as kube-apiserver v1.37.2
// gave them (hack/realk8s, curl). Found by controller-runtime's
// pkg/client suite ("should be able to create Pod bindings").
func TestPodBinding(t *testing.T) {
	s := startServer(t)
	client := kubernetes.NewForConfigOrDie(s.Config())
	ctx := t.Context()
	ns := createNamespace(t, client, "binding")
	pods := client.CoreV1().Pods(ns)
	created, err := pods.Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "b1"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i"}}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	bind := func(name string, b *corev1.Binding) error {
		return client.CoreV1().RESTClient().Post().Namespace(ns).Resource("pods").Name(name).SubResource("binding").Body(b).Do(ctx).Error()
	}
	if err := bind("b1", &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: "b1", Annotations: map[string]string{"an": "1"}, Labels: map[string]string{"la": "1"}},
		Target: corev1.ObjectReference{Name: "node-x"}}); err != nil {
		t.Fatal(err)
	}
	pod, err := pods.Get(ctx, "b1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if pod.Spec.NodeName != "node-x" || !maps.Equal(pod.Labels, map[string]string{"la": "1"}) || !maps.Equal(pod.Annotations, map[string]string{"an": "1"}) ||
		len(pod.ManagedFields) != len(created.ManagedFields) || pod.Generation != 1 || pod.ResourceVersion == created.ResourceVersion {
		t.Errorf("bound pod: node %q, labels %v, annotations %v, %d managedFields entries, generation %d\nwant node-x, la=1, an=1, %d entries, generation 1, a new resourceVersion",
			pod.Spec.NodeName, pod.Labels, pod.Annotations, len(pod.ManagedFields), pod.Generation, len(created.ManagedFields))
	}
	if c := pod.Status.Conditions; len(c) != 1 || c[0].Type != corev1.PodScheduled || c[0].Status != corev1.ConditionTrue {
		t.Errorf("bound pod's conditions: %v, want PodScheduled=True", c)
	}
	for _, tc := range []struct {
		name string
		b    *corev1.Binding
		code int32
		want string
	}{
		{"b1", &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: "b1"}, Target: corev1.ObjectReference{Name: "node-y"}}, 409,
			`Operation cannot be fulfilled on pods/binding "b1": pod b1 is already assigned to node "node-x"`},
		{"nope", &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: "nope"}, Target: corev1.ObjectReference{Name: "node-y"}}, 404, `pods "nope" not found`},
		{"b1", &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: "other"}, Target: corev1.ObjectReference{Name: "node-y"}}, 400,
			"name in URL does not match name in Binding object"},
		{"b1", &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: "b1"}}, 500, "target.name: Required value"},
	} {
		err := bind(tc.name, tc.b)
		if status, ok := err.(apierrors.APIStatus); !ok || status.Status().Code != tc.code || err.Error() != tc.want {
			t.Errorf("binding %s to %q: %v, want %d %s", tc.name, tc.b.Target.Name, err, tc.code, tc.want)
		}
	}
}

// TestPodEviction: POST pods/{name}/eviction is kube-apiserver's
// EvictionREST (kubernetes v1.37.2 pkg/registry/core/pod/storage/eviction.go
// L125): a pending pod is deleted at once; a running pod only if the
// PodDisruptionBudget that selects it allows a disruption, which the
// eviction takes from it; else 429 worded as kube-apiserver v1.37.2 worded
// it (hack/realk8s, where the controller-manager's disruption controller
// had written the budget's status as this test writes it). Found by
// controller-runtime's pkg/client suite ("should be able to create Pod
// evictions").
func TestPodEviction(t *testing.T) {
	s := startServer(t)
	client := kubernetes.NewForConfigOrDie(s.Config())
	ctx := t.Context()
	ns := createNamespace(t, client, "eviction")
	pods := client.CoreV1().Pods(ns)
	newPod := func(name string) {
		t.Helper()
		if _, err := pods.Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": "e"}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i"}}}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	evict := func(name string) error {
		return pods.EvictV1(ctx, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: name}, DeleteOptions: &metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}})
	}
	newPod("e1")
	if err := evict("e1"); err != nil {
		t.Fatal(err)
	}
	if _, err := pods.Get(ctx, "e1", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("get of an evicted pending pod: %v, want NotFound", err)
	}
	if err := evict("nope"); err == nil || err.Error() != `pods "nope" not found` {
		t.Errorf("eviction of a missing pod: %v, want 404 pods \"nope\" not found", err)
	}

	newPod("e2")
	if _, err := pods.Patch(ctx, "e2", types.MergePatchType, []byte(`{"status":{"phase":"Running"}}`), metav1.PatchOptions{}, "status"); err != nil {
		t.Fatal(err)
	}
	pdbs := client.PolicyV1().PodDisruptionBudgets(ns)
	pdb, err := pdbs.Create(ctx, &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "pdb"},
		Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: ptr.To(intstr.FromInt32(1)), Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "e"}}}},
		metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	refused := func(what string, err error, retryAfter int32, cause string) {
		t.Helper()
		status, ok := err.(apierrors.APIStatus)
		if !ok || !apierrors.IsTooManyRequests(err) || err.Error() != "Cannot evict pod as it would violate the pod's disruption budget." ||
			status.Status().Details.RetryAfterSeconds != retryAfter || len(status.Status().Details.Causes) != 1 ||
			status.Status().Details.Causes[0].Type != policyv1.DisruptionBudgetCause || status.Status().Details.Causes[0].Message != cause {
			t.Errorf("%s: %v, want 429 with retry after %d and cause %q", what, err, retryAfter, cause)
		}
	}
	// No controller has computed the budget's status: the eviction waits.
	refused("eviction before the budget's status", evict("e2"), 10, "The disruption budget pdb is still being processed by the server.")

	pdb.Status = policyv1.PodDisruptionBudgetStatus{ObservedGeneration: 1, DesiredHealthy: 1, CurrentHealthy: 0, ExpectedPods: 1}
	if pdb, err = pdbs.UpdateStatus(ctx, pdb, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	refused("eviction the budget forbids", evict("e2"), 0, "The disruption budget pdb needs 1 healthy pods and has 0 currently")

	pdb.Status = policyv1.PodDisruptionBudgetStatus{ObservedGeneration: 1, DesiredHealthy: 1, CurrentHealthy: 2, ExpectedPods: 2, DisruptionsAllowed: 1}
	if _, err = pdbs.UpdateStatus(ctx, pdb, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	// e2 is not Ready, but the budget has as many healthy pods as it wants.
	if err := evict("e2"); err != nil {
		t.Fatal(err)
	}
	if _, err := pods.Get(ctx, "e2", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("get of an evicted pod: %v, want NotFound", err)
	}
}
