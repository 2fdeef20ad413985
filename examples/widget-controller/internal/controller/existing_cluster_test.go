package controller

import (
	"path/filepath"
	"testing"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/informer-walkthrough/informer-walkthrough/internal/check/leakcheck"
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

	env := &envtest.Environment{CRDDirectoryPaths: crdPaths, ErrorIfCRDPathMissing: true}
	restConfig, err := env.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := env.Stop(); err != nil {
			t.Error(err)
		}
	})
	if restConfig.Host != c.URL() {
		t.Fatalf("envtest's config is for %s, want the workshop cluster at %s", restConfig.Host, c.URL())
	}
	testWidget(t, restConfig)
}
