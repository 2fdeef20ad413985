package bench

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/informers"
	corev1informers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// stripManagedFields is a Transform for programs that never read
// managedFields, as most controllers do not: it runs on every object
// before the informer caches it. It must be idempotent: with watch-list
// the initial objects pass through it twice (05-informer, step 3).
func stripManagedFields(obj any) (any, error) {
	if m, err := meta.Accessor(obj); err == nil {
		m.SetManagedFields(nil)
	}
	return obj, nil
}

// BenchmarkInformerMemory measures what an informer's cache holds per
// pod, as the growth of the live heap from before the informer starts
// to after it has synced (runtime.ReadMemStats after a full GC), with
// and without a Transform that strips managedFields. 10 000 pods, each
// with the one managedFields entry the workshop cluster fills in for a
// pod created by one client, as kube-apiserver does (transcript
// 01-create-pods).
//
//	go test -run '^$' -bench InformerMemory ./internal/check/bench
func BenchmarkInformerMemory(b *testing.B) {
	n := size(10_000, 100)
	c, client := newCluster(b)
	createPods(b, client, c.Namespace, n, benchPod)

	variants := []struct {
		name      string
		transform cache.TransformFunc
		bytes     float64
	}{{name: "plain"}, {name: "stripped", transform: stripManagedFields}}
	rounds := 0
	for b.Loop() {
		rounds++
		for j := range variants {
			v := &variants[(j+rounds)%len(variants)]
			before := liveHeap()
			inf := podInformer(podsLW(client, c.Namespace))
			if v.transform != nil {
				if err := inf.SetTransform(v.transform); err != nil {
					b.Fatal(err)
				}
			}
			stop := run(inf)
			waitDone(b, inf.HasSyncedChecker())
			after := liveHeap()
			checkCache(b, inf, n, v.transform == nil)
			stop()
			v.bytes += float64(int64(after)-int64(before)) / float64(n)
		}
	}
	plain := variants[0].bytes / float64(rounds)
	stripped := variants[1].bytes / float64(rounds)
	b.ReportMetric(plain, "plain-B/object")
	b.ReportMetric(stripped, "stripped-B/object")
	b.ReportMetric(stripped/plain, "stripped/plain")
	b.ReportMetric(0, "ns/op")
}

// checkCache makes sure the informer holds n pods, and that they carry
// managedFields exactly when they should: a benchmark of stripping
// nothing would measure nothing.
func checkCache(b *testing.B, inf cache.SharedIndexInformer, n int,
	wantManaged bool) {
	b.Helper()
	objs := inf.GetStore().List()
	if len(objs) != n {
		b.Fatalf("cache holds %d pods, want %d", len(objs), n)
	}
	p, ok := objs[0].(*corev1.Pod)
	if !ok {
		b.Fatalf("cache holds a %T", objs[0])
	}
	if got := len(p.ManagedFields) > 0; got != wantManaged {
		b.Fatalf("cached pod has %d managedFields entries; want some: %t"+
			" (does the server still fill managedFields?)",
			len(p.ManagedFields), wantManaged)
	}
}

// BenchmarkConsumers compares N consumers (each an event handler) of
// the pod informer from one factory with N independent informers
// (NewPodInformer, as code that bypasses the factory builds them), over
// 1 000 pods: the requests each sends to sync (client-side request
// log) and the live heap each holds once synced.
//
//	go test -run '^$' -bench Consumers ./internal/check/bench
func BenchmarkConsumers(b *testing.B) {
	n := size(1_000, 100)
	for _, consumers := range []int{2, 10} {
		b.Run(fmt.Sprintf("consumers=%d", consumers), func(b *testing.B) {
			c, client := newCluster(b)
			createPods(b, client, c.Namespace, n, benchPod)

			// c.Client records every request it sends.
			variants := []struct {
				name     string
				start    func(kubernetes.Interface, string, int) func()
				requests float64
				bytes    float64
			}{
				{name: "factory", start: factoryConsumers(b)},
				{name: "independent", start: independentConsumers(b)},
			}
			rounds := 0
			for b.Loop() {
				rounds++
				for j := range variants {
					v := &variants[(j+rounds)%len(variants)]
					before := liveHeap()
					c.ResetRequests()
					stop := v.start(c.Client, c.Namespace, consumers)
					v.requests += float64(len(c.Requests()))
					after := liveHeap()
					stop()
					v.bytes += float64(int64(after) - int64(before))
				}
			}
			f, ind := variants[0], variants[1]
			r := float64(rounds)
			b.ReportMetric(f.requests/r, "factory-requests")
			b.ReportMetric(ind.requests/r, "independent-requests")
			b.ReportMetric(f.bytes/r/float64(n), "factory-B/object")
			b.ReportMetric(ind.bytes/r/float64(n), "independent-B/object")
			b.ReportMetric(ind.bytes/f.bytes, "independent/factory-B")
			b.ReportMetric(0, "ns/op")
		})
	}
}

// factoryConsumers starts one factory and asks it for the pod informer
// once per consumer, adding a handler each time, as parts of a program
// written without knowing of each other do (06-factory, step 2). It
// returns once every handler has had the initial pods.
func factoryConsumers(b *testing.B) func(kubernetes.Interface, string,
	int) func() {
	return func(client kubernetes.Interface, ns string, k int) func() {
		ctx, cancel := context.WithCancel(context.Background())
		factory := informers.NewSharedInformerFactoryWithOptions(
			client, 0, informers.WithNamespace(ns))
		var regs []cache.ResourceEventHandlerRegistration
		for range k {
			inf := factory.Core().V1().Pods().Informer()
			reg, err := inf.AddEventHandler(countAdds())
			if err != nil {
				b.Fatal(err)
			}
			regs = append(regs, reg)
		}
		factory.Start(ctx.Done())
		for _, reg := range regs {
			waitDone(b, reg.HasSyncedChecker())
		}
		return func() {
			cancel()
			factory.Shutdown()
		}
	}
}

// independentConsumers builds one informer per consumer, each with its
// own watch and its own cache.
func independentConsumers(b *testing.B) func(kubernetes.Interface,
	string, int) func() {
	return func(client kubernetes.Interface, ns string, k int) func() {
		var stops []func()
		var regs []cache.ResourceEventHandlerRegistration
		for range k {
			inf := corev1informers.NewPodInformer(client, ns, 0,
				cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
			reg, err := inf.AddEventHandler(countAdds())
			if err != nil {
				b.Fatal(err)
			}
			regs = append(regs, reg)
			stops = append(stops, run(inf))
		}
		for _, reg := range regs {
			waitDone(b, reg.HasSyncedChecker())
		}
		return func() {
			for _, stop := range stops {
				stop()
			}
		}
	}
}

// countAdds is a handler that does what a cheap consumer does: notes
// that something happened.
func countAdds() cache.ResourceEventHandler {
	var adds atomic.Int64
	return cache.ResourceEventHandlerFuncs{
		AddFunc: func(any) { adds.Add(1) },
	}
}
