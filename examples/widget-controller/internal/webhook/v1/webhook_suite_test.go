package v1

import (
	"context"
	"crypto/tls"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	examplev1 "github.com/informer-walkthrough/informer-walkthrough/examples/widget-controller/api/v1"
	"github.com/informer-walkthrough/informer-walkthrough/workshop"
	"github.com/informer-walkthrough/informer-walkthrough/workshop/crds"
	"github.com/informer-walkthrough/informer-walkthrough/workshop/webhooks"
)

// What kubebuilder's webhook_suite_test.go does on envtest, on a
// workshop cluster: the CRD installed, the webhook configurations
// installed by envtest's WebhookInstallOptions (which rewrites their
// service references into a url on loopback and makes a CA), and a
// manager serving the webhooks there.

var (
	crdPaths     = []string{filepath.Join("..", "..", "..", "config", "crd", "bases")}
	webhookPaths = []string{filepath.Join("..", "..", "..", "config", "webhook")}
	scheme       = runtime.NewScheme()
)

func TestMain(m *testing.M) {
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		panic(err)
	}
	if err := examplev1.AddToScheme(scheme); err != nil {
		panic(err)
	}
	ctrl.SetLogger(logr.Discard())
	os.Exit(m.Run())
}

// startWebhooks starts a workshop cluster that calls webhooks, with the
// Widget CRD and its webhook configurations installed and a manager
// serving the webhooks, until t ends; it returns the cluster's config.
func startWebhooks(t testing.TB) *rest.Config {
	t.Helper()
	c := workshop.Start(t, crds.Served(), webhooks.Served())
	if _, err := crds.Install(t.Context(), c, crdPaths); err != nil {
		t.Fatal(err)
	}
	opts := envtest.WebhookInstallOptions{Paths: webhookPaths}
	if err := opts.Install(c.Config()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = opts.Cleanup() })

	mgr, err := ctrl.NewManager(c.Config(), ctrl.Options{
		Scheme:  scheme,
		Metrics: metricsserver.Options{BindAddress: "0"},
		WebhookServer: webhook.NewServer(webhook.Options{
			Host: opts.LocalServingHost, Port: opts.LocalServingPort, CertDir: opts.LocalServingCertDir,
		}),
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := SetupWidgetWebhookWithManager(mgr); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		if err := mgr.Start(ctx); err != nil {
			t.Errorf("manager: %v", err)
		}
	})
	t.Cleanup(wg.Wait)
	t.Cleanup(cancel)

	// Wait for the webhook server to listen, as kubebuilder's suite does.
	addr := net.JoinHostPort(opts.LocalServingHost, strconv.Itoa(opts.LocalServingPort))
	err = wait.PollUntilContextTimeout(t.Context(), 10*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		conn, err := tls.DialWithDialer(&net.Dialer{Timeout: time.Second}, "tcp", addr, &tls.Config{InsecureSkipVerify: true})
		if err != nil {
			return false, nil
		}
		return true, conn.Close()
	})
	if err != nil {
		t.Fatalf("waiting for the webhook server: %v", err)
	}
	return c.Config()
}

func newClient(t testing.TB, cfg *rest.Config) client.Client {
	t.Helper()
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	return c
}
