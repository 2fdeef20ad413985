// Command consistency shows client-go v0.38's util/consistency on the
// workshop cluster: a controller writes, records the write's
// resourceVersion in a ConsistencyStore, and EnsureReady says "not yet"
// until the informer's store has seen that version, then "ready".
//
// It is its own module (client-go v0.38.0-alpha.2 needs Go 1.27; the
// course pins v0.37.2). From the course's root, in two terminals:
//
//	go run ./cmd/workshop-cluster -kubeconfig-out /tmp/workshop.kubeconfig
//	cd docs/v0.38/consistency && GOTOOLCHAIN=go1.27.3 go run . -kubeconfig /tmp/workshop.kubeconfig
//
// Read alongside: util/consistency/consistency.go at v0.38.0-alpha.2
// (docs/client-go-v0.38.md links its lines).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/consistency"
)

func main() {
	kubeconfig := flag.String("kubeconfig", os.Getenv("KUBECONFIG"), "the workshop cluster's kubeconfig")
	flag.Parse()
	if *kubeconfig == "" || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "consistency: give the workshop cluster's kubeconfig: -kubeconfig PATH (go run ./cmd/workshop-cluster writes one)")
		os.Exit(1)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := run(ctx, os.Stdout, *kubeconfig); err != nil {
		fmt.Fprintln(os.Stderr, "consistency:", err)
		os.Exit(1)
	}
}

const (
	namespace = "default"
	name      = "consistency-demo"
)

// configmaps is the GroupResource the ConsistencyStore keys a store by.
var configmaps = schema.GroupResource{Resource: "configmaps"}

func run(ctx context.Context, out io.Writer, kubeconfig string) error {
	config, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	client, err := kubernetes.NewForConfig(config)
	if err != nil {
		return err
	}
	cms := client.CoreV1().ConfigMaps(namespace)
	_ = cms.Delete(ctx, name, metav1.DeleteOptions{}) // from an earlier run

	// hold keeps the watch event of our write from reaching the store
	// until released: the window every informer has between a write and
	// its cache, widened so that the demo sees it every time. The
	// transform runs before an object is queued for the store.
	hold, release := make(chan struct{}), make(chan struct{})
	held := false
	transform := func(obj any) (any, error) {
		if cm, ok := obj.(*corev1.ConfigMap); ok && cm.Name == name && !held {
			held = true
			close(hold)
			<-release
		}
		return obj, nil
	}

	// seen tells the demo, from a handler, that the store has the write:
	// handlers run after the store is updated.
	seen := make(chan string, 1)
	factory := informers.NewSharedInformerFactoryWithOptions(client, 0,
		informers.WithNamespace(namespace), informers.WithTransform(transform))
	informer := factory.Core().V1().ConfigMaps().Informer()
	if _, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if cm, ok := obj.(*corev1.ConfigMap); ok && cm.Name == name {
				seen <- cm.ResourceVersion
			}
		},
	}); err != nil {
		return err
	}
	factory.StartWithContext(ctx)
	defer factory.Shutdown()
	if err := factory.WaitForCacheSyncWithContext(ctx).AsError(); err != nil {
		return err
	}
	store := informer.GetStore()
	fmt.Fprintf(out, "informer synced: its store is at rv=%s\n", store.LastStoreSyncResourceVersion())

	// The ConsistencyStore reads each store's LastStoreSyncResourceVersion.
	written := consistency.NewConsistencyStore(map[schema.GroupResource]consistency.LastSyncRVGetter{
		configmaps: store,
	})
	owner := types.NamespacedName{Namespace: namespace, Name: "owner"}

	// A write, and its resourceVersion recorded for the owner.
	cm, err := cms.Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Data:       map[string]string{"k": "v"},
	}, metav1.CreateOptions{})
	if err != nil {
		return err
	}
	written.WroteAt(owner, "owner-uid", configmaps, cm.ResourceVersion)
	fmt.Fprintf(out, "wrote configmap %s/%s at rv=%s; WroteAt(%s)\n", namespace, name, cm.ResourceVersion, owner)

	// The watch event is held: the store is behind the write.
	select {
	case <-hold:
	case <-ctx.Done():
		return errors.New("the informer never saw the write")
	}
	err = written.EnsureReady(owner)
	var ce *consistency.ConsistencyError
	if !errors.As(err, &ce) {
		return fmt.Errorf("EnsureReady before the store caught up: %v, want a ConsistencyError", err)
	}
	fmt.Fprintf(out, "EnsureReady: %v\n", err)
	fmt.Fprintln(out, "  a controller requeues the owner here instead of reading a stale cache")

	// Let the event through; the handler says when the store has it.
	close(release)
	select {
	case rv := <-seen:
		fmt.Fprintf(out, "store caught up: handler saw rv=%s, store at rv=%s\n", rv, store.LastStoreSyncResourceVersion())
	case <-ctx.Done():
		return errors.New("the store never caught up")
	}
	if err := written.EnsureReady(owner); err != nil {
		return fmt.Errorf("EnsureReady after the store caught up: %v", err)
	}
	fmt.Fprintln(out, "EnsureReady: ok (the record for the owner is cleared)")
	return cms.Delete(ctx, name, metav1.DeleteOptions{})
}
