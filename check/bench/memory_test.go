//go:build bench

package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/informers"
	corev1informers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
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
//	go test -tags bench -run '^$' -bench InformerMemory ./check/bench
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
//	go test -tags bench -run '^$' -bench Consumers ./check/bench
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

// BenchmarkInformerMemoryByKind is 09-metadata's memory step at scale:
// five informers over the same pods, each of the shape in
// 09-metadata/pod.go (an init container and three containers with
// env, resources and probes; the status of a running pod), with the
// two managedFields entries their create and status update leave. For
// each informer, the growth of the live heap from before it starts to
// after it has synced, per pod:
//
//   - typed: a pod informer over the typed client (protobuf), as a
//     factory builds it;
//
//   - typedlean: the same with a Transform that drops managedFields;
//
//   - dynamic: dynamicinformer's informer (JSON, Unstructured);
//
//   - metadata: metadatainformer's informer (PartialObjectMetadata);
//
//   - metadatalean: the same with the Transform.
//
//     go test -tags bench -run '^$' -bench InformerMemoryByKind ./check/bench
func BenchmarkInformerMemoryByKind(b *testing.B) {
	n := size(2_000, 50)
	c, client := newCluster(b)
	createShapedPods(b, client, c.Namespace, n)
	dc, err := dynamic.NewForConfig(c.Server.Config())
	if err != nil {
		b.Fatal(err)
	}
	mc, err := metadata.NewForConfig(c.Server.Config())
	if err != nil {
		b.Fatal(err)
	}
	pods := corev1.SchemeGroupVersion.WithResource("pods")
	indexers := cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc}
	variants := []struct {
		name  string
		build func() cache.SharedIndexInformer
		lean  bool
		bytes float64
	}{
		{name: "typed", build: func() cache.SharedIndexInformer {
			return podInformer(podsLW(client, c.Namespace))
		}},
		{name: "typedlean", lean: true, build: func() cache.SharedIndexInformer {
			return podInformer(podsLW(client, c.Namespace))
		}},
		{name: "dynamic", build: func() cache.SharedIndexInformer {
			return dynamicinformer.NewFilteredDynamicInformer(dc, pods,
				c.Namespace, 0, indexers, nil).Informer()
		}},
		{name: "metadata", build: func() cache.SharedIndexInformer {
			return metadatainformer.NewFilteredMetadataInformer(mc, pods,
				c.Namespace, 0, indexers, nil).Informer()
		}},
		{name: "metadatalean", lean: true, build: func() cache.SharedIndexInformer {
			return metadatainformer.NewFilteredMetadataInformer(mc, pods,
				c.Namespace, 0, indexers, nil).Informer()
		}},
	}
	rounds := 0
	for b.Loop() {
		rounds++
		for j := range variants {
			v := &variants[(j+rounds)%len(variants)]
			before := settledHeap()
			inf := v.build()
			if v.lean {
				if err := inf.SetTransform(stripManagedFields); err != nil {
					b.Fatal(err)
				}
			}
			stop := run(inf)
			waitDone(b, inf.HasSyncedChecker())
			stop()
			after := settledHeap()
			checkShapedCache(b, inf, n, !v.lean)
			v.bytes += float64(int64(after)-int64(before)) / float64(n)
		}
	}
	typed := variants[0].bytes / float64(rounds)
	for _, v := range variants {
		perPod := v.bytes / float64(rounds)
		b.ReportMetric(perPod, v.name+"-B/object")
		if v.name != "typed" {
			b.ReportMetric(perPod/typed, v.name+"/typed")
		}
	}
	b.ReportMetric(0, "ns/op")
}

// shapedPodJSON reads the pod 09-metadata creates and measures, its
// podJSON constant, from the chapter's source, so that the chapter and
// the benchmark measure the same shape (a chapter is a main package,
// which no other package can import).
func shapedPodJSON(b *testing.B) []byte {
	b.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "../../09-metadata/pod.go", nil, 0)
	if err != nil {
		b.Fatal(err)
	}
	for _, decl := range f.Decls {
		gen, ok := decl.(*ast.GenDecl)
		if !ok || gen.Tok != token.CONST {
			continue
		}
		for _, spec := range gen.Specs {
			v := spec.(*ast.ValueSpec)
			if len(v.Names) == 1 && v.Names[0].Name == "podJSON" && len(v.Values) == 1 {
				if lit, ok := v.Values[0].(*ast.BasicLit); ok {
					s, err := strconv.Unquote(lit.Value)
					if err != nil {
						b.Fatal(err)
					}
					return []byte(s)
				}
			}
		}
	}
	b.Fatal("09-metadata/pod.go has no podJSON constant")
	return nil
}

// createShapedPods creates n pods of 09-metadata's shape, four at a
// time, each then given the status of a running pod, as a kubelet
// would write it.
func createShapedPods(b *testing.B, client kubernetes.Interface, ns string, n int) {
	b.Helper()
	data := shapedPodJSON(b)
	const workers = 4
	pods := client.CoreV1().Pods(ns)
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := w; i < n; i += workers {
				var pod corev1.Pod
				if err := json.Unmarshal(data, &pod); err != nil {
					errs <- err
					return
				}
				pod.Name = fmt.Sprintf("shop-%06d", i)
				status := pod.Status
				pod.Status = corev1.PodStatus{}
				created, err := pods.Create(context.Background(), &pod, metav1.CreateOptions{})
				if err != nil {
					errs <- err
					return
				}
				status.QOSClass = created.Status.QOSClass
				created.Status = status
				if _, err := pods.UpdateStatus(context.Background(), created, metav1.UpdateOptions{}); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		b.Fatal(err)
	}
}

// checkShapedCache makes sure the informer holds n objects, with
// managedFields exactly when it should.
func checkShapedCache(b *testing.B, inf cache.SharedIndexInformer, n int, wantManaged bool) {
	b.Helper()
	objs := inf.GetStore().List()
	if len(objs) != n {
		b.Fatalf("cache holds %d objects, want %d", len(objs), n)
	}
	m, err := meta.Accessor(objs[0])
	if err != nil {
		b.Fatal(err)
	}
	if got := len(m.GetManagedFields()); (got > 0) != wantManaged {
		b.Fatalf("cached %T has %d managedFields entries; want some: %t", objs[0], got, wantManaged)
	}
}

// settledHeap is liveHeap once garbage collection has nothing left to
// free: an object with a finalizer (a closed connection's file) is
// freed by a later collection than the one that finds it unreachable.
func settledHeap() uint64 {
	last := liveHeap()
	for range 20 {
		now := liveHeap()
		if now == last {
			break
		}
		last = now
	}
	return last
}
