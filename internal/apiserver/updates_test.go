package apiserver

import (
	"maps"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

// TestImmutableOnUpdate: what ValidateSecretUpdate and
// ValidateConfigMapUpdate refuse (kubernetes v1.37.2
// pkg/apis/core/validation/validation.go): a Secret's type never changes,
// by PUT or by server-side apply, and an immutable Secret or ConfigMap
// keeps its data and its immutable. Each 422 is worded as kube-apiserver
// v1.37.2 worded it (hack/realk8s, curl). Found by controller-runtime's
// pkg/client suite ("should propagate a typed error").
func TestImmutableOnUpdate(t *testing.T) {
	s := startServer(t)
	client := kubernetes.NewForConfigOrDie(s.Config())
	ctx := t.Context()
	ns := createNamespace(t, client, "immutable")
	secrets, cms := client.CoreV1().Secrets(ns), client.CoreV1().ConfigMaps(ns)
	want422 := func(what string, err error, msg string) {
		t.Helper()
		if !apierrors.IsInvalid(err) || err.Error() != msg {
			t.Errorf("%s: %v\nwant 422 %s", what, err, msg)
		}
	}

	apply := corev1ac.Secret("typed", ns).WithType(corev1.SecretTypeDockercfg).WithStringData(map[string]string{".dockercfg": "{}"})
	if _, err := secrets.Apply(ctx, apply, metav1.ApplyOptions{FieldManager: "m"}); err != nil {
		t.Fatal(err)
	}
	_, err := secrets.Apply(ctx, corev1ac.Secret("typed", ns).WithType(corev1.SecretTypeOpaque), metav1.ApplyOptions{FieldManager: "m"})
	want422("apply of another type", err, `Secret "typed" is invalid: type: Invalid value: "Opaque": field is immutable`)
	// A PUT without a type is defaulted to Opaque first, as decoding does.
	_, err = secrets.Update(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "typed"}, Data: map[string][]byte{"x": []byte("1")}}, metav1.UpdateOptions{})
	want422("PUT without a type", err, `Secret "typed" is invalid: type: Invalid value: "Opaque": field is immutable`)
	// stringData in a PUT is folded into data.
	got, err := secrets.Update(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "typed"}, Type: corev1.SecretTypeDockercfg,
		StringData: map[string]string{".dockercfg": `{"a":1}`}}, metav1.UpdateOptions{})
	if err != nil || string(got.Data[".dockercfg"]) != `{"a":1}` || got.StringData != nil {
		t.Errorf("PUT with stringData: %v, data %q stringData %v; want data .dockercfg {\"a\":1}", err, got.Data, got.StringData)
	}

	if _, err := secrets.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "imm"}, Immutable: ptr.To(true),
		Data: map[string][]byte{"a": []byte("1")}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err = secrets.Update(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "imm"}, Immutable: ptr.To(false),
		Data: map[string][]byte{"a": []byte("2")}}, metav1.UpdateOptions{})
	want422("PUT of an immutable Secret", err, "Secret \"imm\" is invalid: [immutable: Forbidden: field is immutable when `immutable` is set, data: Forbidden: field is immutable when `immutable` is set]")
	// Its labels may change.
	if _, err := secrets.Patch(ctx, "imm", types.MergePatchType, []byte(`{"metadata":{"labels":{"a":"b"}}}`), metav1.PatchOptions{}); err != nil {
		t.Errorf("label patch of an immutable Secret: %v", err)
	}

	if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "imm"}, Immutable: ptr.To(true),
		Data: map[string]string{"a": "1"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err = cms.Update(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "imm"}, Data: map[string]string{"a": "2"},
		BinaryData: map[string][]byte{"b": []byte("2")}}, metav1.UpdateOptions{})
	want422("PUT of an immutable ConfigMap", err, "ConfigMap \"imm\" is invalid: [immutable: Forbidden: field is immutable when `immutable` is set, data: Forbidden: field is immutable when `immutable` is set, binaryData: Forbidden: field is immutable when `immutable` is set]")
}

// TestStatusWriteMetadata: a write to a built-in kind's status
// subresource keeps the old spec and writes the rest of what it sends,
// metadata included, but what the kind's status strategy keeps (kubernetes
// v1.37.2 pkg/registry/apps/deployment/strategy.go L171, a Deployment's
// labels; pkg/registry/core/pod/strategy.go L227, a Pod's
// ownerReferences); the generation does not move. Measured on
// kube-apiserver v1.37.2 (hack/realk8s): a merge patch of a Deployment's
// status with new labels, annotations, finalizers, ownerReferences and
// spec.replicas wrote the annotations, finalizers and ownerReferences
// only. A custom resource's status write keeps none of it
// (crd package's tests). Found by controller-runtime's pkg/client suite
// ("should patch status and preserve type information").
func TestStatusWriteMetadata(t *testing.T) {
	s := startServer(t)
	client := kubernetes.NewForConfigOrDie(s.Config())
	ctx := t.Context()
	ns := createNamespace(t, client, "status-meta")
	dep := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "d", Labels: map[string]string{"a": "1"}, Annotations: map[string]string{"x": "1"}},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "d"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "d"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i"}}},
			},
		},
	}
	if _, err := client.AppsV1().Deployments(ns).Create(ctx, dep, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	patch := `{"metadata":{"labels":{"a":"2","b":"3"},"annotations":{"x":"2","y":"3"},"finalizers":["f/x"],` +
		`"ownerReferences":[{"apiVersion":"v1","kind":"ConfigMap","name":"o","uid":"11111111-1111-1111-1111-111111111111"}]},` +
		`"spec":{"replicas":5},"status":{"observedGeneration":1}}`
	got, err := client.AppsV1().Deployments(ns).Patch(ctx, "d", types.MergePatchType, []byte(patch), metav1.PatchOptions{}, "status")
	if err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(got.Labels, map[string]string{"a": "1"}) || !maps.Equal(got.Annotations, map[string]string{"x": "2", "y": "3"}) ||
		len(got.Finalizers) != 1 || len(got.OwnerReferences) != 1 || *got.Spec.Replicas != 1 ||
		got.Status.ObservedGeneration != 1 || got.Generation != 1 {
		t.Errorf("Deployment after a status patch: labels %v, annotations %v, finalizers %v, %d ownerReferences, replicas %d, observedGeneration %d, generation %d\n"+
			"want labels a=1, annotations x=2 y=3, finalizers [f/x], 1 ownerReference, replicas 1, observedGeneration 1, generation 1",
			got.Labels, got.Annotations, got.Finalizers, len(got.OwnerReferences), *got.Spec.Replicas, got.Status.ObservedGeneration, got.Generation)
	}

	pods := client.CoreV1().Pods(ns)
	if _, err := pods.Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Labels: map[string]string{"a": "1"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i"}}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pod, err := pods.Patch(ctx, "p", types.MergePatchType, []byte(`{"metadata":{"labels":{"a":"2"},"annotations":{"y":"3"},`+
		`"ownerReferences":[{"apiVersion":"v1","kind":"ConfigMap","name":"o","uid":"11111111-1111-1111-1111-111111111111"}]},`+
		`"status":{"message":"hi"}}`), metav1.PatchOptions{}, "status")
	if err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(pod.Labels, map[string]string{"a": "2"}) || !maps.Equal(pod.Annotations, map[string]string{"y": "3"}) ||
		len(pod.OwnerReferences) != 0 || pod.Status.Message != "hi" {
		t.Errorf("Pod after a status patch: labels %v, annotations %v, %d ownerReferences, message %q; want labels a=2, annotations y=3, none, hi",
			pod.Labels, pod.Annotations, len(pod.OwnerReferences), pod.Status.Message)
	}

	// A ValidatingAdmissionPolicy's status strategy resets all four
	// (metav1.ResetObjectMetaForStatus).
	vaps := client.AdmissionregistrationV1().ValidatingAdmissionPolicies()
	if _, err := vaps.Create(ctx, &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "v", Labels: map[string]string{"a": "1"}},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			Validations: []admissionregistrationv1.Validation{{Expression: "true"}},
		},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	vap, err := vaps.Patch(ctx, "v", types.MergePatchType, []byte(`{"metadata":{"labels":{"a":"2"},"annotations":{"y":"3"},"finalizers":["f/x"]},`+
		`"status":{"observedGeneration":1}}`), metav1.PatchOptions{}, "status")
	if err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(vap.Labels, map[string]string{"a": "1"}) || len(vap.Annotations) != 0 || len(vap.Finalizers) != 0 || vap.Status.ObservedGeneration != 1 {
		t.Errorf("ValidatingAdmissionPolicy after a status patch: labels %v, annotations %v, finalizers %v, observedGeneration %d; want a=1, none, none, 1",
			vap.Labels, vap.Annotations, vap.Finalizers, vap.Status.ObservedGeneration)
	}
}
