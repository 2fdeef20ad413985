// Chapter 10-lifecycle: seeing inside a running informer, and stopping
// parts of it. Why WaitForCacheSync hangs without a word, what an
// informer is doing, how to remove a handler or stop one informer, and
// why the lister did not return what you just wrote: each step answers
// one, with what client-go v0.37 has for it.
//
// Read alongside (client-go v0.37.2): tools/cache/shared_informer.go,
// identity.go, informer_metrics.go, store.go, the_real_fifo.go,
// informers/factory.go, util/workqueue/metrics.go. What only shows the
// lesson is in observe.go: the handler and index function that wait on
// a step's schedule, the holding of step 4's handlers at the course's
// tap (internal/tap), the loggers and metrics that keep what client-go
// reports, and the print* functions that format what a step read.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/resourceversion"
	"k8s.io/apimachinery/pkg/util/wait"
	clientfeatures "k8s.io/client-go/features"
	"k8s.io/client-go/informers"
	corev1informers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	"github.com/informer-walkthrough/informer-walkthrough/internal/cluster"
	"github.com/informer-walkthrough/informer-walkthrough/internal/fixture"
	"github.com/informer-walkthrough/informer-walkthrough/internal/show"
	"github.com/informer-walkthrough/informer-walkthrough/internal/tap"
)

func main() { cluster.Main("10-lifecycle", run) }

// run is the chapter: five steps, each printing a heading. Every step
// stops what it started before it returns.
func run(ctx context.Context, out io.Writer, c *cluster.Cluster) error {
	for _, step := range []func(context.Context, io.Writer, *cluster.Cluster) error{
		refusedList, namesAndMetrics, slowHandlerTrace, handlerLifecycle, readYourOwnWrites,
	} {
		if err := step(ctx, out, c); err != nil {
			return err
		}
	}
	return nil
}

// nobody is the user step 1's informer lists pods as.
const nobody = "informer-walkthrough-nobody"

// refusedList runs an informer whose list the server refuses. Its
// reflector would retry forever and WaitForCacheSync wait without a
// word; a watch error handler sees each failure and can end the wait,
// with the reason.
func refusedList(ctx context.Context, out io.Writer, c *cluster.Cluster) error {
	fmt.Fprintln(out, "Step 1. A refused list: the watch error handler turns a silent retry into an error")
	client, err := clientWithoutGrant(c)
	if err != nil {
		return err
	}
	logger, logged := newLogger()
	ctx = klog.NewContext(ctx, logger) // client-go logs to the context's logger

	// !+refused
	ctx, stop := context.WithCancelCause(ctx)
	factory := informers.NewSharedInformerFactoryWithOptions(client, 0,
		informers.WithNamespace(c.Namespace))
	defer factory.Shutdown()
	defer stop(nil)
	pods := factory.Core().V1().Pods().Informer()
	err = pods.SetWatchErrorHandlerWithContext(
		func(ctx context.Context, r *cache.Reflector, err error) {
			cache.DefaultWatchErrorHandler(ctx, r, err) // log, as by default
			if apierrors.IsForbidden(err) {
				stop(err) // retrying will not grant the permission
			}
		})
	if err != nil {
		return err
	}
	factory.StartWithContext(ctx)
	synced := factory.WaitForCacheSyncWithContext(ctx)
	// !-refused
	printRefused(out, synced.AsError(), apierrors.IsForbidden(context.Cause(ctx)), logged)
	return nil
}

// clientWithoutGrant returns a client whose list and watch of pods get
// 403 Forbidden: on a real cluster it impersonates a user no RBAC rule
// names (a user who may not impersonate gets a 403 for that instead);
// the workshop cluster ignores impersonation, so it is told to refuse.
// Its 403s do not end the run (cluster.UnguardedConfig), and its
// requests are in the request log like every other client's.
func clientWithoutGrant(c *cluster.Cluster) (kubernetes.Interface, error) {
	cfg := c.UnguardedConfig()
	cfg.Impersonate.UserName = nobody
	refusePods(c, nobody)
	return kubernetes.NewForConfig(cfg)
}

// namesAndMetrics names a factory's informers and reads their metrics
// while they sync and work: the RealFIFO's queued items, the store's
// resourceVersion, and a workqueue fed by the informer's handler.
func namesAndMetrics(ctx context.Context, out io.Writer, c *cluster.Cluster) error {
	fmt.Fprintln(out, "\nStep 2. Names and metrics: the informer's queue and store, and a workqueue")
	if _, err := createPods(ctx, c, "web-1"); err != nil {
		return err
	}
	// !+named
	cache.SetInformerMetricsProvider(informerMetrics) // the first call wins
	name, err := cache.NewInformerName("10-lifecycle")
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	factory := informers.NewSharedInformerFactoryWithOptions(c.Client, 0,
		informers.WithNamespace(c.Namespace), informers.WithInformerName(name))
	defer factory.Shutdown() // also releases the name
	defer cancel()
	// !-named
	_, err = cache.NewInformerName("10-lifecycle")
	fmt.Fprintf(out, "  NewInformerName again: %v\n", err)

	rec := tap.NewRecorder(ctx)
	// !+queue
	// The metrics are what client-go reports of the queue; tap.Queue,
	// the course's, records each call for the trace.
	qm := newQueueMetrics()
	var queue workqueue.TypedRateLimitingInterface[string] = tap.Queue[string]{Rec: rec,
		TypedRateLimitingInterface: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "pods", MetricsProvider: qm})}
	defer queue.ShutDown()
	pods := factory.Core().V1().Pods().Informer()
	_, err = pods.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if key, err := cache.MetaNamespaceKeyFunc(obj); err == nil {
				queue.Add(key)
			}
		}})
	// !-queue
	if err != nil {
		return err
	}
	// !+slowIndex
	release := make(chan struct{})
	err = pods.AddIndexers(cache.Indexers{"slow": slowIndexFunc(ctx, "slow", release)})
	// !-slowIndex
	if err != nil {
		return err
	}
	factory.StartWithContext(ctx)
	if err := factory.WaitForCacheSyncWithContext(ctx).AsError(); err != nil {
		return err
	}

	// What client-go made for the informer of pods, read as it sets it.
	metrics := informerMetrics.get(name.Name(), corev1.SchemeGroupVersion.WithResource("pods"))
	read := &awaiter{ctx: ctx}
	printSynced(out, read.next(metrics.queued, 2), read.next(metrics.storeRV, 1), read.next(qm.depth, 1))
	if _, err := createPods(ctx, c, "slow"); err != nil {
		return err
	}
	held := read.next(metrics.queued, 2) // slow is queued, popped, and held in its index
	last, err := createPods(ctx, c, "web-2", "web-3", "web-4")
	if err != nil {
		return err
	}
	// web-2..4 wait in the RealFIFO until slow is done, then leave in one batch.
	printQueuedBehind(out, held, read.next(metrics.queued, 3))
	close(release)
	printReleased(out, read.next(metrics.queued, 1), read.next(metrics.storeRV, 2), last.ResourceVersion)
	printAdded(out, read.next(qm.depth, 4), read.count(metrics.latency, 3))

	// !+worker
	for queue.Len() > 0 {
		key, _ := queue.Get()
		queue.Done(key) // a worker's sync would run between Get and Done
		queue.Forget(key)
	}
	// !-worker
	printDrained(out, read.next(qm.depth, 5), qm.adds.count(), qm.latency.count(), qm.workDuration.count())
	cancel()
	factory.Shutdown()
	again, err := cache.NewInformerName("10-lifecycle")
	fmt.Fprintf(out, "  after Shutdown, NewInformerName(%q): error %v\n", again.Name(), err)
	again.Release()
	return read.err
}

// What client-go asks the chapter's InformerMetricsProvider for.
// !+provider
func (p *informerMetricsProvider) NewStoreResourceVersionMetric(id cache.InformerNameAndResource) cache.GaugeMetric {
	return informerGauge{id, p.of(id, true).storeRV}
}

func (p *informerMetricsProvider) NewQueuedItemMetric(id cache.InformerNameAndResource) cache.GaugeMetric {
	return informerGauge{id, p.of(id, false).queued}
}

func (p *informerMetricsProvider) NewProcessingLatencyMetric(id cache.InformerNameAndResource) cache.HistogramMetric {
	return informerGauge{id, p.of(id, false).latency}
}

// !-provider

// informerGauge records values while its informer's name is reserved:
// InformerMetricsProvider asks every metric to check, since an informer
// may stop (and its factory release the name) while the process runs.
// !+gauge
type informerGauge struct {
	id cache.InformerNameAndResource
	s  *series
}

func (g informerGauge) Set(v float64) {
	if g.id.Reserved() {
		g.s.record(v)
	}
}

func (g informerGauge) Observe(v float64) { g.Set(v) }

// !-gauge

// slowHandlerTrace makes client-go log a handler as slow (the conditions
// are in the README). It needs over 1024 notifications, which a server
// would take seconds to make: it runs on a fake clientset, not on c.
func slowHandlerTrace(ctx context.Context, out io.Writer, _ *cluster.Cluster) error {
	fmt.Fprintln(out, "\nStep 3. The slow-handler trace: over 1024 notifications pending, and a call of 100 ms")
	logged, restore := captureKlog("trace=2")
	defer restore()
	const n = 1100
	objs := make([]runtime.Object, n)
	for i := range objs {
		objs[i] = &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprint("pod-", i), Namespace: "default"}}
	}
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() { cancel(); wg.Wait() }()
	// !+slowHandler
	client := fake.NewSimpleClientset(objs...)
	informer := corev1informers.NewPodInformer(client, "default", 0, nil)
	handler := newSlowHandler(ctx, 2, n) // calls 2 and n take 100 ms
	reg, err := informer.AddEventHandler(handler)
	wg.Go(func() { informer.RunWithContext(ctx) })
	// Synced: all notifications wait in the handler's buffer, behind call 1.
	cache.WaitFor(ctx, "", informer.HasSyncedChecker())
	close(handler.gate)
	cache.WaitFor(ctx, "", reg.HasSyncedChecker())
	// !-slowHandler
	if err := errors.Join(err, context.Cause(ctx)); err != nil {
		return err
	}
	printTrace(out, n, logged)
	return nil
}

// handlerLifecycle removes handlers from a running informer, and stops
// one informer of a factory: the factory has no call for that.
func handlerLifecycle(ctx context.Context, out io.Writer, c *cluster.Cluster) error {
	fmt.Fprintln(out, "\nStep 4. Handler lifecycle: RemoveEventHandler, ShutDownEventHandler, IsStopped")
	logger, logged := newLogger()
	ctx, cancel := context.WithCancel(klog.NewContext(ctx, logger))
	factory := informers.NewSharedInformerFactoryWithOptions(c.Client, 0,
		informers.WithNamespace(c.Namespace))
	defer factory.Shutdown()
	defer cancel()
	// audit and report are handlers that only report, through the
	// course's tap. The step holds each inside its OnUpdate calls
	// (audit's first, report's first two) until it lets them go on.
	rec := tap.NewRecorder(ctx)
	audit, report := holdUpdates(rec, "audit", 1), holdUpdates(rec, "report", 2)
	pods := factory.Core().V1().Pods().Informer()
	auditReg, err := pods.AddEventHandler(tap.Handler{Rec: rec, Name: "audit"})
	reportReg, err2 := pods.AddEventHandler(tap.Handler{Rec: rec, Name: "report"})
	if err := errors.Join(err, err2); err != nil {
		return err
	}
	// !+ownContext
	configMaps := factory.Core().V1().ConfigMaps().Informer()
	cmCtx, stopConfigMaps := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { configMaps.RunWithContext(cmCtx) })
	defer func() { stopConfigMaps(); wg.Wait() }()
	cache.WaitFor(ctx, "", configMaps.HasSyncedChecker())
	factory.StartWithContext(ctx)
	// !-ownContext
	if err := printRunTwice(ctx, out, logged); err != nil {
		return err
	}
	if !cache.WaitFor(ctx, "", auditReg.HasSyncedChecker(), reportReg.HasSyncedChecker()) {
		return context.Cause(ctx)
	}

	if _, err := setRelease(ctx, c, "web-2", "v1"); err != nil {
		return err
	}
	if err := show.Sorted(ctx, out, show.Block{Indent: "  ", From: rec.Render(heldLine), N: 2}); err != nil {
		return err
	}
	// !+remove
	err = pods.RemoveEventHandler(auditReg)
	// !-remove
	fmt.Fprintf(out, "  RemoveEventHandler(audit): %v, and audit is still inside OnUpdate\n", err)
	if _, err := setRelease(ctx, c, "web-2", "v2"); err != nil {
		return err
	}
	report.Release()
	audit.Release()
	fmt.Fprintln(out, "  patch web-2 release=v2, let both calls end: report gets v2, audit does not")
	if err := show.Sorted(ctx, out, show.Block{Indent: "  ", From: rec.Render(heldLine), N: 3}); err != nil {
		return err
	}

	// !+shutDown
	shutDown := make(chan error, 1)
	go func() { shutDown <- cache.ShutDownEventHandler(pods, reportReg) }()
	// !-shutDown
	report.Release()
	err = <-shutDown
	printShutDown(out, err, heldSoFar(rec))
	err = cache.ShutDownEventHandler(pods, auditReg)
	printShutDownAtOnce(out, err, heldSoFar(rec))

	// !+noHandler
	created, err := createPods(ctx, c, "web-5")
	if err != nil {
		return err
	}
	err = waitForStore(ctx, pods.GetStore(), created.ResourceVersion)
	_, cached, _ := pods.GetStore().Get(created)
	// !-noHandler
	printNoHandler(out, pods.IsStopped(), cached && err == nil)

	// !+stopOne
	stopConfigMaps()
	wg.Wait()
	again := factory.Core().V1().ConfigMaps().Informer() // the same, stopped
	_, err = again.AddEventHandler(cache.ResourceEventHandlerFuncs{})
	// !-stopOne
	printStoppedOne(out, again.IsStopped(), pods.IsStopped(), err)
	cancel()
	factory.Shutdown()
	fmt.Fprintf(out, "  cancel, Shutdown: pods.IsStopped() %t\n", pods.IsStopped())
	return nil
}

// readYourOwnWrites writes, then reads the lister: at once, it can be
// stale (here for sure: the client holds the event back); once the
// store has reached the write's resourceVersion, not.
func readYourOwnWrites(ctx context.Context, out io.Writer, c *cluster.Cluster) error {
	fmt.Fprintln(out, "\nStep 5. Read your own writes: wait until the store has the write's resourceVersion")
	gates := clientfeatures.FeatureGates()
	printGates(out, gates.Enabled(clientfeatures.InOrderInformers), gates.Enabled(clientfeatures.AtomicFIFO))
	ctx, cancel := context.WithCancel(ctx)
	factory := informers.NewSharedInformerFactoryWithOptions(c.Client, 0,
		informers.WithNamespace(c.Namespace))
	defer factory.Shutdown()
	defer cancel()
	lister := factory.Core().V1().Pods().Lister().Pods(c.Namespace)
	store := factory.Core().V1().Pods().Informer().GetStore()
	factory.StartWithContext(ctx)
	if err := factory.WaitForCacheSyncWithContext(ctx).AsError(); err != nil {
		return err
	}

	// !+readYourWrite
	written, err := setRelease(ctx, c, "web-1", "v1")
	if err != nil {
		return err
	}
	if err := waitForStore(ctx, store, written.ResourceVersion); err != nil {
		return err
	}
	cached, err := lister.Get("web-1")
	// !-readYourWrite
	if err != nil {
		return err
	}
	printRead(out, written, cached)

	// !+readAtOnce
	faults := c.Faults()
	faults.HoldWatches() // what the watch sends now waits in the client's transport
	defer faults.ReleaseWatches()
	printHeld(out)
	if written, err = setRelease(ctx, c, "web-1", "v2"); err != nil {
		return err
	}
	if cached, err = lister.Get("web-1"); err != nil {
		return err
	}
	seen := store.LastStoreSyncResourceVersion()
	order, err := resourceversion.CompareResourceVersion(seen, written.ResourceVersion)
	printAtOnce(out, written, cached, seen, order, err)
	faults.ReleaseWatches()
	if err := waitForStore(ctx, store, written.ResourceVersion); err != nil {
		return err
	}
	// !-readAtOnce
	if cached, err = lister.Get("web-1"); err != nil {
		return err
	}
	printCaughtUp(out, written, store.LastStoreSyncResourceVersion(), cached)
	return nil
}

// !+waitForStore
// waitForStore waits until store has seen resourceVersion rv or a later
// one. The store has no notification for that: it polls.
func waitForStore(ctx context.Context, store cache.Store, rv string) error {
	return wait.PollUntilContextCancel(ctx, 5*time.Millisecond, true,
		func(context.Context) (bool, error) {
			seen := store.LastStoreSyncResourceVersion()
			if seen == "" && !clientfeatures.FeatureGates().Enabled(clientfeatures.AtomicFIFO) {
				return false, errors.New(`with AtomicFIFO off, LastStoreSyncResourceVersion is ""`)
			} else if seen == "" {
				return false, nil // not synced yet
			}
			order, err := resourceversion.CompareResourceVersion(seen, rv)
			return order >= 0, err
		})
}

// !-waitForStore

// setRelease sets a pod's release label, as a controller writes.
func setRelease(ctx context.Context, c *cluster.Cluster, name, release string) (*corev1.Pod, error) {
	patch := fmt.Appendf(nil, `{"metadata":{"labels":{"release":%q}}}`, release)
	return c.Client.CoreV1().Pods(c.Namespace).Patch(ctx, name, types.MergePatchType,
		patch, metav1.PatchOptions{})
}

// createPods creates gated pods (no scheduler or kubelet touches them),
// one after the other, and returns the last as the server answered.
func createPods(ctx context.Context, c *cluster.Cluster, names ...string) (last *corev1.Pod, err error) {
	for _, name := range names {
		pod := fixture.GatedPod(name, cluster.Labels("app", "web"))
		last, err = c.Client.CoreV1().Pods(c.Namespace).Create(ctx, pod, metav1.CreateOptions{})
		if err != nil {
			return nil, err
		}
	}
	return last, nil
}
