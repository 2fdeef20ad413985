package admission_test

import (
	"context"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/informer-walkthrough/informer-walkthrough/internal/apiserver"
	"github.com/informer-walkthrough/informer-walkthrough/internal/apiserver/admission"
)

// TestFirstStartTime is internal/apiserver's, with admission on: until a
// first configuration exists admission costs nothing, so the first start
// and write keep the 300 ms budget (run it alone, -count=1 -run
// TestFirstStartTime -v, for a cold figure). The first configuration
// pays for the plugins, once per server.
func TestFirstStartTime(t *testing.T) {
	for i := range 3 {
		t0 := time.Now()
		s, err := apiserver.Start(apiserver.Options{Admission: admission.Enabled})
		if err != nil {
			t.Fatal(err)
		}
		started := time.Since(t0)
		c := kubernetes.NewForConfigOrDie(s.Config())
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "default"}}
		if _, err := c.CoreV1().Namespaces().Create(context.Background(), ns, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		written := time.Since(t0)
		t1 := time.Now()
		cfg := &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "first"}}
		if _, err := c.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(context.Background(), cfg, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		configured := time.Since(t1)
		_ = s.Close()
		t.Logf("start %d: %v, with a first write %v; the first configuration (the plugins made) %v", i, started, written, configured)
		if i == 0 && written > 300*time.Millisecond && !raceEnabled {
			t.Errorf("the first start and write took %v, over the 300 ms budget", written)
		}
	}
}
