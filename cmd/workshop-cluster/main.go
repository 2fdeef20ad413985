// Command workshop-cluster runs the embedded workshop cluster on its own,
// so that kubectl (or a chapter run with --kubeconfig) can talk to it:
//
//	go run ./cmd/workshop-cluster
//	export KUBECONFIG=$PWD/workshop.kubeconfig
//	kubectl get pods -n informer-walkthrough -w
//
// It serves HTTPS on 127.0.0.1 only, without authentication, until
// Ctrl-C, with the ShardedListAndWatch gate on (shardSelector, chapter 12)
// unless --shard-selectors=false. Its certificate is signed by a CA made
// at start, which the kubeconfig carries in certificate-authority-data,
// as a kind or envtest kubeconfig carries its cluster's: clients that
// refuse a kubeconfig naming http:// (the JavaScript client, for one)
// take it as it is. --tls=false serves plain HTTP instead, for curl
// without --cacert or to read the wire. --garbage-collector acts on
// ownerReferences and a DELETE's propagationPolicy, as a cluster with
// kube-controller-manager does (off by default, as envtest).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/informer-walkthrough/informer-walkthrough/internal/apiserver"
	"github.com/informer-walkthrough/informer-walkthrough/internal/apiserver/admission"
	"github.com/informer-walkthrough/informer-walkthrough/internal/apiserver/crd"
	"github.com/informer-walkthrough/informer-walkthrough/internal/apiserver/shardparse"
	"github.com/informer-walkthrough/informer-walkthrough/internal/cluster"
)

func main() {
	fs := flag.NewFlagSet("workshop-cluster", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	port := fs.Int("port", 0, "port on 127.0.0.1 to listen on (default: a free one)")
	out := fs.String("kubeconfig-out", "workshop.kubeconfig", "where to write the kubeconfig")
	shards := fs.Bool("shard-selectors", true, "serve shardSelector, as kube-apiserver with --feature-gates=ShardedListAndWatch=true (false: ignore it, its default)")
	tls := fs.Bool("tls", true, "serve HTTPS, with a CA made at start and written into the kubeconfig (false: plain HTTP)")
	gc := fs.Bool("garbage-collector", false, "act on ownerReferences and propagationPolicy, as kube-controller-manager's garbage collector (false: store them, as envtest)")
	if err := fs.Parse(os.Args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fs.SetOutput(os.Stdout)
			fmt.Println("Usage: go run ./cmd/workshop-cluster [flags]")
			fs.PrintDefaults()
			return
		}
		fmt.Fprintf(os.Stderr, "workshop-cluster: %v (see --help)\n", err)
		os.Exit(1)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// A wall clock, so that kubectl's AGE reads as on any cluster;
	// chapters and tests keep the fixed clock of the default.
	// Extend: it serves CustomResourceDefinitions, as any cluster does;
	// Admission: it calls webhooks and evaluates admission policies.
	opts := apiserver.Options{Port: *port, Now: time.Now, Extend: crd.Serve, Admission: admission.Enabled, TLS: *tls, GarbageCollection: *gc}
	if *shards {
		opts.ShardSelectors = shardparse.Parse
	}
	if err := serve(ctx, opts, *out, os.Stdout, nil); err != nil {
		fmt.Fprintf(os.Stderr, "workshop-cluster: %v\n", err)
		os.Exit(1)
	}
}

// serve starts the cluster (opts), writes its kubeconfig and serves until ctx
// ends. ready, if not nil, receives the server once it is serving.
func serve(ctx context.Context, opts apiserver.Options, kubeconfig string, out io.Writer, ready chan<- *apiserver.Server) error {
	// Bootstrap: what a real cluster has from the start (its namespaces,
	// default/kubernetes, a default ServiceAccount in each namespace).
	opts.Bootstrap = true
	srv, err := apiserver.Start(opts)
	if err != nil {
		return err
	}
	defer srv.Close()

	// The course's own namespace.
	client, err := kubernetes.NewForConfig(srv.Config())
	if err != nil {
		return err
	}
	for _, ns := range []string{cluster.DefaultNamespace} {
		obj := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}
		if _, err := client.CoreV1().Namespaces().Create(ctx, obj, metav1.CreateOptions{}); err != nil {
			return err
		}
	}

	path, err := filepath.Abs(kubeconfig)
	if err != nil {
		return err
	}
	cfg := clientcmdapi.NewConfig()
	// With TLS, the kubeconfig trusts the cluster's own CA (nil without).
	cfg.Clusters["workshop"] = &clientcmdapi.Cluster{Server: srv.URL(), CertificateAuthorityData: srv.CA()}
	// With TLS, a user's client certificate, as kind and envtest write
	// one: kubectl prompts for a password where an https cluster's user
	// has no credential. The server asks for none (tls.go).
	cert, key := srv.ClientCertificate()
	cfg.AuthInfos["workshop"] = &clientcmdapi.AuthInfo{ClientCertificateData: cert, ClientKeyData: key}
	cfg.Contexts["workshop"] = &clientcmdapi.Context{
		Cluster: "workshop", AuthInfo: "workshop", Namespace: cluster.DefaultNamespace,
	}
	cfg.CurrentContext = "workshop"
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		return fmt.Errorf("writing the kubeconfig: %w", err)
	}
	defer os.Remove(path)

	fmt.Fprintf(out, "Workshop cluster serving at %s (127.0.0.1 only, no authentication)\n", srv.URL())
	fmt.Fprintf(out, "Kubeconfig: %s\n\n", path)
	fmt.Fprintf(out, "  export KUBECONFIG=%s\n", path)
	fmt.Fprintf(out, "  kubectl get pods -w\n")
	fmt.Fprintf(out, "  go run ./01-watch --kubeconfig %s\n\n", path)
	fmt.Fprintf(out, "Ctrl-C stops it and removes the kubeconfig.\n")
	if ready != nil {
		ready <- srv
	}
	<-ctx.Done()
	return nil
}
