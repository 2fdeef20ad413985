package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	appslisters "k8s.io/client-go/listers/apps/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/informer-walkthrough/informer-walkthrough/internal/cluster"
)

// The chapter's window into its controller. Nothing in this file is
// part of the controller pattern: each wrapper below embeds one part
// of the controller (its event handler, workqueue, rate limiter,
// lister and client), lets it do its work unchanged, and records what
// it was asked to do. Handlers and workers run on goroutines of their
// own, so they never print: the steps wait on the records (a channel
// closed on every append, never a sleep) and print them in an order
// that is the same on every run. At the end, the steps' own printing
// helpers.

// A recorder holds what the handler and the workers did, in order.
type recorder struct {
	done <-chan struct{} // run's context: a held sync gives up when it ends
	out  io.Writer       // where show prints

	mu      sync.Mutex
	recs    []record
	mark    int                // where the records not yet printed begin
	changed chan struct{}      // closed and replaced on every append
	event   *record            // the handler call in progress, if any
	turns   map[string]*record // key → the worker turn from Get to Done
	running map[string]int     // key → turns in progress, and the most
	most    int                // ever at once (the workqueue says 1)
	gate    *gate              // the sync to hold after its lister read
}

func newRecorder(ctx context.Context, out io.Writer) *recorder {
	return &recorder{done: ctx.Done(), out: out, changed: make(chan struct{}),
		turns: map[string]*record{}, running: map[string]int{}}
}

// A record is one thing the handler or a worker did.
type record struct {
	handler bool   // from the event handler; otherwise from a worker
	event   string // ADD, UPDATE, DELETE (handler)
	key     string
	obj     *appsv1.Deployment // the object handed over or read, if any
	old     *appsv1.Deployment // handler: OnUpdate's old object
	skipped bool               // handler: returned without an Add
	try     int                // worker: 1 for the first attempt
	did     string             // worker: what the sync did
	err     error              // worker: why the sync failed
	backoff time.Duration      // worker: the delay AddRateLimited was given
	retried bool               // worker: AddRateLimited was called
	forgot  bool               // worker: Forget was called
}

// appendLocked adds r and wakes whoever waits. r.mu must be held.
func (r *recorder) appendLocked(rec record) {
	r.recs = append(r.recs, rec)
	close(r.changed)
	r.changed = make(chan struct{})
}

// handler wraps the controller's event handler: it notes each call,
// so that the Add it makes is recorded with the event and the object.
func (r *recorder) handler(h cache.ResourceEventHandler) cache.ResourceEventHandler {
	return recordingHandler{ResourceEventHandler: h, r: r}
}

type recordingHandler struct {
	cache.ResourceEventHandler
	r *recorder
}

func (h recordingHandler) OnAdd(obj any, isInInitialList bool) {
	h.r.handling("ADD", nil, obj)
	h.ResourceEventHandler.OnAdd(obj, isInInitialList)
	h.r.handled()
}

func (h recordingHandler) OnUpdate(old, new any) {
	h.r.handling("UPDATE", old, new)
	h.ResourceEventHandler.OnUpdate(old, new)
	h.r.handled()
}

func (h recordingHandler) OnDelete(obj any) {
	h.r.handling("DELETE", nil, obj)
	h.ResourceEventHandler.OnDelete(obj)
	h.r.handled()
}

// handling notes the call the handler is making. The calls of one
// registration come one at a time, so one slot is enough.
func (r *recorder) handling(event string, old, obj any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	k, _ := cache.DeletionHandlingMetaNamespaceKeyFunc(obj) // for a skip; Add has the key
	r.event = &record{handler: true, event: event, key: k,
		obj: deploymentOf(obj), old: deploymentOf(old)}
}

// handled records a handler call that made no Add (it skipped).
func (r *recorder) handled() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.event != nil {
		r.event.skipped = true
		r.appendLocked(*r.event)
		r.event = nil
	}
}

// queue wraps the controller's workqueue. What it records: each Add,
// with the handler call that made it; and each worker's turn, from Get
// (which try this is) to Done (Forget, or the backoff of
// AddRateLimited, which the wrapped rate limiter hands over).
func (r *recorder) queue(q workqueue.TypedRateLimitingInterface[string]) *recordingQueue {
	return &recordingQueue{TypedRateLimitingInterface: q, r: r}
}

type recordingQueue struct {
	workqueue.TypedRateLimitingInterface[string]
	r *recorder
}

// Add adds and records under the recorder's lock: no worker can record
// this key's sync before the handler's record is in.
func (q *recordingQueue) Add(key string) {
	q.r.mu.Lock()
	defer q.r.mu.Unlock()
	q.TypedRateLimitingInterface.Add(key)
	rec := record{handler: true}
	if q.r.event != nil {
		rec, q.r.event = *q.r.event, nil
	}
	rec.key = key
	q.r.appendLocked(rec)
}

func (q *recordingQueue) Get() (string, bool) {
	key, shutdown := q.TypedRateLimitingInterface.Get()
	if shutdown {
		return key, shutdown
	}
	try := q.NumRequeues(key) + 1
	q.r.mu.Lock()
	defer q.r.mu.Unlock()
	q.r.turns[key] = &record{key: key, try: try}
	q.r.running[key]++
	q.r.most = max(q.r.most, q.r.running[key])
	return key, false
}

func (q *recordingQueue) Forget(key string) {
	q.TypedRateLimitingInterface.Forget(key)
	q.r.mu.Lock()
	defer q.r.mu.Unlock()
	if t := q.r.turns[key]; t != nil {
		t.forgot = true
	}
}

// Done records the turn before the queue hears of it: until Done no
// other worker can Get this key, so a key's records are in the order
// its syncs ran.
func (q *recordingQueue) Done(key string) {
	q.r.mu.Lock()
	if t := q.r.turns[key]; t != nil {
		q.r.appendLocked(*t)
		delete(q.r.turns, key)
		q.r.running[key]--
	}
	q.r.mu.Unlock()
	q.TypedRateLimitingInterface.Done(key)
}

// limiter wraps the queue's rate limiter, to record the delay it gives:
// When is what AddRateLimited asks.
func (r *recorder) limiter(l workqueue.TypedRateLimiter[string]) workqueue.TypedRateLimiter[string] {
	return recordingLimiter{TypedRateLimiter: l, r: r}
}

type recordingLimiter struct {
	workqueue.TypedRateLimiter[string]
	r *recorder
}

func (l recordingLimiter) When(key string) time.Duration {
	d := l.TypedRateLimiter.When(key)
	l.r.mu.Lock()
	defer l.r.mu.Unlock()
	if t := l.r.turns[key]; t != nil {
		t.retried, t.backoff = true, d
	}
	return d
}

// lister wraps the Deployment lister, to record what each sync read
// and to hold one sync right after its read (step 4).
func (r *recorder) lister(l appslisters.DeploymentLister) appslisters.DeploymentLister {
	return recordingLister{DeploymentLister: l, r: r}
}

type recordingLister struct {
	appslisters.DeploymentLister
	r *recorder
}

func (l recordingLister) Deployments(namespace string) appslisters.DeploymentNamespaceLister {
	return recordingNamespaceLister{
		DeploymentNamespaceLister: l.DeploymentLister.Deployments(namespace),
		r:                         l.r, namespace: namespace}
}

type recordingNamespaceLister struct {
	appslisters.DeploymentNamespaceLister
	r         *recorder
	namespace string
}

func (l recordingNamespaceLister) Get(name string) (*appsv1.Deployment, error) {
	k := key(l.namespace, name)
	d, err := l.DeploymentNamespaceLister.Get(name)
	l.r.read(k, d)
	l.r.pass(k, d) // step 4's gate: it holds a sync here, after the read
	return d, err
}

// read records what the worker holding key read.
func (r *recorder) read(key string, d *appsv1.Deployment) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if t := r.turns[key]; t != nil {
		t.obj = d
	}
}

// pass holds the worker syncing key if the gate waits for key, until
// the gate is released. d is what it read, nil if it has not read yet.
func (r *recorder) pass(key string, d *appsv1.Deployment) {
	r.mu.Lock()
	g := r.gate
	if r.turns[key] == nil || g == nil || g.key != key {
		r.mu.Unlock()
		return
	}
	r.gate = nil // hold once
	did := "read the lister, held before writing"
	if d == nil {
		did = "held before reading the lister"
	}
	r.appendLocked(record{key: key, obj: d, did: did})
	r.mu.Unlock()
	close(g.entered)
	select {
	case <-g.open:
	case <-r.done:
	}
}

// A gate holds the next sync of key after it read the lister.
type gate struct {
	key     string
	entered chan struct{}
	open    chan struct{}
}

// hold arms the gate for key's next sync. held waits until that sync
// is held; release lets it go on.
func (r *recorder) hold(key string) (held func(context.Context) error, release func()) {
	g := &gate{key: key, entered: make(chan struct{}), open: make(chan struct{})}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.gate = g
	held = func(ctx context.Context) error {
		select {
		case <-g.entered:
			return nil
		case <-ctx.Done():
			return fmt.Errorf("waiting for the sync of %s to be held: %w", key, context.Cause(ctx))
		}
	}
	return held, sync.OnceFunc(func() { close(g.open) })
}

// client wraps the controller's clientset, to record what each sync
// did with the summary ConfigMaps: their client comes back wrapped,
// everything else as it was.
func (r *recorder) client(c kubernetes.Interface) kubernetes.Interface {
	return recordingClient{Interface: c, r: r}
}

type recordingClient struct {
	kubernetes.Interface
	r *recorder
}

func (c recordingClient) CoreV1() corev1client.CoreV1Interface {
	return recordingCoreV1{CoreV1Interface: c.Interface.CoreV1(), r: c.r}
}

type recordingCoreV1 struct {
	corev1client.CoreV1Interface
	r *recorder
}

func (c recordingCoreV1) ConfigMaps(namespace string) corev1client.ConfigMapInterface {
	return recordingConfigMaps{ConfigMapInterface: c.CoreV1Interface.ConfigMaps(namespace),
		r: c.r, namespace: namespace}
}

type recordingConfigMaps struct {
	corev1client.ConfigMapInterface
	r         *recorder
	namespace string
}

// summarized is the key of the Deployment that configmap/name summarizes.
func (c recordingConfigMaps) summarized(name string) string {
	return key(c.namespace, strings.TrimSuffix(name, "-summary"))
}

// Get records a summary that is already in sync: what the sync did
// unless a write follows.
func (c recordingConfigMaps) Get(ctx context.Context, name string,
	opts metav1.GetOptions) (*corev1.ConfigMap, error) {
	cm, err := c.ConfigMapInterface.Get(ctx, name, opts)
	if err == nil {
		c.r.did(c.summarized(name), "configmap/"+name+" already in sync")
	}
	return cm, err
}

func (c recordingConfigMaps) Create(ctx context.Context, cm *corev1.ConfigMap,
	opts metav1.CreateOptions) (*corev1.ConfigMap, error) {
	created, err := c.ConfigMapInterface.Create(ctx, cm, opts)
	c.r.wrote(c.summarized(cm.Name), "create", "configmap/"+cm.Name, err)
	return created, err
}

func (c recordingConfigMaps) Update(ctx context.Context, cm *corev1.ConfigMap,
	opts metav1.UpdateOptions) (*corev1.ConfigMap, error) {
	updated, err := c.ConfigMapInterface.Update(ctx, cm, opts)
	c.r.wrote(c.summarized(cm.Name), "update", "configmap/"+cm.Name, err)
	return updated, err
}

// Delete records a summary gone: the sync deletes one only when its
// Deployment is not in the lister, and NotFound means gone too.
func (c recordingConfigMaps) Delete(ctx context.Context, name string,
	opts metav1.DeleteOptions) error {
	err := c.ConfigMapInterface.Delete(ctx, name, opts)
	if err == nil || apierrors.IsNotFound(err) {
		c.r.did(c.summarized(name), "not in the lister: configmap/"+name+" gone")
	} else {
		c.r.wrote(c.summarized(name), "delete", "configmap/"+name, err)
	}
	return err
}

// did records what the sync of key did, when it wrote nothing.
func (r *recorder) did(key, what string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if t := r.turns[key]; t != nil {
		t.did = what
	}
}

// wrote records a write of the sync of key: verb is "create", "update"
// or "delete", and err what the API server answered.
func (r *recorder) wrote(key, verb, object string, err error) {
	if err == nil {
		verb += "d"
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if t := r.turns[key]; t != nil {
		t.did, t.err = verb+" "+object, err
	}
}

// mostAtOnce is the most turns of one key that ever ran at once.
func (r *recorder) mostAtOnce() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.most
}

// A step prints the records after its mark: where the last step's
// printing ended. waitFor waits on those; show and showSorted print
// them and move the mark to the end.

// since returns the records after mark, leaving out the handler calls
// that skipped (on a real cluster, the deployment controller's status
// writes).
func (r *recorder) since(mark int) []record {
	r.mu.Lock()
	defer r.mu.Unlock()
	var recs []record
	for _, rec := range r.recs[mark:] {
		if !rec.skipped {
			recs = append(recs, rec)
		}
	}
	return recs
}

func (r record) sameVersion() bool {
	return r.skipped && r.event == "UPDATE" && r.obj != nil && r.old != nil &&
		r.obj.ResourceVersion == r.old.ResourceVersion
}

// waitFor blocks until done is true of the records after the mark.
func (r *recorder) waitFor(ctx context.Context, what string, done func([]record) bool) error {
	for {
		r.mu.Lock()
		ok, changed := done(r.recs[r.mark:]), r.changed
		r.mu.Unlock()
		if ok {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: %w", what, context.Cause(ctx))
		}
	}
}

// show waits until done is true of the records after the mark, then
// prints them in the order they happened.
func (r *recorder) show(ctx context.Context, what string, done func([]record) bool) error {
	return r.print(ctx, what, done, func(recs []record) []record {
		return slices.DeleteFunc(recs, func(rec record) bool { return rec.skipped })
	})
}

// showSorted is show for records of workers that ran in parallel:
// sorted by key, keeping each key's own order (a key's syncs never
// overlap, so that order is real).
func (r *recorder) showSorted(ctx context.Context, what string, done func([]record) bool) error {
	return r.print(ctx, what, done, func(recs []record) []record {
		return sortedByKey(slices.DeleteFunc(recs, func(rec record) bool { return rec.skipped }))
	})
}

// showRelist waits for n OnUpdate calls with old and new at the same
// resourceVersion that the handler skipped, and prints them sorted by
// key (a relist's order is not defined).
func (r *recorder) showRelist(ctx context.Context, n int) error {
	return r.print(ctx, "the relist's updates", sameVersionUpdates(n), func(recs []record) []record {
		return sortedByKey(slices.DeleteFunc(recs, func(rec record) bool { return !rec.sameVersion() }))
	})
}

// printMostAtOnce is show, then the most syncs of one key that ever
// ran at once: the workqueue promises 1.
func (r *recorder) printMostAtOnce(ctx context.Context, what string, done func([]record) bool) error {
	if err := r.show(ctx, what, done); err != nil {
		return err
	}
	fmt.Fprintf(r.out, "  most syncs of one key at the same time, over the whole run: %d\n",
		r.mostAtOnce())
	return nil
}

// print waits until done, then prints the records after the mark that
// pick keeps, and moves the mark to the end.
func (r *recorder) print(ctx context.Context, what string, done func([]record) bool,
	pick func([]record) []record) error {
	if err := r.waitFor(ctx, what, done); err != nil {
		return err
	}
	r.mu.Lock()
	recs := slices.Clone(r.recs[r.mark:])
	r.mark = len(r.recs)
	r.mu.Unlock()
	for _, rec := range pick(recs) {
		fmt.Fprintln(r.out, rec)
	}
	return nil
}

// adds is true once the handler has made n Adds.
func adds(n int) func([]record) bool {
	return func(recs []record) bool {
		count := 0
		for _, r := range recs {
			if r.handler && !r.skipped {
				count++
			}
		}
		return count >= n
	}
}

// sameVersionUpdates is true once the handler has had n OnUpdate calls
// with old and new at the same resourceVersion.
func sameVersionUpdates(n int) func([]record) bool {
	return func(recs []record) bool {
		count := 0
		for _, r := range recs {
			if r.sameVersion() {
				count++
			}
		}
		return count >= n
	}
}

// synced is true once each named object has had n successful syncs.
func synced(n int, names ...string) func([]record) bool {
	return func(recs []record) bool {
		count := map[string]int{}
		for _, r := range recs {
			if !r.handler && r.forgot && r.err == nil {
				_, name, _ := cache.SplitMetaNamespaceKey(r.key)
				count[name]++
			}
		}
		for _, name := range names {
			if count[name] < n {
				return false
			}
		}
		return true
	}
}

func (r record) String() string {
	if r.handler {
		s := fmt.Sprintf("  handler %-6s %s  rv=%s", r.event, r.key, rvOf(r.obj))
		if r.skipped {
			s += " (old rv=" + rvOf(r.old) + ")"
		}
		if r.event != "DELETE" { // a deleted object's labels are beside the point
			s += "  release=" + releaseOf(r.obj)
		}
		if r.skipped {
			return s + "  → skip, no Add"
		}
		return s + "  → Add"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "  worker  sync   %s", r.key)
	if r.obj != nil {
		fmt.Fprintf(&b, "  release=%s", releaseOf(r.obj))
	}
	if r.try > 1 || r.retried {
		fmt.Fprintf(&b, "  try %d", r.try)
	}
	if r.retried {
		fmt.Fprintf(&b, "  → %s: %s; AddRateLimited (%v)",
			r.did, apierrors.ReasonForError(r.err), r.backoff)
		return b.String()
	}
	fmt.Fprintf(&b, "  → %s", r.did)
	if r.try > 1 {
		b.WriteString(", Forget")
	}
	return b.String()
}

func rvOf(d *appsv1.Deployment) string {
	if d == nil {
		return "?"
	}
	return d.ResourceVersion
}

func releaseOf(d *appsv1.Deployment) string {
	if d == nil {
		return "?"
	}
	return d.Labels["release"]
}

// deploymentOf unwraps what a handler was given: a Deployment, or a
// tombstone that may (or may not) hold one.
func deploymentOf(obj any) *appsv1.Deployment {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	d, _ := obj.(*appsv1.Deployment)
	return d
}

// sortedByKey orders records by key, keeping each key's own order.
func sortedByKey(recs []record) []record {
	slices.SortStableFunc(recs, func(a, b record) int { return strings.Compare(a.key, b.key) })
	return recs
}

// printf prints a line of a step.
func (s *steps) printf(format string, a ...any) { fmt.Fprintf(s.out, format, a...) }

// printCreated prints a Deployment the step created.
func printCreated(out io.Writer, d *appsv1.Deployment) {
	fmt.Fprintf(out, "  create deployment/%s  rv=%s  release=%s (paused, replicas 0)\n",
		d.Name, d.ResourceVersion, releaseOf(d))
}

// printPatched prints a Deployment the step patched, and a note.
func printPatched(out io.Writer, d *appsv1.Deployment, note string) {
	fmt.Fprintf(out, "  patch deployment/%s  rv=%s  release=%s%s\n",
		d.Name, d.ResourceVersion, releaseOf(d), note)
}

// printLeftBehind lists the summaries still on the cluster.
func printLeftBehind(ctx context.Context, out io.Writer, c *cluster.Cluster) error {
	left, err := c.Client.CoreV1().ConfigMaps(c.Namespace).List(ctx,
		metav1.ListOptions{LabelSelector: cluster.OwnSelector})
	if err != nil {
		return err
	}
	for _, cm := range left.Items {
		fmt.Fprintf(out, "  left behind: configmap/%s  labels=%s  replicas=%s\n",
			cm.Name, cm.Data["labels"], cm.Data["replicas"])
	}
	return nil
}
