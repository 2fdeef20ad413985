package apiserver

import (
	"encoding/json"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

// TestServiceAccountAdmission: a pod is created as kube-apiserver's
// ServiceAccount admission plugin leaves it (v1.37.2,
// plugin/pkg/admission/serviceaccount/admission.go, Admit and
// mountServiceAccountToken): no service account means "default" (and its
// deprecated alias serviceAccount), and every init container and
// container mounts a projected kube-api-access-… volume of the token,
// the cluster's CA and the namespace, unless it already mounts something
// at the same path or the pod says automountServiceAccountToken: false.
// The writer owns none of it: admission runs after managedFields are
// recorded. The v1.36.3 transcripts do not show it (their server had no
// "default" ServiceAccount, so the plugin was off: see sameJSON).
func TestServiceAccountAdmission(t *testing.T) {
	s := startServer(t)
	client := kubernetes.NewForConfigOrDie(s.Config())
	ctx := t.Context()
	ns := createNamespace(t, client, "sa")
	pods := client.CoreV1().Pods(ns)
	own := corev1.VolumeMount{Name: "own", MountPath: serviceAccountMountPath}
	created, err := pods.Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web-1"},
		Spec: corev1.PodSpec{
			InitContainers: []corev1.Container{{Name: "init", Image: "busybox"}},
			Containers: []corev1.Container{
				{Name: "web", Image: "nginx:1.27"},
				{Name: "mounts-its-own", Image: "nginx:1.27", VolumeMounts: []corev1.VolumeMount{own}},
			},
			Volumes: []corev1.Volume{{Name: "own", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	spec := created.Spec
	if spec.ServiceAccountName != "default" || spec.DeprecatedServiceAccount != "default" {
		t.Errorf("serviceAccountName %q, serviceAccount %q, want default and default", spec.ServiceAccountName, spec.DeprecatedServiceAccount)
	}
	if len(spec.Volumes) != 2 {
		t.Fatalf("volumes %v, want own and kube-api-access-…", spec.Volumes)
	}
	token := spec.Volumes[1]
	suffix, ok := strings.CutPrefix(token.Name, "kube-api-access-")
	if !ok || len(suffix) != 5 || strings.Trim(suffix, "bcdfghjklmnpqrstvwxz2456789") != "" {
		t.Errorf("token volume named %q, want kube-api-access- and 5 characters of k8s.io/apimachinery/pkg/util/rand's", token.Name)
	}
	// The projected volume, field by field as TokenVolumeSource builds it.
	got, _ := json.Marshal(token.VolumeSource)
	want := `{"projected":{"sources":[` +
		`{"serviceAccountToken":{"expirationSeconds":3607,"path":"token"}},` +
		`{"configMap":{"name":"kube-root-ca.crt","items":[{"key":"ca.crt","path":"ca.crt"}]}},` +
		`{"downwardAPI":{"items":[{"path":"namespace","fieldRef":{"apiVersion":"v1","fieldPath":"metadata.namespace"}}]}}` +
		`],"defaultMode":420}}`
	if string(got) != want {
		t.Errorf("token volume\n%s\nwant\n%s", got, want)
	}
	mount := corev1.VolumeMount{Name: token.Name, ReadOnly: true, MountPath: serviceAccountMountPath}
	for _, c := range []struct {
		name string
		got  []corev1.VolumeMount
		want []corev1.VolumeMount
	}{
		{"init", spec.InitContainers[0].VolumeMounts, []corev1.VolumeMount{mount}},
		{"web", spec.Containers[0].VolumeMounts, []corev1.VolumeMount{mount}},
		{"mounts-its-own", spec.Containers[1].VolumeMounts, []corev1.VolumeMount{own}},
	} {
		if !equalMounts(c.got, c.want) {
			t.Errorf("container %s mounts %v, want %v", c.name, c.got, c.want)
		}
	}
	// The writer owns what it sent; admission's additions have no owner.
	fields := string(created.ManagedFields[0].FieldsV1.Raw)
	for _, f := range []string{"f:serviceAccountName", "f:serviceAccount", token.Name, "f:readOnly"} {
		if strings.Contains(fields, f) {
			t.Errorf("managedFields own %s: %s", f, fields)
		}
	}
	// The same pod on another workshop cluster: the same volume name.
	again := startServer(t)
	againClient := kubernetes.NewForConfigOrDie(again.Config())
	createNamespace(t, againClient, "sa")
	other, err := againClient.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web-1"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx:1.27"}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if other.Spec.Volumes[0].Name != token.Name {
		t.Errorf("pod %s/web-1 got volume %s on one workshop cluster, %s on another", ns, token.Name, other.Spec.Volumes[0].Name)
	}
	// A pod's spec is immutable: what a client read back it can write back.
	created.Labels = map[string]string{"tier": "front"}
	if _, err := pods.Update(ctx, created, metav1.UpdateOptions{}); err != nil {
		t.Errorf("update of the pod as read: %v", err)
	}

	for _, tc := range []struct {
		name           string
		spec           corev1.PodSpec
		serviceAccount string
		volumes        int
	}{
		{"opted-out", corev1.PodSpec{AutomountServiceAccountToken: ptr.To(false)}, "default", 0},
		{"own-account", corev1.PodSpec{ServiceAccountName: "builder"}, "builder", 1},
		{"alias-only", corev1.PodSpec{DeprecatedServiceAccount: "builder"}, "builder", 1},
	} {
		tc.spec.Containers = []corev1.Container{{Name: "web", Image: "nginx:1.27"}}
		p, err := pods.Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: tc.name}, Spec: tc.spec}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if p.Spec.ServiceAccountName != tc.serviceAccount || p.Spec.DeprecatedServiceAccount != tc.serviceAccount ||
			len(p.Spec.Volumes) != tc.volumes || len(p.Spec.Containers[0].VolumeMounts) != tc.volumes {
			t.Errorf("%s: serviceAccountName %q serviceAccount %q, %d volumes, %d mounts; want %q and %d of each",
				tc.name, p.Spec.ServiceAccountName, p.Spec.DeprecatedServiceAccount, len(p.Spec.Volumes),
				len(p.Spec.Containers[0].VolumeMounts), tc.serviceAccount, tc.volumes)
		}
	}
}

func equalMounts(a, b []corev1.VolumeMount) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name || a[i].MountPath != b[i].MountPath || a[i].ReadOnly != b[i].ReadOnly {
			return false
		}
	}
	return true
}

// createNamespace creates a namespace and returns its name.
func createNamespace(t *testing.T, client kubernetes.Interface, name string) string {
	t.Helper()
	if _, err := client.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return name
}
