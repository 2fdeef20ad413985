package workshop_test

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/apiserver/pkg/sharding"
	"k8s.io/client-go/kubernetes"

	"github.com/informer-walkthrough/informer-walkthrough/check/leakcheck"
	"github.com/informer-walkthrough/informer-walkthrough/workshop"
)

// TestStart: a cluster per test, with the namespace "default", real
// resourceVersions and optimistic concurrency, and nothing left running
// once the test has ended.
func TestStart(t *testing.T) {
	leakcheck.Verify(t) // first: its check runs after the cluster is closed
	c := workshop.Start(t)
	if c.URL() == "" {
		t.Fatal("no URL")
	}
	pods := c.Client().CoreV1().Pods(metav1.NamespaceDefault)
	p, err := pods.Create(t.Context(), &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if p.ResourceVersion == "" || p.UID == "" {
		t.Errorf("created pod has rv=%q uid=%q", p.ResourceVersion, p.UID)
	}
	stale := p.DeepCopy()
	p.Labels = map[string]string{"a": "b"}
	if _, err := pods.Update(t.Context(), p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	stale.Labels = map[string]string{"a": "c"}
	if _, err := pods.Update(t.Context(), stale, metav1.UpdateOptions{}); !apierrors.IsConflict(err) {
		t.Errorf("update from a stale copy: %v, want a 409 Conflict", err)
	}
	// Config gives clients of one's own; each call a new Config.
	if c.Config() == c.Config() {
		t.Error("Config returned the same *rest.Config twice")
	}
	if _, err := kubernetes.NewForConfig(c.Config()); err != nil {
		t.Fatal(err)
	}
}

// TestTwoClusters: clusters share nothing, so tests may run in
// parallel, each with its own; and Close may be called twice.
func TestTwoClusters(t *testing.T) {
	a := workshop.Start(t)
	b, err := workshop.New()
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if a.URL() == b.URL() {
		t.Fatal("two clusters on one URL")
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "only-in-a"}}
	if _, err := a.Client().CoreV1().Namespaces().Create(t.Context(), ns, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Client().CoreV1().Namespaces().Get(t.Context(), "only-in-a", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the second cluster sees the first one's namespace: %v", err)
	}
	for range 2 {
		if err := b.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestShardSelectors: by default a shardSelector is ignored, as by
// kube-apiserver without the gate; with ShardSelectors(sharding.Parse) a
// list is the shard, and says so in shardInfo.
func TestShardSelectors(t *testing.T) {
	const half = "shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')"
	for _, tc := range []struct {
		name string
		opts []workshop.Option
		info bool
	}{{"default", nil, false}, {"gate on", []workshop.Option{workshop.ShardSelectors(sharding.Parse)}, true}} {
		c := workshop.Start(t, tc.opts...)
		pods := c.Client().CoreV1().Pods(metav1.NamespaceDefault)
		for i := range 16 {
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("p%d", i)},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}}}
			if _, err := pods.Create(t.Context(), pod, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		list, err := pods.List(t.Context(), metav1.ListOptions{ShardSelector: half})
		if err != nil {
			t.Fatal(err)
		}
		if got := list.ShardInfo != nil; got != tc.info {
			t.Errorf("%s: shardInfo %v, want present %v", tc.name, list.ShardInfo, tc.info)
		}
		if whole := len(list.Items) == 16; whole == tc.info {
			t.Errorf("%s: the list held %d of 16 pods", tc.name, len(list.Items))
		}
	}
}

// TestGarbageCollection: with the option, a dependent goes once its
// owner is deleted (in the background, after the DELETE returns: the
// test waits for it on a watch).
func TestGarbageCollection(t *testing.T) {
	leakcheck.Verify(t)
	c := workshop.Start(t, workshop.GarbageCollection())
	ctx := t.Context()
	cms := c.Client().CoreV1().ConfigMaps(metav1.NamespaceDefault)
	owner, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "owner"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	secrets := c.Client().CoreV1().Secrets(metav1.NamespaceDefault)
	dep, err := secrets.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "dependent",
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: owner.Name, UID: owner.UID}},
	}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w, err := secrets.Watch(ctx, metav1.ListOptions{ResourceVersion: dep.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if err := cms.Delete(ctx, owner.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	var ev watch.Event
	select {
	case ev = <-w.ResultChan():
	case <-time.After(10 * time.Second):
		t.Fatal("the dependent is still there after 10 s")
	}
	if s, ok := ev.Object.(*corev1.Secret); ev.Type != watch.Deleted || !ok || s.Name != "dependent" {
		t.Fatalf("got %s %v, want the dependent DELETED", ev.Type, ev.Object)
	}
}
