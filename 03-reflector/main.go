// Chapter 03-reflector: Reflector + DeltaFIFO + Store, wired by hand.
//
// An informer without handlers is four parts: a ListWatch that talks to
// the API, a Reflector that turns what the server streams into queue
// operations, a DeltaFIFO that keeps per-object deltas, and a loop that
// pops them into a Store. This chapter wires the four by hand, shows the
// requests the reflector makes, then breaks its watch three times: it
// re-watches after a drop, backs off and re-watches after a 429, and
// relists after a 410, when a DeletedFinalStateUnknown tombstone stands
// for the delete it never saw.
//
// Read alongside (client-go v0.37.2): tools/cache/reflector.go,
// delta_fifo.go, listwatch.go, store.go. Beside main.go: tap.go, the
// window on the reflector's ListerWatcher and clock; observe.go, what
// the chapter sees of the pipeline and prints; outage.go, the outages
// of steps 4 to 6, as the workshop cluster stages them.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	clientfeatures "k8s.io/client-go/features"
	"k8s.io/client-go/tools/cache"

	"github.com/informer-walkthrough/informer-walkthrough/internal/cluster"
	"github.com/informer-walkthrough/informer-walkthrough/internal/show"
)

func main() { cluster.Main("03-reflector", run) }

const (
	// resyncPeriod is read on the reflector's clock, which this chapter
	// controls: step 7 moves it forward instead of waiting.
	resyncPeriod = 30 * time.Second
	// backoff is the reflector's wait after a 429 (step 5) and after a
	// failed ListAndWatch (step 6). The default is 0.8-1.6 s, growing.
	backoff = 10 * time.Millisecond
)

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
	clk := newTappedClock(c) // a fake clock (tap.go)
	p := wire(lw, true, cache.ReflectorOptions{
		Name:         "pods",
		ResyncPeriod: resyncPeriod,
		Clock:        clk,
		Backoff:      &wait.Backoff{Duration: backoff},
	})
	p.clock = clk // steps 5 to 7 move it
	defer p.stop()
	// !-wiring

	// The steps, in the order they run; each prints its heading.
	for _, step := range []func(context.Context, io.Writer, *cluster.Cluster, *pipeline) error{
		seedAndStart,     // Step 1
		twoWaysToStart,   // Step 2
		liveChanges,      // Step 3
		rewatchAfterDrop, // Step 4
		backoffAfter429,  // Step 5
		relistAfter410,   // Step 6
		resyncFromMemory, // Step 7
		stopPipeline,     // Step 8
	} {
		if err := step(ctx, out, c, p); err != nil {
			return err
		}
	}
	return nil
}

// pipeline is an informer without handlers, wired by hand: three
// client-go parts and the two goroutines that run them.
type pipeline struct {
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
	p := &pipeline{}
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

	// The Reflector lists and watches through lw (tapped, so that the
	// chapter sees what the server streams) and writes into the FIFO.
	p.tap = &tap{ListWatch: lw}
	var source cache.ListerWatcher = p.tap
	if !watchList {
		source = listThenWatch{p.tap}
	}
	p.reflector = cache.NewReflectorWithOptions(source, &corev1.Pod{}, p.fifo, opts)
	// !-wire
	return p
}

// start runs the reflector and the Pop loop, each in a goroutine
// (wait.Group is how client-go's own controller starts its reflector).
func (p *pipeline) start(ctx context.Context) {
	ctx, p.cancel = context.WithCancel(ctx)
	p.open(ctx) // the lines the tap and the Pop loop report on
	p.running.StartWithContext(ctx, p.reflector.RunWithContext)
	p.popping.Start(p.popLoop)
}

// !+popLoop
// popLoop is what an informer's processing loop does, minus handlers:
// pop the deltas of one key and apply them to the store, oldest first.
func (p *pipeline) popLoop() {
	for {
		_, err := p.fifo.Pop(func(obj any, isInInitialList bool) error {
			deltas, ok := obj.(cache.Deltas)
			if !ok {
				return fmt.Errorf("pop: got %T, not cache.Deltas", obj)
			}
			for _, d := range deltas {
				if err := apply(p.store, d); err != nil {
					return err
				}
				p.popped.Send(describeDelta(d, isInInitialList))
			}
			return nil
		})
		if errors.Is(err, cache.ErrFIFOClosed) {
			p.popErr = err
			return
		}
		if err != nil {
			p.popped.Send("error " + err.Error())
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
	if p.cancel == nil {
		return // never started
	}
	// !+stop
	p.cancel()
	p.running.Wait()
	p.fifo.Close()
	p.popping.Wait()
	// !-stop
	p.tap.wait() // and for every tapped stream
}

// seedAndStart creates three pods, then starts the pipeline. The
// reflector's first request is a watch-list; after its end bookmark the
// reflector calls fifo.Replace with all the pods it streamed.
func seedAndStart(ctx context.Context, out io.Writer, c *cluster.Cluster, p *pipeline) error {
	fmt.Fprintln(out, "Step 1. Seed 3 pods; wire ListWatch -> Reflector -> DeltaFIFO -> Pop loop -> Store")
	pods := c.Client.CoreV1().Pods(c.Namespace)
	for _, name := range []string{"web-1", "web-2", "web-3"} {
		pod := show.GatedPod(name, cluster.Labels("app", "web"))
		if _, err := pods.Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			return err
		}
	}
	fmt.Fprintln(out, "  created web-1 web-2 web-3")
	c.ResetRequests()
	p.start(ctx)

	// One new stream, 3 ADDED, 1 BOOKMARK; then 3 Replaced deltas.
	if err := p.printInitialList(ctx, out, 5, 3); err != nil {
		return err
	}
	fmt.Fprintf(out, "  fifo.HasSynced()=%t: the first Replace has been popped\n", p.fifo.HasSynced())
	return nil
}

// twoWaysToStart shows step 1's one request, a watch-list; then a
// second reflector, opted out of watch-list, makes the old two: LIST
// (resourceVersion=0), then WATCH from the list's resourceVersion.
func twoWaysToStart(ctx context.Context, out io.Writer, c *cluster.Cluster, p *pipeline) error {
	fmt.Fprintln(out, "\nStep 2. The requests: a watch-list by default; LIST then WATCH when opted out")
	classic := wire(p.tap.ListWatch, false, cache.ReflectorOptions{Name: "pods (list+watch)"})
	classic.start(ctx)
	defer classic.stop()
	// Once its WATCH is open and its 3 Replaced deltas are popped: the
	// requests since step 1 started the first reflector, and its store.
	if err := classic.printRequestsAndStore(ctx, out, c, 1, 3); err != nil {
		return err
	}
	classic.stop()
	fmt.Fprintln(out, "  (second reflector stopped; the first one's watch stays open)")
	return classic.leftovers()
}

// !+optOut
// listThenWatch opts the (tapped) ListWatch out of watch-list. The
// reflector asks watchlist.DoesClientNotSupportWatchListSemantics when
// it is built; this method is what that function looks for. (Fake
// clientsets answer true the same way: informers over them LIST.)
type listThenWatch struct{ *tap }

func (listThenWatch) IsWatchListSemanticsUnSupported() bool {
	return true
}

// !-optOut

// liveChanges makes changes while the stream is open: each event is one
// delta (a pod's delete is two events: MODIFIED, then DELETED).
func liveChanges(ctx context.Context, out io.Writer, c *cluster.Cluster, p *pipeline) error {
	fmt.Fprintln(out, "\nStep 3. Live changes: watch events -> deltas -> store")
	fmt.Fprintln(out, "  create web-4; set web-1 Running; delete web-2")
	pods := c.Client.CoreV1().Pods(c.Namespace)
	pod := show.GatedPod("web-4", cluster.Labels("app", "web"))
	if _, err := pods.Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		return err
	}
	if err := setRunning(ctx, c, "web-1"); err != nil {
		return err
	}
	if err := pods.Delete(ctx, "web-2", metav1.DeleteOptions{}); err != nil {
		return err
	}
	return p.printNextAndStore(ctx, out, 4, 4)
}

// rewatchAfterDrop has the server drop the watch. The reflector
// re-watches at once from the last resourceVersion it saw, and the
// server replays the change made while no watch was open.
func rewatchAfterDrop(ctx context.Context, out io.Writer, c *cluster.Cluster, p *pipeline) error {
	fmt.Fprintln(out, "\nStep 4. Watch dropped: re-watch from the last resourceVersion")
	// The server drops the watch and holds the re-watch (outage.go).
	if err := p.stageDropAndHold(ctx, out, c); err != nil {
		return err
	}
	if err := setRunning(ctx, c, "web-3"); err != nil {
		return err
	}
	// It releases the re-watch: the new stream replays the one change
	// after the rv it asked from.
	return p.stageRelease(ctx, out, c, "set web-3 Running")
}

// backoffAfter429 drops the watch, and the server answers the re-watch
// with 429: no stream. The reflector does not relist: it waits its
// backoff on its own clock, then re-watches from the same
// resourceVersion, and the change made meanwhile is replayed.
func backoffAfter429(ctx context.Context, out io.Writer, c *cluster.Cluster, p *pipeline) error {
	fmt.Fprintln(out, "\nStep 5. A 429 on the re-watch: back off, re-watch, no relist")
	// The server drops the watch and answers the re-watch with 429; the
	// reflector now waits delay on its clock (outage.go).
	delay, err := p.stageRefusedRewatch(ctx, out, c)
	if err != nil {
		return err
	}
	if err := setRunning(ctx, c, "web-4"); err != nil {
		return err
	}
	p.clock.Step(delay)
	// The re-watch replays web-4's change: one Updated, no Replaced.
	return p.printRewatch(ctx, out, c, "set web-4 Running", delay)
}

// relistAfter410 stages step 4's outage, but deletes web-4 and compacts
// the history meanwhile: the re-watch gets ERROR 410 Expired, and after
// its backoff the reflector lists again. fifo.Replace finds web-4 gone
// and queues a Deleted carrying a DeletedFinalStateUnknown tombstone.
func relistAfter410(ctx context.Context, out io.Writer, c *cluster.Cluster, p *pipeline) error {
	fmt.Fprintln(out, "\nStep 6. Outage with history compacted: 410 Expired, relist, tombstone")
	if err := p.stageDropAndHold(ctx, out, c); err != nil {
		return err
	}
	pods := c.Client.CoreV1().Pods(c.Namespace)
	if err := pods.Delete(ctx, "web-4", metav1.DeleteOptions{}); err != nil {
		return err
	}
	// The server compacts its history past the delete, then releases the
	// re-watch: ERROR 410, then a relist, whose Replace queues a Replaced
	// per pod and the tombstone.
	return p.stageCompactAndRelease(ctx, out, c, "delete web-4")
}

// resyncFromMemory moves the reflector's clock past the resync period:
// the reflector calls fifo.Resync, which queues a Sync delta for every
// object the store knows. No request.
func resyncFromMemory(ctx context.Context, out io.Writer, c *cluster.Cluster, p *pipeline) error {
	fmt.Fprintln(out, "\nStep 7. Resync: the reflector's fake clock moves 30s on")
	c.ResetRequests()
	if err := p.clock.awaitArmed(ctx); err != nil {
		return err
	}
	p.clock.Step(resyncPeriod)
	return p.printNextAndRequests(ctx, out, c, 0, 2)
}

// stopPipeline stops the pipeline and checks that nothing arrived that
// the chapter did not expect.
func stopPipeline(_ context.Context, out io.Writer, _ *cluster.Cluster, p *pipeline) error {
	fmt.Fprintln(out, "\nStep 8. Stop: cancel the reflector, close the FIFO")
	p.stop()
	fmt.Fprintln(out, "  reflector: RunWithContext returned")
	fmt.Fprintf(out, "  pop loop:  Pop returned %q\n", p.popErr)
	return p.printLeftovers(out)
}

// setRunning writes a pod's status phase, as a kubelet would: status
// is a subresource, written with one PATCH.
func setRunning(ctx context.Context, c *cluster.Cluster, name string) error {
	_, err := c.Client.CoreV1().Pods(c.Namespace).Patch(ctx, name,
		types.MergePatchType, []byte(`{"status":{"phase":"Running"}}`),
		metav1.PatchOptions{}, "status")
	return err
}
