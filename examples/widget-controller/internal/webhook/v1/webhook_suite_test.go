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
	examplev2 "github.com/informer-walkthrough/informer-walkthrough/examples/widget-controller/api/v2"
	"github.com/informer-walkthrough/informer-walkthrough/workshop"
	"github.com/informer-walkthrough/informer-walkthrough/workshop/crds"
	"github.com/informer-walkthrough/informer-walkthrough/workshop/webhooks"
)

// What kubebuilder's webhook_suite_test.go does on envtest, on a
// workshop cluster, in envtest.Environment's order: envtest's
// WebhookInstallOptions prepared (a CA, a port on loopback), the CRD
// installed by envtest's InstallCRDs (which, given those options and a
// scheme in which the Widget is convertible, sets the CRD's conversion
// strategy to Webhook, at https://127.0.0.1:PORT/convert), the webhook
// configurations installed (their service references rewritten into a
// url there), and a manager serving the webhooks: the defaulting and
// validating ones, and the conversion webhook, which controller-runtime
// adds for a kind with a Hub and a Convertible version.

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
	if err := examplev2.AddToScheme(scheme); err != nil {
		panic(err)
	}
	ctrl.SetLogger(logr.Discard())
	os.Exit(m.Run())
}

// startWebhooks starts a workshop cluster that calls webhooks, with the
// Widget CRD and its webhook configurations installed and a manager
// serving the webhooks, until t ends; it returns the cluster's config.
// Each test has its own, so the tests run in parallel: stopping the
// manager takes a second, the HTTP/2 server's wait for the cluster's
// connection to go after its GOAWAY (net/http's http2goAwayTimeout).
func startWebhooks(t testing.TB) *rest.Config {
	cfg, _ := startWebhooksStoppable(t)
	return cfg
}

// startWebhooksStoppable is startWebhooks, and also returns what stops
// the manager (its webhook server with it) before t ends.
func startWebhooksStoppable(t testing.TB) (*rest.Config, func()) {
	t.Helper()
	c := workshop.Start(t, crds.Served(), webhooks.Served())
	opts := envtest.WebhookInstallOptions{Paths: webhookPaths}
	if err := opts.PrepWithoutInstalling(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = opts.Cleanup() })
	if _, err := envtest.InstallCRDs(c.Config(), envtest.CRDInstallOptions{
		Paths: crdPaths, Scheme: scheme, WebhookOptions: opts, ErrorIfPathMissing: true,
	}); err != nil {
		t.Fatal(err)
	}
	if err := opts.Install(c.Config()); err != nil {
		t.Fatal(err)
	}

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
	stop := func() { cancel(); wg.Wait() }
	t.Cleanup(stop)

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
	return c.Config(), stop
}

func newClient(t testing.TB, cfg *rest.Config) client.Client {
	t.Helper()
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	return c
}
