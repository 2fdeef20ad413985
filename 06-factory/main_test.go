package main

import (
	"bytes"
	"context"
	"reflect"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/informers"
	corev1informers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/informer-walkthrough/informer-walkthrough/internal/check/chaptertest"
	"github.com/informer-walkthrough/informer-walkthrough/internal/check/golden"
)

// TestGolden runs the chapter exactly as main does, on a fresh workshop
// cluster, and compares every line it prints with
// testdata/06-factory.golden.
func TestGolden(t *testing.T) {
	// Registered first, so it runs last: after the cluster is closed,
	// nothing the chapter started may still be running.
	c := chaptertest.Start(t) // also fails the test on leaked goroutines
	var out bytes.Buffer
	if err := run(t.Context(), &out, c); err != nil {
		t.Fatal(err)
	}
	golden.Assert(t, "06-factory", out.Bytes())
}

// TestFactoryKeepsFirstInformerPerType pins what sharing costs: the
// factory keys informers by Go type alone, so a second consumer that
// asks for pods with its own constructor (another label selector, other
// indexers) silently gets the first consumer's informer.
func TestFactoryKeepsFirstInformerPerType(t *testing.T) {
	c := chaptertest.Start(t)
	f := informers.NewSharedInformerFactoryWithOptions(
		c.Client, 0, informers.WithNamespace(c.Namespace))
	first := f.Core().V1().Pods().Informer()
	called := false
	second := f.InformerFor(&corev1.Pod{},
		func(client kubernetes.Interface, resync time.Duration) cache.SharedIndexInformer {
			called = true
			return corev1informers.NewPodInformer(
				client, "elsewhere", resync, cache.Indexers{})
		})
	if called {
		t.Error("InformerFor called the second constructor; want the existing informer")
	}
	if first.GetStore() != second.GetStore() {
		t.Error("InformerFor returned a different informer for *v1.Pod")
	}
}

// TestAccessorMakesNoInformer pins the mistake step 3 guards against:
// Core().V1().Pods() makes no informer, so Start starts nothing and
// WaitForCacheSync waits for nothing. Informer() or Lister() makes it,
// and only a later Start runs it.
func TestAccessorMakesNoInformer(t *testing.T) {
	c := chaptertest.Start(t) // also fails the test on leaked goroutines
	ctx, cancel := context.WithCancel(t.Context())
	f := informers.NewSharedInformerFactoryWithOptions(
		c.Client, 0, informers.WithNamespace(c.Namespace))
	defer f.Shutdown()
	defer cancel()

	pods := f.Core().V1().Pods()
	f.Start(ctx.Done())
	if got := f.WaitForCacheSync(ctx.Done()); len(got) != 0 {
		t.Errorf("after an accessor only, WaitForCacheSync = %v, want empty", got)
	}
	pods.Lister() // makes the informer, after Start
	if got := f.WaitForCacheSync(ctx.Done()); len(got) != 0 {
		t.Errorf("after Lister() but no Start, WaitForCacheSync = %v, want empty", got)
	}
	f.Start(ctx.Done())
	got := f.WaitForCacheSync(ctx.Done())
	if len(got) != 1 || !got[reflect.TypeOf(&corev1.Pod{})] {
		t.Errorf("after Start again, WaitForCacheSync = %v, want *v1.Pod=true", got)
	}
}

// TestREADMEQuotesOutput keeps the README's quoted output equal to what
// the chapter prints.
func TestREADMEQuotesOutput(t *testing.T) {
	golden.AssertQuoted(t, "06-factory")
}
