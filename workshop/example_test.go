package workshop_test

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"

	"github.com/informer-walkthrough/informer-walkthrough/workshop"
)

// An informer on a workshop cluster, as a test would use one: the same
// client-go code path as in production (here a watch-list), and the
// resourceVersions a real API server gives (the first nine went to what
// the cluster has from the start: its namespaces, their ServiceAccounts
// and the kubernetes Service).
func Example() {
	c, err := workshop.New()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	ctx, cancel := context.WithCancel(context.Background())
	factory := informers.NewSharedInformerFactoryWithOptions(c.Client(), 0,
		informers.WithNamespace(metav1.NamespaceDefault))
	defer factory.Shutdown() // after cancel: defers run last-in first-out
	defer cancel()

	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web-1"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx"}}},
	}
	created, err := c.Client().CoreV1().Pods(metav1.NamespaceDefault).Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	lister := factory.Core().V1().Pods().Lister()
	factory.Start(ctx.Done())
	if err := factory.WaitForCacheSyncWithContext(ctx).AsError(); err != nil {
		fmt.Println(err)
		return
	}
	cached, err := lister.List(labels.Everything())
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("created rv=%s, cached %d pod: %s rv=%s phase=%s\n", created.ResourceVersion,
		len(cached), cached[0].Name, cached[0].ResourceVersion, cached[0].Status.Phase)
	// Output: created rv=10, cached 1 pod: web-1 rv=10 phase=Pending
}
