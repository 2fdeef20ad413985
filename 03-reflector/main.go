// Chapter 03-reflector: Reflector + DeltaFIFO + Store, wired by hand.
//
// An informer without handlers is four parts: a ListWatch that talks to
// the API, a Reflector that turns what the server streams into queue
// operations, a queue of the changes, and a loop that pops them into a
// Store. A v0.37 informer always builds that queue as a RealFIFO
// (InOrderInformers is GA and locked on: tools/cache/controller.go
// newQueueFIFO). This chapter wires the four by hand with a DeltaFIFO,
// the queue informers used before, which keeps per-object deltas, so
// that what each reflector call does to a queue shows key by key. It
// shows the requests the reflector makes, then breaks its watch three
// times, from the chapter's own client, so that it happens alike on any
// cluster: the reflector resumes after its watch ends, backs off and
// resumes after a 429, and relists after a 410, when a
// DeletedFinalStateUnknown tombstone stands for the delete it never saw.
//
// Read alongside (client-go v0.37.2): tools/cache/reflector.go,
// delta_fifo.go, listwatch.go, store.go; rest/request.go for the 429.
// Beside main.go: observe.go, what the chapter sees of the pipeline and
// prints, through the course's taps (internal/tap) on its ListerWatcher
// and on its fake clock, and the faults it stages.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	clientfeatures "k8s.io/client-go/features"
	"k8s.io/client-go/tools/cache"

	"github.com/informer-walkthrough/informer-walkthrough/internal/cluster"
	"github.com/informer-walkthrough/informer-walkthrough/internal/fixture"
	"github.com/informer-walkthrough/informer-walkthrough/internal/tap"
)

func main() { cluster.Main("03-reflector", run) }

// resyncPeriod is read on the reflector's clock, which this chapter
// controls: step 7 moves it forward instead of waiting.
const resyncPeriod = 30 * time.Second

// backoff is the reflector's wait after a 429 (step 5) and after a
// failed ListAndWatch (step 6). The default is 0.8-1.6 s, growing.
const backoff = 10 * time.Millisecond

// run is the chapter: it wires the pipeline, then runs the steps, each
// printing a heading, then what it saw.
func run(ctx context.Context, out io.Writer, c *cluster.Cluster) error {
	// The output is that of a watch-list start, client-go's default;
	// KUBE_FEATURE_WatchListClient=false would change it.
	if !clientfeatures.FeatureGates().Enabled(clientfeatures.WatchListClient) {
		return errors.New("this chapter expects client-go's WatchListClient " +
			"gate on, its default: unset KUBE_FEATURE_WatchListClient")
	}

	// !+wiring
	lw := cache.NewListWatchFromClient(c.Client.CoreV1().RESTClient(),
		"pods", c.Namespace, fields.Everything())
	p := wire(lw, true, cache.ReflectorOptions{
		Name:         "pods",
		ResyncPeriod: resyncPeriod,
		Clock:        newClock(), // a fake clock, tapped (observe.go)
		Backoff:      &wait.Backoff{Duration: backoff},
	})
	defer p.stop()
	// !-wiring

	// The steps, in the order they run; each prints its heading.
	// Step 1. Seed pods; start the pipeline: a watch-list.
	if err := seedAndStart(ctx, out, c, p); err != nil {
		return err
	}
	// Step 2. A second reflector, opted out: LIST, then WATCH.
	if err := twoWaysToStart(ctx, out, c, p); err != nil {
		return err
	}
	// Step 3. Changes over the open watch.
	if err := liveChanges(ctx, out, c, p); err != nil {
		return err
	}
	// Step 4. The watch ends; the reflector resumes.
	if err := resumeAfterEnd(ctx, out, c, p); err != nil {
		return err
	}
	// Step 5. The resume gets a 429; the reflector backs off.
	if err := backoffAfter429(ctx, out, c, p); err != nil {
		return err
	}
	// Step 6. The resume gets a 410; the reflector relists.
	if err := relistAfter410(ctx, out, c, p); err != nil {
		return err
	}
	// Step 7. The resync timer fires.
	if err := resyncFromMemory(ctx, out, c, p); err != nil {
		return err
	}
	// Step 8. Stop.
	return stopPipeline(out, c, p)
}

// pipeline is an informer without handlers, wired by hand: three
// client-go parts and the two goroutines that run them.
type pipeline struct {
	listWatch *cache.ListWatch // what it lists and watches through
	store     cache.Store
	fifo      *cache.DeltaFIFO
	reflector *cache.Reflector
	cancel    context.CancelFunc
	running   wait.Group // RunWithContext
	popping   wait.Group // the Pop loop
	window               // what the chapter sees of it (observe.go)
}

// wire builds Store, DeltaFIFO and Reflector around a ListWatch. With
// watchList false, the ListWatch opts out of watch-list.
func wire(lw *cache.ListWatch, watchList bool, opts cache.ReflectorOptions) *pipeline {
	p := &pipeline{listWatch: lw, cancel: func() {}} // until start
	// !+wire
	// The Store is what the consumer knows. Its key function unwraps
	// DeletedFinalStateUnknown, so a tombstone deletes the right key.
	p.store = cache.NewStore(cache.DeletionHandlingMetaNamespaceKeyFunc)

	// The DeltaFIFO queues deltas per key. KnownObjects is the store:
	// on Replace it is how the FIFO finds objects that vanished.
	// EmitDeltaTypeReplaced makes a relist say Replaced, not Sync.
	p.fifo = cache.NewDeltaFIFOWithOptions(cache.DeltaFIFOOptions{
		KnownObjects:          p.store,
		EmitDeltaTypeReplaced: true,
	})

	// The Reflector lists and watches through lw, tapped so that the
	// chapter sees each call and what each stream carries (the tap
	// records them once the pipeline starts), and writes into the FIFO.
	p.lw = tap.NewListerWatcher(lw, nil)
	p.lw.Streams = true
	var source cache.ListerWatcher = p.lw
	if !watchList {
		source = listThenWatch{p.lw}
	}
	p.reflector = cache.NewReflectorWithOptions(source, &corev1.Pod{}, p.fifo, opts)
	// !-wire
	p.clock, _ = opts.Clock.(*tap.Clock) // steps 5 to 7 move it
	return p
}

// start runs the reflector and the Pop loop, each in a goroutine
// (wait.Group is how client-go's own controller starts its reflector).
func (p *pipeline) start(ctx context.Context) {
	ctx, p.cancel = context.WithCancel(ctx)
	p.open(ctx) // what the tap and the Pop loop report to
	p.running.StartWithContext(ctx, p.reflector.RunWithContext)
	p.popping.Start(func() { p.popErr = p.popLoop() })
}

// !+popLoop
// popLoop is what an informer's processing loop does, minus handlers:
// pop the deltas of one key and apply them to the store, oldest first.
// It returns ErrFIFOClosed once the FIFO is closed and empty. (observed,
// in observe.go, reports each delta once it is applied.)
func (p *pipeline) popLoop() error {
	for {
		_, err := p.fifo.Pop(p.observed(func(obj any, isInInitialList bool) error {
			deltas, ok := obj.(cache.Deltas)
			if !ok {
				return fmt.Errorf("pop: got %T, not cache.Deltas", obj)
			}
			for _, d := range deltas {
				if err := apply(p.store, d); err != nil {
					return err
				}
			}
			return nil
		}))
		if errors.Is(err, cache.ErrFIFOClosed) {
			return err
		}
	}
}

// apply writes one delta to the store, as controller.go's processDeltas
// does: Deleted removes (tombstones too); anything else adds or updates.
func apply(store cache.Store, d cache.Delta) error {
	if d.Type == cache.Deleted {
		return store.Delete(d.Object)
	}
	if _, exists, err := store.Get(d.Object); err == nil && exists {
		return store.Update(d.Object)
	}
	return store.Add(d.Object)
}

// !-popLoop

// stop cancels the reflector and waits for RunWithContext to return (it
// stops its watch), then closes the FIFO, which makes Pop return
// ErrFIFOClosed once the queue is empty, and waits for the Pop loop.
// Each of these may be done twice: run stops the pipeline on its way
// out even when step 8 has stopped it.
func (p *pipeline) stop() {
	// !+stop
	p.cancel()
	p.running.Wait()
	p.fifo.Close()
	p.popping.Wait()
	// !-stop
	p.lw.Wait() // and for every tapped stream
}

// seedAndStart creates three pods, then starts the pipeline. The
// reflector's first request is a watch-list; after its end bookmark the
// reflector calls fifo.Replace with all the pods it streamed.
func seedAndStart(ctx context.Context, out io.Writer, c *cluster.Cluster, p *pipeline) error {
	fmt.Fprintln(out, "Step 1. Seed 3 pods; wire ListWatch -> Reflector -> DeltaFIFO -> Pop loop -> Store")
	pods := c.Client.CoreV1().Pods(c.Namespace)
	for _, name := range []string{"web-1", "web-2", "web-3"} {
		pod := fixture.GatedPod(name, cluster.Labels("app", "web"))
		if _, err := pods.Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			return err
		}
	}
	fmt.Fprintln(out, "  created web-1 web-2 web-3")
	c.ResetRequests()
	p.start(ctx)

	// One request, one new stream: 3 ADDED, 1 BOOKMARK; then 3
	// Replaced deltas.
	if err := p.printRequestsAndPipeline(ctx, out, c, 5, 3); err != nil {
		return err
	}
	fmt.Fprintln(out, "  (initial events and their deltas printed sorted: client-go does not define their order)")
	fmt.Fprintf(out, "  fifo.HasSynced()=%t: the first Replace has been popped\n", p.fifo.HasSynced())
	return nil
}

// twoWaysToStart wires a second reflector over the same ListWatch, but
// opted out of watch-list: where step 1's made one request, it makes
// the old two, LIST (resourceVersion=0), then WATCH from the list's
// resourceVersion.
func twoWaysToStart(ctx context.Context, out io.Writer, c *cluster.Cluster, p *pipeline) error {
	startStep(out, c, "Step 2. Opted out of watch-list: LIST, then WATCH from the list's resourceVersion")
	classic := wire(p.listWatch, false, cache.ReflectorOptions{Name: "pods (list+watch)"})
	classic.start(ctx)
	defer classic.stop()
	// Its two requests; its WATCH opening, and the 3 Replaced deltas
	// its LIST made. It set its resourceVersion before it opened the
	// WATCH.
	if err := classic.printRequestsAndPipeline(ctx, out, c, 1, 3); err != nil {
		return err
	}
	fmt.Fprintf(out, "  reflector.LastSyncResourceVersion()=%s: the LIST's\n", classic.reflector.LastSyncResourceVersion())
	classic.stop()
	fmt.Fprintln(out, "  (second reflector stopped; the first one's watch stays open)")
	return classic.leftovers()
}

// !+optOut
// listThenWatch opts the (tapped) ListWatch out of watch-list. The
// reflector asks watchlist.DoesClientNotSupportWatchListSemantics when
// it is built; this method is what that function looks for. (Fake
// clientsets answer true the same way: informers over them LIST.)
type listThenWatch struct{ *tap.ListerWatcher }

func (listThenWatch) IsWatchListSemanticsUnSupported() bool {
	return true
}

// !-optOut

// liveChanges makes changes while the stream is open: each event is one
// delta (a pod's delete is two events: MODIFIED, then DELETED).
func liveChanges(ctx context.Context, out io.Writer, c *cluster.Cluster, p *pipeline) error {
	startStep(out, c, "Step 3. Live changes: watch events -> deltas -> store")
	fmt.Fprintln(out, "  create web-4; set web-1 Running; delete web-2")
	pods := c.Client.CoreV1().Pods(c.Namespace)
	pod := fixture.GatedPod("web-4", cluster.Labels("app", "web"))
	if _, err := pods.Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		return err
	}
	if err := setRunning(ctx, c, "web-1"); err != nil {
		return err
	}
	if err := pods.Delete(ctx, "web-2", metav1.DeleteOptions{}); err != nil {
		return err
	}
	return p.printPipeline(ctx, out, 4, 4)
}

// resumeAfterEnd has the client end the reflector's watch while a
// change is on its way, so that the change is lost with the stream. The
// reflector watches again at once, from the resourceVersion of the last
// event it saw, and the server replays the change from its history.
func resumeAfterEnd(ctx context.Context, out io.Writer, c *cluster.Cluster, p *pipeline) error {
	startStep(out, c, "Step 4. Watch ended: resume from the last resourceVersion, nothing lost")
	p.holdWatch(out, c, "set web-3 Running") // observe.go, as endWatch
	if err := setRunning(ctx, c, "web-3"); err != nil {
		return err
	}
	p.endWatch(out, c, nil, "")
	// The stream's end; the resume from that resourceVersion; web-3's
	// change, replayed: one Updated.
	if err := p.printRequestsAndPipeline(ctx, out, c, 3, 1); err != nil {
		return err
	}
	same, err := matchesServer(ctx, c, p.store)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "  store matches a fresh LIST from the server: %t\n", same)
	return nil
}

// backoffAfter429 has the client end the watch and answer the resume
// with 429 itself, with no Retry-After (with one, the rest client would
// wait and retry, and the reflector never see the 429). The reflector
// does not relist: it waits its backoff on its own clock, then resumes
// from the same resourceVersion, and the change made meanwhile is
// replayed.
func backoffAfter429(ctx context.Context, out io.Writer, c *cluster.Cluster, p *pipeline) error {
	startStep(out, c, "Step 5. A 429 on the resume: back off, resume, no relist")
	// !+answer429
	tooMany := apierrors.NewTooManyRequests("Too many requests, please try again later.", 0)
	p.endWatch(out, c, tooMany, "as API Priority and Fairness would, but with no Retry-After")
	delay, err := p.awaitBackoff(ctx) // the reflector waits in its clock's After
	if err != nil {
		return err
	}
	// While it waits, its resourceVersion is the one it resumes from.
	fmt.Fprintf(out, "  reflector.LastSyncResourceVersion()=%s\n", p.reflector.LastSyncResourceVersion())
	if err := setRunning(ctx, c, "web-4"); err != nil {
		return err
	}
	p.endBackoff() // its After returns
	// !-answer429
	fmt.Fprintf(out, "  reflector backs off %s on its clock; meanwhile: set web-4 Running\n", delay)
	// The stream's end, the 429, the resume: web-4's change, replayed.
	if err := p.printRequestsAndPipeline(ctx, out, c, 4, 1); err != nil {
		return err
	}
	fmt.Fprintf(out, "  relist requests (LIST or watch-list): %d\n", len(relists(c.Requests())))
	same, err := matchesServer(ctx, c, p.store)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "  store matches a fresh LIST from the server: %t\n", same)
	return nil
}

// relistAfter410 has the client hold the watch while web-4 is deleted,
// then end it, so that the delete is lost, and answer the resume with
// 410 Expired, as a server answers a watch from a resourceVersion it no
// longer has. After its backoff the reflector lists again (a
// watch-list); fifo.Replace finds web-4 gone and queues a Deleted
// carrying a DeletedFinalStateUnknown tombstone.
func relistAfter410(ctx context.Context, out io.Writer, c *cluster.Cluster, p *pipeline) error {
	startStep(out, c, "Step 6. A 410 on the resume: relist, and a tombstone for the missed delete")
	p.holdWatch(out, c, "delete web-4")
	pods := c.Client.CoreV1().Pods(c.Namespace)
	if err := pods.Delete(ctx, "web-4", metav1.DeleteOptions{}); err != nil {
		return err
	}
	// !+answer410
	expired := apierrors.NewResourceExpired("too old resource version")
	p.endWatch(out, c, expired, "as a server does for a resourceVersion older than its window")
	// !-answer410
	// The stream's end, the 410; after the backoff, the watch-list: a
	// new stream, 2 ADDED, the BOOKMARK. Replace queues a Replaced per
	// pod, and the tombstone.
	if err := p.printRequestsAndPipeline(ctx, out, c, 7, 3); err != nil {
		return err
	}
	// Once the relist is done, the reflector arms a new resync timer.
	if err := p.awaitResyncTimer(ctx); err != nil {
		return err
	}
	fmt.Fprintf(out, "  reflector.LastSyncResourceVersion()=%s: the bookmark's\n", p.reflector.LastSyncResourceVersion())
	same, err := matchesServer(ctx, c, p.store)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "  store matches a fresh LIST from the server: %t\n", same)
	return nil
}

// matchesServer compares the store with a fresh LIST: the same pods, at
// the same resourceVersions.
func matchesServer(ctx context.Context, c *cluster.Cluster, store cache.Store) (bool, error) {
	list, err := c.Client.CoreV1().Pods(c.Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return false, err
	}
	if len(list.Items) != len(store.ListKeys()) {
		return false, nil
	}
	for _, pod := range list.Items {
		obj, exists, err := store.Get(&pod)
		cached, isPod := obj.(*corev1.Pod)
		if err != nil || !exists || !isPod || cached.ResourceVersion != pod.ResourceVersion {
			return false, err
		}
	}
	return true, nil
}

// resyncFromMemory moves the reflector's clock past the resync period:
// the reflector calls fifo.Resync, which queues a Sync delta for every
// object the store knows. No request.
func resyncFromMemory(ctx context.Context, out io.Writer, c *cluster.Cluster, p *pipeline) error {
	startStep(out, c, "Step 7. Resync: the reflector's fake clock moves 30s on")
	p.clock.Step(resyncPeriod) // the timer step 6 saw armed fires
	if err := p.printRequestsAndPipeline(ctx, out, c, 0, 2); err != nil {
		return err
	}
	// After the resync the reflector arms its next timer: the step
	// ends once it has, not before or after as its goroutine runs.
	return p.awaitResyncTimer(ctx)
}

// stopPipeline stops the pipeline and checks that nothing arrived that
// the chapter did not expect.
func stopPipeline(out io.Writer, c *cluster.Cluster, p *pipeline) error {
	startStep(out, c, "Step 8. Stop: cancel the reflector, close the FIFO")
	p.stop()
	fmt.Fprintf(out, "  fifo.IsClosed()=%t\n", p.fifo.IsClosed())
	fmt.Fprintf(out, "  store still holds %d pods: stopping does not empty it\n", len(p.store.ListKeys()))
	return p.printStopped(out)
}

// setRunning writes a pod's status phase, as a kubelet would: status
// is a subresource, and a kubelet PATCHes it with a strategic merge
// patch of what changed (kubernetes pkg/util/pod PatchPodStatus).
func setRunning(ctx context.Context, c *cluster.Cluster, name string) error {
	_, err := c.Client.CoreV1().Pods(c.Namespace).Patch(ctx, name,
		types.StrategicMergePatchType, []byte(`{"status":{"phase":"Running"}}`),
		metav1.PatchOptions{}, "status")
	return err
}
