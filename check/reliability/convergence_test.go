package reliability

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/informer-walkthrough/informer-walkthrough/check/leakcheck"
	"github.com/informer-walkthrough/informer-walkthrough/internal/apiserver"
)

var (
	numSeeds = flag.Int("convergence.seeds", 16, "how many seeds TestConvergence runs")
	oneSeed  = flag.Int64("convergence.seed", -1, "run only this seed (it is printed on failure)")
	parallel = flag.Int("convergence.parallel", 16, "how many seeds run at once")
)

// convergenceNamespaces are where TestConvergence's ConfigMaps live; the
// informer watches all namespaces.
var convergenceNamespaces = []string{"ns-a", "ns-b", "ns-c"}

// TestConvergence runs each seed's scenario against its own workshop
// cluster and informer. A scenario is three rounds of random writes,
// with watches dropped at random between them, separated by two outages
// (the informer's watch is dropped and held while writes go on): one the
// server's history still covers, so the informer resumes from its last
// resourceVersion, and one after which the history is compacted, so the
// informer gets 410 Expired and relists. After each outage and at the
// end, the informer must hold exactly what the server holds.
//
// Seeds run concurrently, since each spends most of its time in the
// reflector's backoff before a relist (0.8 s to 1.6 s, not settable on an
// informer).
func TestConvergence(t *testing.T) {
	leakcheck.Verify(t)
	seeds := make([]int64, *numSeeds)
	for i := range seeds {
		seeds[i] = int64(i + 1)
	}
	if *oneSeed >= 0 {
		seeds = []int64{*oneSeed}
	}
	var (
		mu    sync.Mutex
		total stats
		wg    sync.WaitGroup
		slots = make(chan struct{}, *parallel)
	)
	for _, seed := range seeds {
		wg.Go(func() {
			slots <- struct{}{}
			defer func() { <-slots }()
			st, err := scenario(seed)
			if err != nil {
				t.Errorf("seed %d: %v\n  again: go test ./check/reliability -run TestConvergence -convergence.seed=%d -v",
					seed, err, seed)
			}
			mu.Lock()
			defer mu.Unlock()
			total.add(st)
		})
	}
	wg.Wait()
	t.Logf("%d seeds: %s", len(seeds), total)
	if !t.Failed() && total.tombstones == 0 {
		t.Error("no DeletedFinalStateUnknown in any seed: the relist path went untested")
	}
}

// stats count what a scenario did and what its handler saw.
type stats struct {
	creates, updates, deletes     int // writes
	drops, outages, compactions   int // faults
	relists                       int // LISTs and watch-lists after the first
	onAdd, onUpdate, onDelete     int
	tombstones, slow, checkpoints int
	worstCheckpoint               time.Duration
}

func (s *stats) add(o stats) {
	s.creates += o.creates
	s.updates += o.updates
	s.deletes += o.deletes
	s.drops += o.drops
	s.outages += o.outages
	s.compactions += o.compactions
	s.relists += o.relists
	s.onAdd += o.onAdd
	s.onUpdate += o.onUpdate
	s.onDelete += o.onDelete
	s.tombstones += o.tombstones
	s.slow += o.slow
	s.checkpoints += o.checkpoints
	s.worstCheckpoint = max(s.worstCheckpoint, o.worstCheckpoint)
}

func (s stats) String() string {
	return fmt.Sprintf("writes: %d creates, %d updates, %d deletes; faults: %d dropped watches, "+
		"%d outages, %d compactions; %d relists; handler: %d OnAdd, %d OnUpdate, %d OnDelete "+
		"(%d tombstones, %d slow); %d checkpoints, slowest %v",
		s.creates, s.updates, s.deletes, s.drops, s.outages, s.compactions, s.relists,
		s.onAdd, s.onUpdate, s.onDelete, s.tombstones, s.slow, s.checkpoints,
		s.worstCheckpoint.Round(time.Millisecond))
}

// scenario runs one seed.
func scenario(seed int64) (stats, error) {
	srv, err := apiserver.Start(apiserver.Options{})
	if err != nil {
		return stats{}, err
	}
	defer srv.Close()
	client := kubernetes.NewForConfigOrDie(srv.Config())
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, ns := range convergenceNamespaces {
		_, err := client.CoreV1().Namespaces().Create(ctx,
			&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
		if err != nil {
			return stats{}, err
		}
	}

	h := newHandler()
	factory := informers.NewSharedInformerFactory(client, 0)
	informer := factory.Core().V1().ConfigMaps().Informer()
	if _, err := informer.AddEventHandler(h); err != nil {
		return stats{}, err
	}
	infCtx, stop := context.WithCancel(ctx)
	defer factory.Shutdown() // runs second: waits for the informer
	defer stop()             // runs first
	factory.Start(infCtx.Done())
	if !cache.WaitFor(ctx, "", informer.HasSyncedChecker()) {
		return stats{}, errors.New("the informer never synced")
	}

	d := &driver{rng: rand.New(rand.NewPCG(uint64(seed), 0)), client: client, srv: srv}
	check := func() error {
		start := time.Now()
		err := converged(ctx, client, informer.GetStore(), h)
		d.st.checkpoints++
		d.st.worstCheckpoint = max(d.st.worstCheckpoint, time.Since(start))
		return err
	}
	outages := []bool{false, true} // compact after the outage?
	d.rng.Shuffle(len(outages), func(i, j int) { outages[i], outages[j] = outages[j], outages[i] })
	for round := range 3 {
		if err := d.writes(ctx, 20+d.rng.IntN(30), true); err != nil {
			return d.st, err
		}
		if round < len(outages) {
			if err := d.outage(ctx, outages[round]); err != nil {
				return d.st, err
			}
		}
		if err := check(); err != nil {
			return d.st, fmt.Errorf("round %d: %v", round+1, err)
		}
	}

	// Every object the handler was told of and the driver deleted got
	// its OnDelete, and no other did.
	h.mu.Lock()
	defer h.mu.Unlock()
	for key := range d.deleted {
		if h.seen[key] && !h.deleted[key] {
			return d.st, fmt.Errorf("%s was deleted, but the handler got no OnDelete", key)
		}
	}
	for key := range h.deleted {
		if !d.deleted[key] {
			return d.st, fmt.Errorf("OnDelete for %s, which was never deleted", key)
		}
	}
	if len(h.errs) > 0 {
		return d.st, errors.New(h.errs[0])
	}
	st := d.st
	st.onAdd, st.onUpdate, st.onDelete = h.st.onAdd, h.st.onUpdate, h.st.onDelete
	st.tombstones, st.slow = h.st.tombstones, h.st.slow
	// The informer's LISTs and watch-lists after its first; not the
	// LISTs of converged, which name no resourceVersion.
	for _, r := range srv.Requests() {
		if (r.Verb == "list" && r.Query.Has("resourceVersion")) ||
			(r.Verb == "watch" && r.Query.Get("sendInitialEvents") == "true") {
			st.relists++
		}
	}
	st.relists--
	return st, nil
}

// driver makes the writes and the faults, from the seed.
type driver struct {
	rng       *rand.Rand
	client    kubernetes.Interface
	srv       *apiserver.Server
	next      int                    // names are never reused: cm-1, cm-2, …
	live      []types.NamespacedName // in creation order, so picks follow the seed
	deleted   map[string]bool
	sinceDrop int // writes since the last dropped watch
	st        stats
}

// writes makes n random writes; with drops, it drops all watches now and
// then (never twice without a write between: a watch that ends empty
// within a second counts as a failure, and costs a relist).
func (d *driver) writes(ctx context.Context, n int, drops bool) error {
	for range n {
		if err := d.write(ctx, d.rng.IntN(10)); err != nil {
			return err
		}
		if drops && d.sinceDrop > 0 && d.rng.IntN(8) == 0 {
			d.srv.DropWatches()
			d.st.drops++
			d.sinceDrop = 0
		}
	}
	return nil
}

// write creates (choice 0-3), updates (4-7) or deletes (8-9).
func (d *driver) write(ctx context.Context, choice int) error {
	cms := d.client.CoreV1().ConfigMaps
	d.sinceDrop++
	switch {
	case choice < 4 || len(d.live) == 0:
		d.next++
		ns := convergenceNamespaces[d.rng.IntN(len(convergenceNamespaces))]
		cm := &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: "cm-" + strconv.Itoa(d.next)},
			Data:       map[string]string{"v": "0"},
		}
		if _, err := cms(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			return err
		}
		d.live = append(d.live, types.NamespacedName{Namespace: ns, Name: cm.Name})
		d.st.creates++
	case choice < 8:
		o := d.live[d.rng.IntN(len(d.live))]
		patch := fmt.Appendf(nil, `{"data":{"v":"%d"}}`, d.rng.IntN(1000000))
		if _, err := cms(o.Namespace).Patch(ctx, o.Name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
			return err
		}
		d.st.updates++
	default:
		i := d.rng.IntN(len(d.live))
		o := d.live[i]
		if err := cms(o.Namespace).Delete(ctx, o.Name, metav1.DeleteOptions{}); err != nil {
			return err
		}
		d.live = slices.Delete(d.live, i, i+1)
		if d.deleted == nil {
			d.deleted = map[string]bool{}
		}
		d.deleted[o.String()] = true
		d.st.deletes++
	}
	return nil
}

// outage drops every watch and holds the informer's re-watch while
// writes go on, including at least one delete of an object the informer
// has. With compact, the history is then compacted, so that the re-watch
// gets 410 Expired and the informer relists: it learns of that delete
// only as a tombstone (DeletedFinalStateUnknown).
func (d *driver) outage(ctx context.Context, compact bool) error {
	d.srv.HoldWatches()
	d.srv.DropWatches()
	d.st.outages++
	if len(d.live) > 0 {
		if err := d.write(ctx, 9); err != nil { // a delete
			d.srv.ReleaseWatches()
			return err
		}
	}
	err := d.writes(ctx, 5+d.rng.IntN(20), false)
	if compact {
		d.srv.CompactHistory()
		d.st.compactions++
	}
	d.srv.ReleaseWatches()
	d.sinceDrop = 0
	return err
}

// converged waits until the informer's store and its handler's view both
// equal the server's state: the same keys at the same resourceVersions.
func converged(ctx context.Context, client kubernetes.Interface, store cache.Store, h *handler) error {
	list, err := client.CoreV1().ConfigMaps("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	want := map[string]string{}
	for _, cm := range list.Items {
		want[cm.Namespace+"/"+cm.Name] = cm.ResourceVersion
	}
	for {
		got := map[string]string{}
		for _, obj := range store.List() {
			cm := obj.(*corev1.ConfigMap)
			got[cm.Namespace+"/"+cm.Name] = cm.ResourceVersion
		}
		seen := h.view()
		if equal(got, want) && equal(seen, want) {
			return nil
		}
		select {
		case <-h.changed:
		case <-ctx.Done():
			return fmt.Errorf("not converged at rv %s:\n  store   %s\n  handler %s",
				list.ResourceVersion, diff(got, want), diff(seen, want))
		}
	}
}

func equal(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// diff says how got differs from want, briefly.
func diff(got, want map[string]string) string {
	var out []string
	for k, v := range want {
		if g, ok := got[k]; !ok {
			out = append(out, "missing "+k)
		} else if g != v {
			out = append(out, fmt.Sprintf("%s at rv %s, want %s", k, g, v))
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			out = append(out, "extra "+k)
		}
	}
	slices.Sort(out)
	if len(out) == 0 {
		return "equal"
	}
	if len(out) > 5 {
		out = append(out[:5], fmt.Sprintf("and %d more", len(out)-5))
	}
	return fmt.Sprint(out)
}
