package main

// What the chapter needs to *show* the informers at work, and nothing of
// what it teaches: the --pods and --times flags; what the shared taps
// (internal/tap) record of step 2's handlers and step 3's replicas,
// rendered as the lines printed, with the check of step 3's guarantee;
// and the printing of requests and shards. The informers, the
// selectors, the replicas and every call made on them are in the lesson
// files: firstsync.go, sharding.go and leaderelection.go.

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/sharding"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/leaderelection"
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

// printSync prints how an informer synced: the requests it made and how
// many pods it holds.
func printSync(out io.Writer, watchList bool, held int, reqs []apiserver.Request) {
	how := "LIST, then WATCH"
	if watchList {
		how = "watch-list"
	}
	lines := show.Requests(reqs, show.ListsAndWatches)
	fmt.Fprintf(out, "  %s: synced %d pods; its requests (%d):\n", how, held, len(lines))
	show.Print(out, "    ", lines)
}

// awaitDeleted awaits the shards' handlers' calls up to the first
// OnDelete, and returns the OnUpdates and OnDeletes among them (the
// OnAdds of the initial lists may still be coming meanwhile).
func awaitDeleted(ctx context.Context, rec *tap.Recorder) ([]tap.HandlerCall, error) {
	var changes []tap.HandlerCall
	for {
		e, err := rec.Next(ctx)
		if err != nil {
			return changes, err
		}
		call, ok := e.(tap.HandlerCall)
		if !ok || call.Method == "OnAdd" {
			continue
		}
		changes = append(changes, call)
		if call.Method == "OnDelete" {
			return changes, nil
		}
	}
}

// handlersOf names the handlers called, e.g. "shard 1", or "shard 0 and
// shard 2".
func handlersOf(calls []tap.HandlerCall) string {
	var names []string
	for _, c := range calls {
		if !slices.Contains(names, c.Handler) {
			names = append(names, c.Handler)
		}
	}
	return strings.Join(names, " and ")
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

// replicas is what step 3's replicas did, as their taps recorded it.
// Each replica's client, queue and elector callbacks record into one
// recorder, Named for the replica, so that the step sees the calls of
// every replica in the order they were made. The step awaits them here;
// each event it passes on the way is added to what its replica did
// (observed) and to the check of the step's guarantee.
type replicas struct {
	rec      *tap.Recorder
	replicas map[*tap.Recorder]*observed // by the replica's Named recorder
	// The guarantee step 3 teaches, checked on every key a worker takes
	// in hand (from the queue's Get to its Done, the reconcile between):
	// that its replica led as it took the key, and that no other replica
	// had the same key in hand. Leader election alone promises neither
	// (it has no fencing); stopping a replica in order is what keeps
	// both at 0.
	inHand                      map[cache.ObjectName]*observed
	total, notLeader, twoAtOnce int
}

func newReplicas(ctx context.Context) *replicas {
	// The electors' requests on the Lease come on their retry and renew
	// timers: how many a step sees depends on how long it lasts.
	trace.MarkTimed(func(e trace.Event) bool {
		return (e.Lane == trace.Wire || e.Lane == trace.APIServer || e.Lane == trace.Workers) &&
			strings.Contains(e.Text, "leases")
	})
	// A stopping leader's release can conflict with the renewal its stop
	// cancelled, which the server may still have made (client-go says
	// so and retries, leaderelection.go L314-L318): a 409 on some runs.
	// The replica's client records the 409 too, or, if the cancelled
	// renewal had not been answered, a request that failed. A standby
	// whose try meets that race, or another, may see the
	// Lease held by no one for a moment, and says so: OnNewLeader("").
	trace.MarkMaybe(func(e trace.Event) bool {
		return (e.Lane == trace.APIServer && e.Verb == "409" && strings.Contains(e.Text, "update leases")) ||
			(e.Lane == trace.Workers && strings.Contains(e.Text, "leases") &&
				!strings.Contains(e.Text, "→ 2") && !strings.Contains(e.Text, "→ 404")) ||
			(e.Lane == trace.Workers && e.Verb == "OnNewLeader" && !strings.Contains(e.Text, ": "))
	})
	return &replicas{rec: tap.NewRecorder(ctx),
		replicas: map[*tap.Recorder]*observed{}, inHand: map[cache.ObjectName]*observed{}}
}

// observed is what one replica did: the requests its client sent, when
// it led, released and first took a key, and how many keys it took and
// was done with.
type observed struct {
	r   *replica
	all *replicas
	rec *tap.Recorder // its taps', Named for it

	leads                bool   // from OnStartedLeading to OnStoppedLeading
	sawLeader            string // the last OnNewLeader's identity
	reqs                 []apiserver.Request
	since                int // len(reqs) when it took over
	led, released, first time.Time
	reconciled, done     int // keys taken from the queue, and done
}

// observe starts the record of r, whose taps record under its name.
func (s *replicas) observe(r *replica) *observed {
	o := &observed{r: r, all: s, rec: s.rec.Named(r.name)}
	s.replicas[o.rec] = o
	return o
}

// client is cfg with the requests of its clients recorded.
func (o *observed) client(cfg *rest.Config) *rest.Config {
	return tap.Transport(cfg, o.rec, trace.Workers)
}

// callbacks are cb, their calls recorded.
func (o *observed) callbacks(cb leaderelection.LeaderCallbacks) leaderelection.LeaderCallbacks {
	return tap.LeaderCallbacks(cb, o.rec)
}

// queue is q, the calls the worker makes on it recorded.
func (o *observed) queue(q workqueue.TypedRateLimitingInterface[cache.ObjectName]) workqueue.TypedRateLimitingInterface[cache.ObjectName] {
	return tap.Queue[cache.ObjectName]{TypedRateLimitingInterface: q, Rec: o.rec}
}

// see adds one event to what its replica did, and checks the guarantee
// on each key a replica takes in hand.
func (s *replicas) see(e tap.Event) {
	from, ok := e.(tap.From)
	if !ok {
		return
	}
	o := s.replicas[from.Rec]
	switch e := from.Event.(type) {
	case tap.LeaderCall:
		switch e.Method {
		case "OnNewLeader":
			o.sawLeader = e.Identity
		case "OnStartedLeading":
			o.leads, o.led, o.since = true, e.At, len(o.reqs)
		case "OnStoppedLeading":
			o.leads, o.released = false, e.At
		}
	case tap.Request:
		o.reqs = append(o.reqs, e.Request)
	case tap.QueueCall:
		key, _ := e.Item.(cache.ObjectName)
		switch {
		case e.Method == "Get" && !e.Shutdown:
			s.total++
			if !o.leads {
				s.notLeader++
			}
			if other, ok := s.inHand[key]; ok && other != o {
				s.twoAtOnce++
			}
			s.inHand[key] = o
			if o.reconciled == 0 {
				o.first = time.Now() // as the step sees it: it awaits as they come
			}
			o.reconciled++
		case e.Method == "Done":
			delete(s.inHand, key)
			o.done++
		}
	}
}

// await awaits the events of every replica until o's state is as until
// says (it may be already). The elector calls OnNewLeader on goroutines
// of its own, in no promised order. Taking over takes a RetryPeriod or
// two (0.1-0.22 s); 10 s is a bound that says something went wrong (the
// elector's log is discarded).
func (o *observed) await(ctx context.Context, what string, until func() bool) error {
	ctx, cancel := context.WithTimeoutCause(ctx, 10*time.Second,
		fmt.Errorf("%s: not %s within 10 s", o.r.name, what))
	defer cancel()
	for !until() {
		e, err := o.all.rec.Next(ctx)
		if err != nil {
			return context.Cause(ctx)
		}
		o.all.see(e)
	}
	return nil
}

// awaitLeading awaits the moment o's replica takes over: its elector
// calls OnStartedLeading.
func (o *observed) awaitLeading(ctx context.Context) error {
	return o.await(ctx, "leading", func() bool { return o.leads })
}

// awaitStandby awaits the moment o's replica sees leader lead, then
// says what it has, as a standby.
func (o *observed) awaitStandby(ctx context.Context, out io.Writer, leader *replica) error {
	if err := o.await(ctx, "seeing "+leader.name+" lead", func() bool { return o.sawLeader == leader.name }); err != nil {
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
	if err := o.await(ctx, "done with every pod", func() bool { return o.done == int(podCount) }); err != nil {
		return err
	}
	lines := show.Requests(o.reqs[o.since:], show.ListsAndWatches)
	n, led, first := o.reconciled, o.led, o.first
	fmt.Fprintf(out, "    reconciled %d pods; lists and watches it sent since it took over (%d)", n, len(lines))
	if len(lines) == 0 {
		fmt.Fprint(out, ": none, its informer was warm")
	}
	fmt.Fprintln(out)
	show.Print(out, "      ", lines)
	if showTimes && after != nil {
		released := after.obs.released
		ms := func(d time.Duration) string { return fmt.Sprintf("%.0f ms", d.Seconds()*1000) }
		fmt.Fprintf(out, "    (--times) Lease released → %s leads %s → first reconcile %s: %s in all\n",
			o.r.name, ms(led.Sub(released)), ms(first.Sub(led)), ms(first.Sub(released)))
	}
	return nil
}

// print prints what the check found, once every replica has stopped:
// counts, not claims.
func (s *replicas) print(out io.Writer) {
	for _, e := range s.rec.Drain() {
		s.see(e)
	}
	fmt.Fprintf(out, "  %d reconciles checked: %d by a replica that did not hold the Lease, %d of a key another replica had in hand\n",
		s.total, s.notLeader, s.twoAtOnce)
}
