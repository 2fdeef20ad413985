package main

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/tools/cache"

	"github.com/informer-walkthrough/informer-walkthrough/check/chaptertest"
	"github.com/informer-walkthrough/informer-walkthrough/internal/cluster"
	"github.com/informer-walkthrough/informer-walkthrough/internal/fixture"
)

// The checks of the exercises in exercises.go. Each is skipped while
// its function still returns errors.ErrUnsupported.

// notWritten skips t if err says the exercise is not written yet.
func notWritten(t *testing.T, err error, exercise string) {
	t.Helper()
	if errors.Is(err, errors.ErrUnsupported) {
		t.Skipf("%s is not written yet: write it in exercises.go "+
			"(reference answer: go test -tags solution ./09-metadata -run Exercise)",
			exercise)
	}
}

// TestExercise1ReplicasAndImages reads a deployment with two containers
// through the dynamic client, then two broken copies of it.
func TestExercise1ReplicasAndImages(t *testing.T) {
	c := chaptertest.Start(t)
	ctx := t.Context()
	d := fixture.PausedDeployment("web", "nginx:1.27")
	d.Spec.Template.Spec.Containers = append(d.Spec.Template.Spec.Containers,
		corev1.Container{Name: "proxy", Image: "envoy:1.31"})
	if _, err := c.Client.AppsV1().Deployments(c.Namespace).Create(ctx, d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	dc, err := dynamic.NewForConfig(c.Config)
	if err != nil {
		t.Fatal(err)
	}
	u, err := dc.Resource(deploymentsGVR).Namespace(c.Namespace).Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	replicas, images, err := replicasAndImages(u)
	notWritten(t, err, "replicasAndImages")
	if err != nil || replicas != 0 || !slices.Equal(images, []string{"nginx:1.27", "envoy:1.31"}) {
		t.Errorf("replicasAndImages = %d, %q, %v; want 0, [nginx:1.27 envoy:1.31], nil", replicas, images, err)
	}

	mistyped := u.DeepCopy()
	if err := unstructured.SetNestedField(mistyped.Object, "3", "spec", "replicas"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := replicasAndImages(mistyped); err == nil {
		t.Error(`replicasAndImages with spec.replicas = "3" (a string): no error`)
	}
	missing := u.DeepCopy()
	unstructured.RemoveNestedField(missing.Object, "spec", "replicas")
	if _, _, err := replicasAndImages(missing); err == nil {
		t.Error("replicasAndImages without spec.replicas: no error")
	}
}

// TestExercise2ByOwner indexes a metadata informer's pods by owner:
// two pods owned by deployment web, one by nobody.
func TestExercise2ByOwner(t *testing.T) {
	if _, err := byOwner(&corev1.Pod{}); errors.Is(err, errors.ErrUnsupported) {
		notWritten(t, err, "byOwner")
	}
	c := chaptertest.Start(t)
	ctx := t.Context()
	web, err := c.Client.AppsV1().Deployments(c.Namespace).Create(ctx,
		fixture.PausedDeployment("web", "nginx:1.27"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	owner := metav1.OwnerReference{APIVersion: "apps/v1", Kind: "Deployment", Name: web.Name, UID: web.UID}
	for _, name := range []string{"web-1", "web-2", "db-1"} {
		pod := fixture.GatedPod(name, cluster.Labels("app", name[:len(name)-2]))
		if name != "db-1" {
			pod.OwnerReferences = []metav1.OwnerReference{owner}
		}
		if _, err := c.Client.CoreV1().Pods(c.Namespace).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	mc, err := metadata.NewForConfig(c.Config)
	if err != nil {
		t.Fatal(err)
	}
	factory := metadatainformer.NewFilteredSharedInformerFactory(mc, 0, c.Namespace, nil)
	informer := factory.ForResource(podsGVR).Informer()
	if err := informer.AddIndexers(cache.Indexers{"owner": byOwner}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer factory.Shutdown() // second: waits for the informer
	defer cancel()           // first: stops it
	factory.Start(ctx.Done())
	if !cache.WaitFor(ctx, "", informer.HasSyncedChecker()) {
		t.Fatal("not synced")
	}
	owned, err := informer.GetIndexer().ByIndex("owner", string(web.UID))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, o := range owned {
		names = append(names, o.(*metav1.PartialObjectMetadata).Name)
	}
	slices.Sort(names)
	if !slices.Equal(names, []string{"web-1", "web-2"}) {
		t.Errorf(`ByIndex("owner", web's UID) = %q, want [web-1 web-2]`, names)
	}

	// The same function serves typed and dynamic informers.
	typed := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{OwnerReferences: []metav1.OwnerReference{owner}}}
	u := &unstructured.Unstructured{}
	u.SetOwnerReferences([]metav1.OwnerReference{owner})
	for _, obj := range []any{typed, u} {
		if got, err := byOwner(obj); err != nil || !slices.Equal(got, []string{string(web.UID)}) {
			t.Errorf("byOwner(%T) = %q, %v; want [%s]", obj, got, err, web.UID)
		}
	}
}

// TestExercise3KeepPhaseAndNode applies the Transform to a pod of
// pod.go's shape, then to its own output, then to what is not a pod.
func TestExercise3KeepPhaseAndNode(t *testing.T) {
	pod, status, err := shapedPod(0, metav1.OwnerReference{Kind: "Deployment", Name: "web", UID: "u-1"})
	if err != nil {
		t.Fatal(err)
	}
	pod.Status = status
	pod.Spec.NodeName = "node-1"
	pod.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kubelet", Operation: metav1.ManagedFieldsOperationUpdate}}
	once, err := keepPhaseAndNode(pod.DeepCopy())
	notWritten(t, err, "keepPhaseAndNode")
	if err != nil {
		t.Fatal(err)
	}
	lean, ok := once.(*corev1.Pod)
	if !ok {
		t.Fatalf("keepPhaseAndNode returned a %T, want a *v1.Pod", once)
	}
	want := &corev1.Pod{ObjectMeta: *pod.ObjectMeta.DeepCopy(),
		Spec:   corev1.PodSpec{NodeName: "node-1"},
		Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	want.ManagedFields = nil
	if !reflect.DeepEqual(lean, want) {
		t.Errorf("keepPhaseAndNode(pod) =\n  %+v\nwant\n  %+v", lean, want)
	}
	twice, err := keepPhaseAndNode(lean.DeepCopy())
	if err != nil || !reflect.DeepEqual(twice, lean) {
		t.Errorf("keepPhaseAndNode is not idempotent: applied to its own output it gives %+v, %v", twice, err)
	}
	other := cache.DeletedFinalStateUnknown{Key: "ns/web-1", Obj: pod}
	if got, err := keepPhaseAndNode(other); err != nil || !reflect.DeepEqual(got, other) {
		t.Errorf("keepPhaseAndNode(%T) = %T, %v; want it unchanged", other, got, err)
	}
}
