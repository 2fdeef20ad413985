package controller

import (
	"os"
	"path/filepath"
	"testing"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/informer-walkthrough/informer-walkthrough/check/leakcheck"
	"github.com/informer-walkthrough/informer-walkthrough/workshop"
	"github.com/informer-walkthrough/informer-walkthrough/workshop/crds"
)

// TestUseExistingCluster runs the suite as an envtest user runs it against
// a cluster of their own: envtest.Environment with USE_EXISTING_CLUSTER=true
// and KUBECONFIG naming the cluster. envtest (not this package) then reads
// the kubeconfig, waits for the default namespace, installs the CRDs from
// CRDDirectoryPaths and waits until discovery serves them. The cluster is a
// workshop cluster and the kubeconfig is written as cmd/workshop-cluster
// writes its own; no binaries are needed.
func TestUseExistingCluster(t *testing.T) {
	leakcheck.Verify(t)
	c := workshop.Start(t, crds.Served())
	kubeconfig := filepath.Join(t.TempDir(), "workshop.kubeconfig")
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["workshop"] = &clientcmdapi.Cluster{Server: c.URL()}
	cfg.AuthInfos["workshop"] = &clientcmdapi.AuthInfo{}
	cfg.Contexts["workshop"] = &clientcmdapi.Context{Cluster: "workshop", AuthInfo: "workshop"}
	cfg.CurrentContext = "workshop"
	if err := clientcmd.WriteToFile(*cfg, kubeconfig); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KUBECONFIG", kubeconfig)
	t.Setenv("USE_EXISTING_CLUSTER", "true")

	restConfig := startEnvtest(t)
	if restConfig.Host != c.URL() {
		t.Fatalf("envtest's config is for %s, want the workshop cluster at %s", restConfig.Host, c.URL())
	}
	testWidget(t, restConfig)
}

// TestEnvtest is the suite as an envtest user runs it, on whatever envtest
// starts or finds: a kube-apiserver and etcd from KUBEBUILDER_ASSETS, or,
// with USE_EXISTING_CLUSTER=true, the cluster KUBECONFIG names, e.g. one
// that go run ./cmd/workshop-cluster serves (see the README).
func TestEnvtest(t *testing.T) {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" && os.Getenv("USE_EXISTING_CLUSTER") != "true" {
		t.Skip("neither KUBEBUILDER_ASSETS nor USE_EXISTING_CLUSTER=true is set: nothing for envtest to start or use")
	}
	testWidget(t, startEnvtest(t))
}

// startEnvtest starts envtest with the Widget CRD installed (and removed
// again when t ends) and returns its config.
func startEnvtest(t testing.TB) *rest.Config {
	env := &envtest.Environment{
		CRDDirectoryPaths:     crdPaths,
		ErrorIfCRDPathMissing: true,
		CRDInstallOptions:     envtest.CRDInstallOptions{CleanUpAfterUse: true},
	}
	cfg, err := env.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := env.Stop(); err != nil {
			t.Error(err)
		}
	})
	return cfg
}
