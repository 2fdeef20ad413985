// Chapter 03-reflector: Reflector + DeltaFIFO + Store, wired by hand.
//
// An informer without handlers is four parts: a ListWatch that talks to
// the API, a Reflector that turns what the server streams into queue
// operations, a DeltaFIFO that keeps per-object deltas, and a loop that
// pops them into a Store. This chapter wires the four by hand, shows the
// requests the reflector makes (a watch-list, or LIST then WATCH), then
// breaks the watch three times: once it resumes from its last
// resourceVersion, once the re-watch gets 429 and it backs off and
// resumes all the same, once the history is gone (410) and it relists,
// and the DeltaFIFO emits a DeletedFinalStateUnknown tombstone for the
// delete it never saw.
//
// Read alongside (client-go v0.37.2): tools/cache/reflector.go,
// tools/cache/delta_fifo.go, tools/cache/listwatch.go,
// tools/cache/store.go.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	clientfeatures "k8s.io/client-go/features"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/clock"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/informer-walkthrough/informer-walkthrough/internal/apiserver"
	"github.com/informer-walkthrough/informer-walkthrough/internal/cluster"
	"github.com/informer-walkthrough/informer-walkthrough/internal/runner"
)

func main() { cluster.Main("03-reflector", run) }

const (
	// resyncPeriod is read on the reflector's clock, which this chapter
	// controls: step 7 moves it forward instead of waiting.
	resyncPeriod = 30 * time.Second
	// backoff is how long the reflector waits after a 429 before it
	// re-watches (step 5) and after a failed ListAndWatch before the
	// next one (step 6). The default is 0.8-1.6 s and grows; see the
	// README.
	backoff = 10 * time.Millisecond
)

// run is the chapter. Each step prints a heading, then what it saw.
func run(ctx context.Context, out io.Writer, c *cluster.Cluster) error {
	// No step may wait forever: if an expected event never comes, fail
	// with a clear error instead of hanging.
	ctx, cancel := runner.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	pods := c.Client.CoreV1().Pods(c.Namespace)
	// The output below is that of a watch-list start, client-go's
	// default; KUBE_FEATURE_WatchListClient=false would change it.
	if !clientfeatures.FeatureGates().Enabled(clientfeatures.WatchListClient) {
		return errors.New("this chapter expects client-go's WatchListClient " +
			"gate on, its default: unset KUBE_FEATURE_WatchListClient")
	}

	// Step 1. Seed three pods, then wire the pieces and start them. The
	// reflector's first request is a watch-list: the server streams
	// the current pods as ADDED, then a BOOKMARK marking the end of
	// the initial events. Only then does the reflector call
	// fifo.Replace with all of them; the Pop loop applies them.
	fmt.Fprintln(out, "Step 1. Seed 3 pods; wire ListWatch -> Reflector -> "+
		"DeltaFIFO -> Pop loop -> Store")
	for _, name := range []string{"web-1", "web-2", "web-3"} {
		if _, err := pods.Create(ctx, newPod(name), metav1.CreateOptions{}); err != nil {
			return err
		}
	}
	fmt.Fprintln(out, "  created web-1 web-2 web-3")
	c.ResetRequests()

	lw := cache.NewListWatchFromClient(c.Client.CoreV1().RESTClient(),
		"pods", c.Namespace, fields.Everything())
	clk := newResyncClock()
	p := wire(lw, true, cache.ReflectorOptions{
		Name:         "pods",
		ResyncPeriod: resyncPeriod,
		Clock:        clk,
		Backoff:      &wait.Backoff{Duration: backoff},
	})
	p.start(ctx)
	defer p.stop()

	// One new stream, 3 ADDED, 1 BOOKMARK. The reflector gathers the
	// initial ADDED events in a map, so client-go does not define
	// their order: print them sorted (frames 1-3).
	frames, err := p.nextFrames(ctx, 5)
	if err != nil {
		return err
	}
	slices.Sort(frames[1:4])
	printLines(out, "watch", frames)
	// The three Replaced deltas leave the FIFO in the order Replace
	// queued them, which is that same map order: sorted too.
	popped, err := p.nextPops(ctx, 3)
	if err != nil {
		return err
	}
	slices.Sort(popped)
	printLines(out, "pop", popped)
	fmt.Fprintln(out, "  (initial events and their deltas printed sorted: "+
		"client-go does not define their order)")
	fmt.Fprintf(out, "  %-6s %s\n", "store", describeStore(p.store))
	fmt.Fprintf(out, "  fifo.HasSynced()=%t: the first Replace has been popped\n",
		p.fifo.HasSynced())

	// Step 2. The requests. With the WatchListClient gate on (the
	// default since Kubernetes 1.35, client-go v0.35) there is one: a
	// watch that sends the initial state first. A ListerWatcher that says it does not
	// support watch-list semantics gets the old path: LIST from the
	// watch cache (resourceVersion=0), then WATCH from the list's RV.
	fmt.Fprintln(out, "\nStep 2. The requests: a watch-list by default; "+
		"LIST then WATCH when opted out")
	printRequests(out, c.Requests())
	c.ResetRequests()
	classic := wire(lw, false, cache.ReflectorOptions{Name: "pods (list+watch)"})
	classic.start(ctx)
	// Wait for its 3 Replaced deltas and its open WATCH.
	if err := classic.discard(ctx, 1, 3); err != nil {
		return err
	}
	printRequests(out, c.Requests())
	fmt.Fprintf(out, "  %-6s %s\n", "store", describeStore(classic.store))
	classic.stop()
	if err := classic.leftovers(); err != nil {
		return err
	}
	fmt.Fprintln(out, "  (second reflector stopped; the first one's watch stays open)")

	// Step 3. Live changes arrive on the open stream; each event is
	// one delta. A pod's delete is two events (MODIFIED with
	// deletionTimestamp, then DELETED). A Pop hands over all deltas
	// queued for one key, so whether those two come out in one Pop or
	// two depends on timing: print one line per delta.
	fmt.Fprintln(out, "\nStep 3. Live changes: watch events -> deltas -> store")
	fmt.Fprintln(out, "  create web-4; set web-1 Running; delete web-2")
	if err := makeChanges(ctx, c); err != nil {
		return err
	}
	if err := p.show(ctx, out, 4, 4); err != nil {
		return err
	}
	fmt.Fprintf(out, "  %-6s %s\n", "store", describeStore(p.store))

	// Step 4. The server drops the watch. The reflector re-watches at
	// once from the last resourceVersion it saw. The workshop cluster
	// holds that request until we have changed web-3, so the change
	// happens while no watch is open: the server replays it from its
	// history. Nothing is replayed twice, nothing is lost.
	fmt.Fprintln(out, "\nStep 4. Watch dropped: re-watch from the last resourceVersion")
	if !c.Embedded() {
		fmt.Fprintln(out, "  skipped on a real cluster (kube-apiserver cannot drop "+
			"a watch on demand); set web-3 Running without an outage")
		if err := setRunning(ctx, c, "web-3"); err != nil {
			return err
		}
		if err := p.discard(ctx, 1, 1); err != nil {
			return err
		}
	} else {
		c.ResetRequests()
		if err := dropAndHold(ctx, c.Server); err != nil {
			return err
		}
		fmt.Fprintf(out, "  server dropped the watch; it holds the re-watch "+
			"from rv=%s\n", p.reflector.LastSyncResourceVersion())
		fmt.Fprintln(out, "  meanwhile: set web-3 Running; then release the re-watch")
		if err := setRunning(ctx, c, "web-3"); err != nil {
			return err
		}
		c.Server.ReleaseWatches()
		// The new stream replays the one change after rv it asked from.
		frames, err := p.nextFrames(ctx, 2)
		if err != nil {
			return err
		}
		popped, err := p.nextPops(ctx, 1)
		if err != nil {
			return err
		}
		printRequests(out, c.Requests())
		printLines(out, "watch", frames)
		printLines(out, "pop", popped)
	}

	// Step 5. The re-watch gets 429 Too Many Requests. The reflector
	// does not relist: it waits its backoff (on its own clock, which we
	// move forward) and re-watches from the same resourceVersion, in
	// the same ListAndWatch. The change made meanwhile is replayed.
	fmt.Fprintln(out, "\nStep 5. A 429 on the re-watch: back off, re-watch, no relist")
	if !c.Embedded() {
		fmt.Fprintln(out, "  skipped on a real cluster (kube-apiserver cannot answer "+
			"429 on demand); set web-4 Running without an outage")
		if err := setRunning(ctx, c, "web-4"); err != nil {
			return err
		}
		if err := p.discard(ctx, 1, 1); err != nil {
			return err
		}
	} else {
		c.ResetRequests()
		c.Server.InjectFault(apiserver.Fault{Verb: "watch", Resource: "pods", Times: 1,
			Err: apierrors.NewTooManyRequests("Too many requests, please try again later.", 0)})
		c.Server.DropWatches()
		frames, err := p.nextFrames(ctx, 1) // the refused re-watch
		if err != nil {
			return err
		}
		wait, err := clk.waitBackoff(ctx)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "  server dropped the watch; it answers the re-watch "+
			"from rv=%s with 429\n", p.reflector.LastSyncResourceVersion())
		printLines(out, "watch", frames)
		fmt.Fprintf(out, "  reflector backs off %s on its clock; meanwhile: "+
			"set web-4 Running; then the clock moves %s on\n", wait, wait)
		if err := setRunning(ctx, c, "web-4"); err != nil {
			return err
		}
		clk.Step(wait)
		frames, err = p.nextFrames(ctx, 2)
		if err != nil {
			return err
		}
		popped, err := p.nextPops(ctx, 1)
		if err != nil {
			return err
		}
		printRequests(out, c.Requests())
		printLines(out, "watch", frames)
		printLines(out, "pop", popped)
		fmt.Fprintf(out, "  relist requests (LIST or watch-list): %d\n",
			len(relists(c.Requests())))
	}

	// Step 6. The same outage, but while the watch is down web-4 is
	// deleted and the server compacts its history. The held re-watch
	// from the old resourceVersion gets ERROR 410 Expired. The
	// reflector gives up on that ListAndWatch; Run waits its backoff,
	// then lists again (a watch-list from the same resourceVersion).
	// fifo.Replace sees that web-4, which the store still holds, is
	// not in the new list: it queues Deleted with a
	// DeletedFinalStateUnknown tombstone carrying the last known state.
	fmt.Fprintln(out, "\nStep 6. Outage with history compacted: "+
		"410 Expired, relist, tombstone")
	if !c.Embedded() {
		fmt.Fprintln(out, "  skipped on a real cluster (kube-apiserver cannot drop "+
			"a watch and compact on demand); delete web-4 without an outage")
		if err := pods.Delete(ctx, "web-4", metav1.DeleteOptions{}); err != nil {
			return err
		}
		if err := p.discard(ctx, 2, 2); err != nil {
			return err
		}
	} else {
		c.ResetRequests()
		if err := dropAndHold(ctx, c.Server); err != nil {
			return err
		}
		fmt.Fprintf(out, "  server dropped the watch; it holds the re-watch "+
			"from rv=%s\n", p.reflector.LastSyncResourceVersion())
		if err := pods.Delete(ctx, "web-4", metav1.DeleteOptions{}); err != nil {
			return err
		}
		rv := c.Server.CompactHistory()
		fmt.Fprintf(out, "  meanwhile: delete web-4; compact the history to rv=%s; "+
			"then release the re-watch\n", rv)
		// The relist will arm a new resync timer; forget that the old
		// one was armed, so step 7 waits for the new one.
		clk.forgetArmed()
		c.Server.ReleaseWatches()
		// New stream (the re-watch), ERROR 410; new stream (the
		// relist), 2 ADDED in undefined order, the BOOKMARK.
		frames, err := p.nextFrames(ctx, 6)
		if err != nil {
			return err
		}
		slices.Sort(frames[3:5])
		// Replace queues Replaced for each listed pod (map order:
		// sorted here), then the tombstone.
		popped, err := p.nextPops(ctx, 3)
		if err != nil {
			return err
		}
		slices.Sort(popped[:2])
		printRequests(out, c.Requests())
		printLines(out, "watch", frames)
		printLines(out, "pop", popped)
		fmt.Fprintf(out, "  %-6s %s\n", "store", describeStore(p.store))
		same, err := matchesServer(ctx, c, p.store)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "  store matches a fresh LIST from the server: %t\n", same)
	}

	// Step 7. Resync. When the resync timer fires, the reflector
	// calls fifo.Resync, which queues a Sync delta for every object
	// the store knows (and has no delta queued). It comes from
	// memory: the request log stays empty. The timer runs on the
	// reflector's clock, which we move forward instead of waiting.
	fmt.Fprintf(out, "\nStep 7. Resync: the reflector's fake clock moves %s on\n",
		resyncPeriod)
	c.ResetRequests()
	if err := clk.waitArmed(ctx); err != nil {
		return err
	}
	clk.Step(resyncPeriod)
	popped, err = p.nextPops(ctx, 2)
	if err != nil {
		return err
	}
	slices.Sort(popped) // Resync walks the store's keys: map order
	printLines(out, "pop", popped)
	if reqs := c.Requests(); len(reqs) > 0 {
		printRequests(out, reqs)
	} else {
		fmt.Fprintf(out, "  %-6s (none)\n", "req")
	}

	// Step 8. Stop. Cancelling the context ends Reflector.Run (it
	// stops its watch); closing the FIFO makes Pop return
	// ErrFIFOClosed once it is empty, which ends the Pop loop.
	fmt.Fprintln(out, "\nStep 8. Stop: cancel the reflector, close the FIFO")
	p.stop()
	fmt.Fprintln(out, "  reflector: RunWithContext returned")
	fmt.Fprintf(out, "  pop loop:  Pop returned %q\n", p.popErr)
	if err := p.leftovers(); err != nil {
		return err
	}
	fmt.Fprintln(out, "  no watch event or delta left unread")
	return nil
}

// pipeline is an informer without handlers, wired by hand.
type pipeline struct {
	store     cache.Store
	fifo      *cache.DeltaFIFO
	reflector *cache.Reflector

	frames chan string // what the server streamed (from the tap)
	pops   chan string // what the Pop loop applied to the store

	ctx      context.Context
	cancel   context.CancelFunc
	ranDone  chan struct{}
	popDone  chan struct{}
	taps     sync.WaitGroup
	stopOnce sync.Once
	popErr   error
}

// wire builds Store, DeltaFIFO and Reflector around a ListWatch. With
// watchList false, the ListWatch is wrapped to opt out of watch-list.
func wire(lw *cache.ListWatch, watchList bool, opts cache.ReflectorOptions) *pipeline {
	p := &pipeline{
		frames:  make(chan string, 64),
		pops:    make(chan string, 64),
		ranDone: make(chan struct{}),
		popDone: make(chan struct{}),
	}
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

	// The tap only reports the server's events as they pass.
	t := &tap{ListWatch: lw, p: p}
	var src cache.ListerWatcher = t
	if !watchList {
		src = listThenWatch{t}
	}

	// The Reflector: list-and-watch src, write into the FIFO.
	p.reflector = cache.NewReflectorWithOptions(src, &corev1.Pod{}, p.fifo, opts)
	return p
}

// start runs the reflector and the Pop loop, each in a goroutine.
func (p *pipeline) start(ctx context.Context) {
	p.ctx, p.cancel = context.WithCancel(ctx)
	go func() {
		defer close(p.ranDone)
		p.reflector.RunWithContext(p.ctx)
	}()
	go func() {
		defer close(p.popDone)
		p.popLoop()
	}()
}

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
				p.report(p.pops, describeDelta(d, isInInitialList))
			}
			return nil
		})
		if errors.Is(err, cache.ErrFIFOClosed) {
			p.popErr = err
			return
		}
		if err != nil {
			p.report(p.pops, "error "+err.Error())
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

// stop cancels the reflector, waits for it, then closes the FIFO and
// waits for the Pop loop and every tapped stream.
func (p *pipeline) stop() {
	p.stopOnce.Do(func() {
		p.cancel()
		<-p.ranDone
		p.fifo.Close()
		<-p.popDone
		p.taps.Wait()
	})
}

// report hands a line to the chapter; it never blocks a stopped pipeline.
func (p *pipeline) report(ch chan<- string, line string) {
	if p.ctx.Err() != nil {
		return // stopping: a stopped watch may still say why it ended
	}
	select {
	case ch <- line:
	case <-p.ctx.Done():
	}
}

// show prints the next n watch events and m deltas, in arrival order.
func (p *pipeline) show(ctx context.Context, out io.Writer, n, m int) error {
	frames, err := p.nextFrames(ctx, n)
	if err != nil {
		return err
	}
	printLines(out, "watch", frames)
	popped, err := p.nextPops(ctx, m)
	if err != nil {
		return err
	}
	printLines(out, "pop", popped)
	return nil
}

// discard reads n watch events and m deltas without printing them.
func (p *pipeline) discard(ctx context.Context, n, m int) error {
	if _, err := p.nextFrames(ctx, n); err != nil {
		return err
	}
	_, err := p.nextPops(ctx, m)
	return err
}

func (p *pipeline) nextFrames(ctx context.Context, n int) ([]string, error) {
	return next(ctx, p.frames, n, "watch event")
}

func (p *pipeline) nextPops(ctx context.Context, n int) ([]string, error) {
	return next(ctx, p.pops, n, "delta")
}

// leftovers fails if anything arrived that the chapter did not expect:
// a replayed event or a duplicate delta would show up here.
func (p *pipeline) leftovers() error {
	var extra []string
	for len(p.frames) > 0 {
		extra = append(extra, "watch "+<-p.frames)
	}
	for len(p.pops) > 0 {
		extra = append(extra, "pop "+<-p.pops)
	}
	if len(extra) > 0 {
		return fmt.Errorf("unexpected: %s", strings.Join(extra, "; "))
	}
	return nil
}

// next receives n lines, or fails when the context ends first.
func next(ctx context.Context, ch <-chan string, n int, what string) ([]string, error) {
	var got []string
	for len(got) < n {
		select {
		case line := <-ch:
			got = append(got, line)
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for %s %d of %d (got %q): %w",
				what, len(got)+1, n, got, ctx.Err())
		}
	}
	return got, nil
}

// tap is the ListWatch with a window on it: each event the server
// streams is reported before the reflector receives it. It changes
// nothing the reflector does.
type tap struct {
	*cache.ListWatch
	p *pipeline
}

// WatchWithContext is the method the reflector calls (it prefers the
// context-taking forms; ListWatch.Watch is deprecated).
func (t *tap) WatchWithContext(ctx context.Context,
	opts metav1.ListOptions) (watch.Interface, error) {
	w, err := t.ListWatch.WatchWithContext(ctx, opts)
	if err != nil {
		t.p.report(t.p.frames, describeWatchError(err))
		return nil, err
	}
	t.p.report(t.p.frames, "(new stream)")
	tw := &tappedWatch{in: w, out: make(chan watch.Event), stopped: make(chan struct{})}
	t.p.taps.Add(1)
	go func() {
		defer t.p.taps.Done()
		tw.forward(func(ev watch.Event) { t.p.report(t.p.frames, describeEvent(ev)) })
	}()
	return tw, nil
}

// tappedWatch forwards a watch's events, reporting each one first.
type tappedWatch struct {
	in      watch.Interface
	out     chan watch.Event
	stopped chan struct{}
	once    sync.Once
}

func (w *tappedWatch) ResultChan() <-chan watch.Event { return w.out }

func (w *tappedWatch) Stop() {
	w.once.Do(func() {
		close(w.stopped)
		w.in.Stop()
	})
}

func (w *tappedWatch) forward(report func(watch.Event)) {
	defer close(w.out)
	for ev := range w.in.ResultChan() {
		select {
		case <-w.stopped:
			// The reflector stopped this watch and will not read ev
			// (often an ERROR the stream makes up as it is closed).
			return
		default:
		}
		report(ev)
		select {
		case w.out <- ev:
		case <-w.stopped:
			return
		}
	}
}

// listThenWatch opts a ListerWatcher out of watch-list. The reflector
// asks watchlist.DoesClientNotSupportWatchListSemantics when it is
// built; this method is what that function looks for. (Fake clientsets
// answer true the same way, which is why informers over them LIST.)
type listThenWatch struct{ *tap }

func (listThenWatch) IsWatchListSemanticsUnSupported() bool { return true }

// resyncClock is a fake clock for the reflector that also says when the
// reflector arms its resync timer: that is the only timer a reflector
// makes with NewTimer (reflector.go resyncChan). Step 7 waits for it,
// then steps the clock, instead of sleeping for the resync period. It
// also says how long the reflector waits with After: that is its backoff
// before a re-watch after a 429 or a refused connection (step 5).
type resyncClock struct {
	*clocktesting.FakeClock
	armed chan struct{}
	waits chan time.Duration
}

func newResyncClock() *resyncClock {
	return &resyncClock{
		FakeClock: clocktesting.NewFakeClock(apiserver.FixedTime),
		armed:     make(chan struct{}, 1),
		waits:     make(chan time.Duration, 1),
	}
}

func (c *resyncClock) After(d time.Duration) <-chan time.Time {
	ch := c.FakeClock.After(d) // the waiter exists before we tell
	select {
	case c.waits <- d:
	default: // an earlier wait not yet collected
	}
	return ch
}

// waitBackoff returns how long the reflector is waiting on the clock,
// once it waits.
func (c *resyncClock) waitBackoff(ctx context.Context) (time.Duration, error) {
	select {
	case d := <-c.waits:
		return d, nil
	case <-ctx.Done():
		return 0, fmt.Errorf("waiting for the reflector's backoff: %w", ctx.Err())
	}
}

func (c *resyncClock) NewTimer(d time.Duration) clock.Timer {
	t := c.FakeClock.NewTimer(d)
	select {
	case c.armed <- struct{}{}:
	default: // already signalled
	}
	return t
}

func (c *resyncClock) forgetArmed() {
	select {
	case <-c.armed:
	default:
	}
}

func (c *resyncClock) waitArmed(ctx context.Context) error {
	select {
	case <-c.armed:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("waiting for the resync timer: %w", ctx.Err())
	}
}

// dropAndHold stages the start of an outage on the workshop cluster:
// new watch requests will wait unanswered, the open watch ends, and
// dropAndHold returns once the reflector's re-watch is waiting. The
// server has no channel for that, so this is the one place the chapter
// polls, and what it polls is the server's own in-memory counter.
func dropAndHold(ctx context.Context, s *apiserver.Server) error {
	s.HoldWatches()
	s.DropWatches()
	err := wait.PollUntilContextTimeout(ctx, time.Millisecond, 10*time.Second,
		true, func(context.Context) (bool, error) {
			return s.HeldWatches() > 0, nil
		})
	if err != nil {
		return fmt.Errorf("waiting for the re-watch to reach the server: %w", err)
	}
	return nil
}

// makeChanges creates web-4, sets web-1 Running and deletes web-2.
func makeChanges(ctx context.Context, c *cluster.Cluster) error {
	pods := c.Client.CoreV1().Pods(c.Namespace)
	if _, err := pods.Create(ctx, newPod("web-4"), metav1.CreateOptions{}); err != nil {
		return err
	}
	if err := setRunning(ctx, c, "web-1"); err != nil {
		return err
	}
	return pods.Delete(ctx, "web-2", metav1.DeleteOptions{})
}

// setRunning writes a pod's status phase, as a kubelet would: status
// is a subresource, written with one PATCH.
func setRunning(ctx context.Context, c *cluster.Cluster, name string) error {
	_, err := c.Client.CoreV1().Pods(c.Namespace).Patch(ctx, name,
		types.MergePatchType, []byte(`{"status":{"phase":"Running"}}`),
		metav1.PatchOptions{}, "status")
	return err
}

// matchesServer compares the store with a fresh LIST: same pods, same
// resourceVersions.
func matchesServer(ctx context.Context, c *cluster.Cluster,
	store cache.Store) (bool, error) {
	list, err := c.Client.CoreV1().Pods(c.Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return false, err
	}
	var server []string
	for _, p := range list.Items {
		server = append(server, p.Name+"@"+p.ResourceVersion)
	}
	var cached []string
	for _, obj := range store.List() {
		if p, ok := obj.(*corev1.Pod); ok {
			cached = append(cached, p.Name+"@"+p.ResourceVersion)
		}
	}
	slices.Sort(server)
	slices.Sort(cached)
	return slices.Equal(server, cached), nil
}

// newPod is a pod that nothing else will touch: its scheduling gate keeps
// schedulers and kubelets away on a real cluster.
func newPod(name string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:   name,
			Labels: cluster.Labels("app", "web"),
		},
		Spec: corev1.PodSpec{
			SchedulingGates: []corev1.PodSchedulingGate{{Name: "walkthrough/hold"}},
			Containers:      []corev1.Container{{Name: "web", Image: "nginx:1.27"}},
		},
	}
}

// describeEvent prints one watch event: its type, then what it carries.
func describeEvent(ev watch.Event) string {
	switch obj := ev.Object.(type) {
	case *corev1.Pod:
		if ev.Type == watch.Bookmark {
			s := fmt.Sprintf("%-9s rv=%s", ev.Type, obj.ResourceVersion)
			if obj.Annotations[metav1.InitialEventsAnnotationKey] == "true" {
				s += "  " + metav1.InitialEventsAnnotationKey + "=true"
			}
			return s
		}
		return fmt.Sprintf("%-9s %s", ev.Type, describePod("pod/"+obj.Name, obj))
	case *metav1.Status:
		err := apierrors.FromObject(obj)
		return fmt.Sprintf("%-9s %d %s: %s (IsResourceExpired=%t)", ev.Type,
			obj.Code, obj.Reason, obj.Message, apierrors.IsResourceExpired(err))
	default:
		return fmt.Sprintf("%-9s %T", ev.Type, obj)
	}
}

// describeWatchError prints a watch request the server refused: no
// stream was opened, and the reflector got err instead.
func describeWatchError(err error) string {
	if st, ok := err.(apierrors.APIStatus); ok || errors.As(err, &st) {
		s := st.Status()
		return fmt.Sprintf("(no stream) %d %s: %s (IsTooManyRequests=%t)",
			s.Code, s.Reason, s.Message, apierrors.IsTooManyRequests(err))
	}
	return "(no stream) " + err.Error()
}

// relists returns the requests that start a relist: a LIST, or a
// watch-list (a watch that asks for the initial events).
func relists(reqs []apiserver.Request) []apiserver.Request {
	var out []apiserver.Request
	for _, r := range reqs {
		if r.Verb == "list" || r.Query.Get("sendInitialEvents") == "true" {
			out = append(out, r)
		}
	}
	return out
}

// describeDelta prints one delta: its type, the FIFO key, the pod, and
// the isInInitialList flag Pop passed with it.
func describeDelta(d cache.Delta, initial bool) string {
	switch obj := d.Object.(type) {
	case *corev1.Pod:
		return fmt.Sprintf("%-9s %s  initial=%t", d.Type,
			describePod(obj.Namespace+"/"+obj.Name, obj), initial)
	case cache.DeletedFinalStateUnknown:
		last := "unknown"
		if p, ok := obj.Obj.(*corev1.Pod); ok {
			last = fmt.Sprintf("%s rv=%s", p.Status.Phase, p.ResourceVersion)
		}
		return fmt.Sprintf("%-9s %s  DeletedFinalStateUnknown (last known: %s)  initial=%t",
			d.Type, obj.Key, last, initial)
	default:
		return fmt.Sprintf("%-9s %T  initial=%t", d.Type, obj, initial)
	}
}

// describePod prints a pod as a name, its phase and resourceVersion,
// and whether its deletion has begun.
func describePod(name string, p *corev1.Pod) string {
	s := fmt.Sprintf("%s  %-7s  rv=%s", name, p.Status.Phase, p.ResourceVersion)
	if p.DeletionTimestamp != nil {
		s += "  (deletionTimestamp set)"
	}
	return s
}

// describeStore lists the store's pods sorted by key.
func describeStore(store cache.Store) string {
	keys := store.ListKeys()
	slices.Sort(keys)
	var parts []string
	for _, k := range keys {
		obj, ok, err := store.GetByKey(k)
		if p, isPod := obj.(*corev1.Pod); err == nil && ok && isPod {
			parts = append(parts, fmt.Sprintf("%s (%s, rv=%s)",
				p.Name, p.Status.Phase, p.ResourceVersion))
		}
	}
	if len(parts) == 0 {
		return "(empty)"
	}
	return strings.Join(parts, ", ")
}

func printLines(out io.Writer, tag string, lines []string) {
	for _, l := range lines {
		fmt.Fprintf(out, "  %-6s %s\n", tag, l)
	}
}

func printRequests(out io.Writer, reqs []apiserver.Request) {
	for _, r := range reqs {
		fmt.Fprintf(out, "  %-6s %s\n", "req", r)
	}
}
