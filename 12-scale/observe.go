package main

// What the chapter needs to *show* the informers at work, and nothing of
// what it teaches: the --pods and --times flags, the handler that
// reports changes, what each replica of step 3 did, the check of step
// 3's guarantee, and the printing of requests and shards. The informers,
// the selectors, the replicas and every call made on them are in the
// lesson files: firstsync.go, sharding.go and leaderelection.go.

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/sharding"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"

	"github.com/informer-walkthrough/informer-walkthrough/internal/apiserver"
	"github.com/informer-walkthrough/informer-walkthrough/internal/apiserver/shardparse"
	"github.com/informer-walkthrough/informer-walkthrough/internal/cluster"
	"github.com/informer-walkthrough/informer-walkthrough/internal/show"
	"github.com/informer-walkthrough/informer-walkthrough/internal/tap"
	"github.com/informer-walkthrough/informer-walkthrough/internal/trace"
)

// podCount is how many pods the chapter creates: --pods N. The golden
// run uses the default; README's table was measured with larger ones.
var podCount = pods(40)

// showTimes is --times: step 3 prints how long each failover took.
var showTimes bool

// extras is what this chapter adds to every chapter's main: its --pods
// flag, and a workshop cluster with the ShardedListAndWatch gate on
// (kube-apiserver's parser of shardSelector, from shardparse). A real
// cluster has the gate as its administrator set it.
var extras = cluster.Extras{
	Flags: func(fs *flag.FlagSet) {
		fs.Var(&podCount, "pods", "create `N` pods, 1 to 100000 (the README's table used 1000 to 50000)")
		fs.BoolVar(&showTimes, "times", false, "print how long step 3's failovers took (they differ run to run)")
	},
	Server: apiserver.Options{ShardSelectors: shardparse.Parse},
}

// pods is --pods: a number of pods from 1 to 100000.
type pods int

func (p *pods) String() string { return strconv.Itoa(int(*p)) }

func (p *pods) Set(s string) error {
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > 100000 {
		return errors.New("want a number of pods from 1 to 100000")
	}
	*p = pods(n)
	return nil
}

// printSync prints how an informer synced: the requests it made and how
// many pods it holds.
// sawSyncRequests awaits what the informer's tapped ListerWatcher
// records of its first sync: a watch-list's one Watch, or an opted-out
// reflector's List, then its Watch. It is false if ctx ended first.
func sawSyncRequests(ctx context.Context, rec *tap.Recorder, watchList bool) bool {
	calls := 2
	if watchList {
		calls = 1
	}
	_, err := rec.Await(ctx, calls)
	return err == nil
}

func printSync(out io.Writer, watchList bool, held int, reqs []apiserver.Request) {
	how := "LIST, then WATCH"
	if watchList {
		how = "watch-list"
	}
	lines := show.Requests(reqs, show.ListsAndWatches)
	fmt.Fprintf(out, "  %s: synced %d pods; its requests (%d):\n", how, held, len(lines))
	show.Print(out, "    ", lines)
}

// reportChanges reports the updates and deletes an informer of shard i
// sees, as "i update name" and "i delete name".
func reportChanges(i int, lines *show.Lines) cache.ResourceEventHandlerFuncs {
	return cache.ResourceEventHandlerFuncs{
		UpdateFunc: func(_, obj any) {
			if trace.On() {
				trace.Record(trace.Event{Lane: trace.Handlers, Verb: "OnUpdate",
					Text: fmt.Sprintf("shard %d: pod/%s", i, obj.(*corev1.Pod).Name),
					Func: "cache.(*processorListener).run"}, obj)
			}
			lines.Sendf("%d update %s", i, obj.(*corev1.Pod).Name)
		},
		DeleteFunc: func(obj any) {
			key, _ := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
			if trace.On() {
				trace.Record(trace.Event{Lane: trace.Handlers, Verb: "OnDelete",
					Text: fmt.Sprintf("shard %d: %s", i, key),
					Func: "cache.(*processorListener).run"}, obj)
			}
			lines.Sendf("%d delete %s", i, key)
		},
	}
}

// awaitDeleted awaits the reported changes up to the first delete.
func awaitDeleted(ctx context.Context, changes *show.Lines) ([]string, error) {
	var got []string
	for {
		line, err := changes.Await(ctx, 1)
		if err != nil {
			return got, err
		}
		got = append(got, line...)
		if strings.Contains(line[0], " delete ") {
			return got, nil
		}
	}
}

// shardsOf names the shards that reported lines, e.g. "1", or "0 and 2".
func shardsOf(lines []string) string {
	var shards []string
	for _, l := range lines {
		i, _, _ := strings.Cut(l, " ")
		if !slices.Contains(shards, i) {
			shards = append(shards, i)
		}
	}
	return strings.Join(shards, " and ")
}

// printShards prints how many pods each shard's informer holds, checks
// that each pod is in the shard its uid's hash names, and that the
// shards are disjoint and together every pod.
func printShards(out io.Writer, shards []sharding.Selector, stores []cache.Store) error {
	seen := map[string]int{}
	for i, store := range stores {
		objs := store.List()
		for _, obj := range objs {
			pod := obj.(*corev1.Pod)
			if ok, err := shards[i].Matches(pod); err != nil || !ok {
				return fmt.Errorf("shard %d holds %s, whose uid hash %s is not in its range", i, pod.Name, sharding.HashField(string(pod.UID)))
			}
			seen[pod.Name]++
		}
		req := shards[i].Requirements()[0]
		fmt.Fprintf(out, "    shard %d [%s, %s): %d pods\n", i, req.Start, req.End, len(objs))
	}
	twice := 0
	for _, n := range seen {
		if n > 1 {
			twice++
		}
	}
	fmt.Fprintf(out, "    together %d pods, %d in more than one shard: each pod is where its uid's hash is\n", len(seen), twice)
	return nil
}

// printIgnored says that the server ignored the shard selector.
func printIgnored(out io.Writer) error {
	fmt.Fprintln(out, "  the server ignored shardSelector (no metadata.shardInfo): "+
		"its ShardedListAndWatch gate is off, so every shard would hold every pod")
	return nil
}

// printHonoured says that the server honoured it, and how it said so.
func printHonoured(out io.Writer, info *metav1.ShardInfo) {
	fmt.Fprintf(out, "  the server honours shardSelector: its list says shardInfo %q\n", info.Selector)
}

// observed is what one replica of step 3 did: the requests its client
// sent, when it led, released and first reconciled, and how many pods
// it reconciled. It reports on events, which the step awaits.
type observed struct {
	r         *replica
	events    *show.Lines
	guarantee *guaranteeCheck

	mu                   sync.Mutex
	reqs                 []apiserver.Request
	since                int // len(reqs) when it took over
	led, released, first time.Time
	reconciled, done     int // keys taken from the queue, and done
}

func newObserved(ctx context.Context, r *replica, guarantee *guaranteeCheck) *observed {
	// The electors' requests on the Lease come on their retry and renew
	// timers: how many a step sees depends on how long it lasts.
	trace.MarkTimed(func(e trace.Event) bool {
		return (e.Lane == trace.Wire || e.Lane == trace.APIServer) && strings.Contains(e.Text, "leases")
	})
	// A stopping leader's release can conflict with the renewal its stop
	// cancelled, which the server may still have made (client-go says
	// so and retries, leaderelection.go L314-L318): a 409 on some runs.
	trace.MarkMaybe(func(e trace.Event) bool {
		return e.Lane == trace.APIServer && e.Verb == "409" && strings.Contains(e.Text, "update leases")
	})
	return &observed{r: r, events: show.NewLines(ctx), guarantee: guarantee}
}

// tap returns a copy of cfg whose clients log their requests in o,
// apart from the other replica's (c.Requests holds both).
func (o *observed) tap(cfg *rest.Config) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return tapped{rt, o}
	})
	return cfg
}

type tapped struct {
	next http.RoundTripper
	o    *observed
}

func (t tapped) RoundTrip(r *http.Request) (*http.Response, error) {
	if req := apiserver.NewRequest(r); req.Verb != "" {
		t.o.mu.Lock()
		t.o.reqs = append(t.o.reqs, req)
		t.o.mu.Unlock()
	}
	return t.next.RoundTrip(r)
}

// newLeader is the elector's OnNewLeader: "sees replica-a lead".
func (o *observed) newLeader(identity string) { o.events.Sendf("sees %s lead", identity) }

// stoppedLeading is the elector's OnStoppedLeading, called as its Run
// returns: once it has released the Lease, if it held it.
func (o *observed) stoppedLeading() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.released = time.Now()
}

// leading marks the moment the replica took over.
func (o *observed) leading() {
	o.mu.Lock()
	o.since, o.led = len(o.reqs), time.Now()
	o.mu.Unlock()
	o.events.Send("leads")
}

// await awaits the event line want, passing over others (the elector
// calls OnNewLeader on goroutines of its own, in no promised order).
// Taking over takes a RetryPeriod or two (0.1-0.22 s); 10 s is a bound
// that says something went wrong (the elector's log is discarded).
func (o *observed) await(ctx context.Context, want string) error {
	ctx, cancel := context.WithTimeoutCause(ctx, 10*time.Second,
		fmt.Errorf("%s: no %q within 10 s", o.r.name, want))
	defer cancel()
	for {
		line, err := o.events.Await(ctx, 1)
		if err != nil {
			return context.Cause(ctx)
		}
		if line[0] == want {
			return nil
		}
	}
}

// guaranteeCheck checks the guarantee step 3 teaches, across the
// replicas, on every key a worker takes in hand (from the queue's Get
// to its Done, the reconcile between): that its replica held the Lease
// as it took the key, and that no other replica had the same key in
// hand. Leader election alone does not promise either (it has no
// fencing); stopping a replica in order is what keeps both at 0.
type guaranteeCheck struct {
	mu                          sync.Mutex
	inHand                      map[cache.ObjectName]string // key → replica
	total, notLeader, twoAtOnce int
}

func newGuaranteeCheck() *guaranteeCheck {
	return &guaranteeCheck{inHand: map[cache.ObjectName]string{}}
}

// checked wraps a replica's queue so that each key its worker takes is
// checked and traced, from Get to Done: the worker's code stays the
// lesson alone, as chapter 11's recordingQueue keeps its reconciler.
func (o *observed) checked(q workqueue.TypedRateLimitingInterface[cache.ObjectName]) checkedQueue {
	return checkedQueue{q, o}
}

type checkedQueue struct {
	workqueue.TypedRateLimitingInterface[cache.ObjectName]
	o *observed
}

// Get is the queue's Get; a key it hands out is in the replica's hand.
func (q checkedQueue) Get() (cache.ObjectName, bool) {
	key, shutdown := q.TypedRateLimitingInterface.Get()
	if !shutdown {
		q.o.takes(key)
	}
	return key, shutdown
}

// Done is the queue's Done, after the key has left the replica's hand.
func (q checkedQueue) Done(key cache.ObjectName) {
	q.o.leaves(key)
	q.TypedRateLimitingInterface.Done(key)
}

// takes checks that o's replica may take key in hand now.
func (o *observed) takes(key cache.ObjectName) {
	isLeader := o.r.elector.IsLeader()
	// On the trace, the key is the event's, not its text's: a replica
	// reconciles every pod, and the step's lines count them.
	if trace.On() {
		trace.Record(trace.Event{Lane: trace.Workers, Verb: "reconcile",
			Text: fmt.Sprintf("by %s (holds the Lease: %t)", o.r.name, isLeader), Key: key.String()}, nil)
	}
	g := o.guarantee
	g.mu.Lock()
	g.total++
	if !isLeader {
		g.notLeader++
	}
	if other, ok := g.inHand[key]; ok && other != o.r.name {
		g.twoAtOnce++
	}
	g.inHand[key] = o.r.name
	g.mu.Unlock()
	o.mu.Lock()
	if o.reconciled == 0 {
		o.first = time.Now()
	}
	o.reconciled++
	o.mu.Unlock()
}

// leaves records that key has left o's replica's hand; once it has
// reconciled as many keys as there are pods, the step hears of it.
func (o *observed) leaves(key cache.ObjectName) {
	g := o.guarantee
	g.mu.Lock()
	delete(g.inHand, key)
	g.mu.Unlock()
	if trace.On() {
		trace.Record(trace.Event{Lane: trace.Workers, Verb: "done",
			Text: "by " + o.r.name, Key: key.String()}, nil)
	}
	o.mu.Lock()
	o.done++
	all := o.done == int(podCount)
	o.mu.Unlock()
	if all {
		o.events.Send("reconciled")
	}
}

// awaitStandby awaits the moment o's replica sees leader lead, then
// says what it has, as a standby.
func (o *observed) awaitStandby(ctx context.Context, out io.Writer, leader *replica) error {
	if err := o.await(ctx, "sees "+leader.name+" lead"); err != nil {
		return err
	}
	r := o.r
	how := "cold standby: no informer until it leads"
	if r.pods.Informer().HasSynced() {
		how = fmt.Sprintf("warm standby: its informer synced, %d pods cached", len(r.pods.Informer().GetStore().ListKeys()))
	}
	fmt.Fprintf(out, "  %s: %s; no handler, no worker; it sees %s lead\n", r.name, how, leader.name)
	return nil
}

// printReleased says that leader stopped, and whom its elector last saw
// hold the Lease: no one, once it released it.
func printReleased(out io.Writer, leader *replica, holder string) {
	fmt.Fprintf(out, "  stop %s: its worker, then its elector, which released the Lease (holder %q)\n",
		leader.name, holder)
}

// printLeading prints who holds the Lease, as it says, then
// printReconciled.
func (o *observed) printLeading(ctx context.Context, out io.Writer, lease *coordinationv1.Lease, after *replica) error {
	fmt.Fprintf(out, "  %s leads: lease/%s holder %s, leaseTransitions %d\n",
		o.r.name, lease.Name, ptr.Deref(lease.Spec.HolderIdentity, ""), ptr.Deref(lease.Spec.LeaseTransitions, 0))
	return o.printReconciled(ctx, out, after)
}

// printReconciled awaits the replica's reconcile of every pod, then
// prints the lists and watches its client sent since it took over (a
// warm standby's informer needs none), and with --times how long the
// failover from after took.
func (o *observed) printReconciled(ctx context.Context, out io.Writer, after *replica) error {
	// Not the next line: the elector reports on goroutines of its own,
	// in no promised order, so other lines can come first.
	if err := o.await(ctx, "reconciled"); err != nil {
		return err
	}
	o.mu.Lock()
	lines := show.Requests(o.reqs[o.since:], show.ListsAndWatches)
	n, led, first := o.reconciled, o.led, o.first
	o.mu.Unlock()
	fmt.Fprintf(out, "    reconciled %d pods; lists and watches it sent since it took over (%d)", n, len(lines))
	if len(lines) == 0 {
		fmt.Fprint(out, ": none, its informer was warm")
	}
	fmt.Fprintln(out)
	show.Print(out, "      ", lines)
	if showTimes && after != nil {
		after.obs.mu.Lock()
		released := after.obs.released
		after.obs.mu.Unlock()
		ms := func(d time.Duration) string { return fmt.Sprintf("%.0f ms", d.Seconds()*1000) }
		fmt.Fprintf(out, "    (--times) Lease released → %s leads %s → first reconcile %s: %s in all\n",
			o.r.name, ms(led.Sub(released)), ms(first.Sub(led)), ms(first.Sub(released)))
	}
	return nil
}

// print prints what the check found: counts, not claims.
func (g *guaranteeCheck) print(out io.Writer) {
	g.mu.Lock()
	defer g.mu.Unlock()
	fmt.Fprintf(out, "  %d reconciles checked: %d by a replica that did not hold the Lease, %d of a key another replica had in hand\n",
		g.total, g.notLeader, g.twoAtOnce)
}
