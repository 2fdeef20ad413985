package admission_test

import (
	"context"
	"os"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// TestRecordProbe records the probe's transcripts (110-113, 110b, 110c)
// from the real cluster that RECORD_KUBECONFIG names (hack/realk8s: a
// kube-apiserver on this machine, which reaches the probe's webhook
// server on 127.0.0.1):
//
//	RECORD_KUBECONFIG=/work/realk8s/kubeconfig go test -count=1 -run TestRecordProbe ./internal/apiserver/admission
//
// It creates namespace admprobe, the configurations admprobe-* and
// their policy, and deletes them when it ends.
func TestRecordProbe(t *testing.T) {
	path := os.Getenv("RECORD_KUBECONFIG")
	if path == "" {
		t.Skip("RECORD_KUBECONFIG names no cluster to record from")
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		t.Fatal(err)
	}
	c := kubernetes.NewForConfigOrDie(cfg)
	clean(t, c)
	t.Cleanup(func() { clean(t, c) })
	w := newWebhook(t)
	install(t, c, w)
	for _, d := range scenario(t, c, w) {
		if err := os.WriteFile(transcripts+d.name+".txt", append([]byte(d.heading+"\n"), append(d.json, '\n')...), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// clean deletes what the probe makes, and waits until its namespace is
// gone.
func clean(t *testing.T, c kubernetes.Interface) {
	ctx := context.Background()
	a := c.AdmissionregistrationV1()
	for _, err := range []error{
		a.ValidatingWebhookConfigurations().Delete(ctx, "admprobe-validating", metav1.DeleteOptions{}),
		a.MutatingWebhookConfigurations().Delete(ctx, "admprobe-mutating", metav1.DeleteOptions{}),
		a.ValidatingAdmissionPolicyBindings().Delete(ctx, "admprobe-binding", metav1.DeleteOptions{}),
		a.ValidatingAdmissionPolicies().Delete(ctx, "admprobe-policy", metav1.DeleteOptions{}),
		c.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{}),
	} {
		if err != nil && !apierrors.IsNotFound(err) {
			t.Error(err)
		}
	}
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		_, err := c.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	if err != nil {
		t.Errorf("namespace %s not gone: %v", ns, err)
	}
}
