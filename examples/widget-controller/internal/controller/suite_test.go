package controller

import (
	"context"
	"os"
	"path/filepath"
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
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	examplev1 "github.com/informer-walkthrough/informer-walkthrough/examples/widget-controller/api/v1"
	"github.com/informer-walkthrough/informer-walkthrough/workshop"
	"github.com/informer-walkthrough/informer-walkthrough/workshop/crds"
)

// crdPaths is where the Widget CRD is, as envtest's CRDDirectoryPaths.
var crdPaths = []string{filepath.Join("..", "..", "config", "crd", "bases")}

// scheme knows the built-in kinds and the Widget.
var scheme = runtime.NewScheme()

func TestMain(m *testing.M) {
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		panic(err)
	}
	if err := examplev1.AddToScheme(scheme); err != nil {
		panic(err)
	}
	ctrl.SetLogger(logr.Discard()) // controller-runtime's logs are not the tests' output
	os.Exit(m.Run())
}

// startWorkshop starts a workshop cluster for t, with the Widget CRD
// installed and served, and returns its config. It stops when t ends.
func startWorkshop(t testing.TB) *rest.Config {
	c := workshop.Start(t, crds.Served())
	if _, err := crds.Install(t.Context(), c, crdPaths); err != nil {
		t.Fatal(err)
	}
	return c.Config()
}

// startManager runs a manager with the WidgetReconciler against cfg until
// t ends, and returns a client of the test's own (not the manager's cache:
// the test reads what the server has).
func startManager(t testing.TB, cfg *rest.Config) client.Client {
	t.Helper()
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:  scheme,
		Metrics: metricsserver.Options{BindAddress: "0"}, // no port
		// A manager per test, each with a controller named "widget".
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := (&WidgetReconciler{Client: mgr.GetClient()}).SetupWithManager(mgr); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		if err := mgr.Start(ctx); err != nil {
			t.Errorf("manager: %v", err)
		}
	})
	t.Cleanup(wg.Wait) // runs second: the manager has returned
	t.Cleanup(cancel)  // runs first: stops it

	k8sClient, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	return k8sClient
}

// eventually polls cond until it is true, for at most 10 seconds, and
// fails t with what it waited for if it never is.
func eventually(t testing.TB, what string, cond func() (bool, error)) {
	t.Helper()
	err := wait.PollUntilContextTimeout(t.Context(), 10*time.Millisecond, 10*time.Second, true,
		func(context.Context) (bool, error) { return cond() })
	if err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}
