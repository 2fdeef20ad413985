// Chapter 07-controller: informer → workqueue → workers, the controller
// pattern.
//
// A small, real controller: for every Deployment it keeps a ConfigMap
// "<name>-summary" in sync with the deployment's replicas and labels.
// Event handlers only turn events into namespace/name keys on a
// rate-limited workqueue; a few workers take keys off the queue, read
// the current object from the informer's lister, and write. The chapter
// shows what the workqueue adds: several events for one object become
// one sync, a failed sync is retried with backoff, a key is never
// synced by two workers at once, and everything shuts down cleanly.
//
// Read alongside (client-go v0.37.2): util/workqueue/queue.go,
// delaying_queue.go, rate_limiting_queue.go, default_rate_limiters.go,
// informers/factory.go and tools/cache/shared_informer.go.
package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	appsclient "k8s.io/client-go/kubernetes/typed/apps/v1"
	appslisters "k8s.io/client-go/listers/apps/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"

	"github.com/informer-walkthrough/informer-walkthrough/internal/apiserver"
	"github.com/informer-walkthrough/informer-walkthrough/internal/cluster"
	"github.com/informer-walkthrough/informer-walkthrough/internal/runner"
)

func main() { cluster.Main("07-controller", run) }

// workers is how many goroutines take keys off the queue.
const workers = 3

// run is the chapter. Each step prints a heading, then what happened.
// The controller's handler and workers write what they do into a
// journal; run waits on that journal (never on a clock) and prints it
// in an order it chooses, so the output is the same on every run.
func run(ctx context.Context, out io.Writer, c *cluster.Cluster) error {
	// No step may wait forever: if an expected event never comes, fail
	// with a clear error instead of hanging.
	ctx, cancel := runner.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	deploys := c.Client.AppsV1().Deployments(c.Namespace)
	log := newJournal()

	// Step 1. The parts of a controller. A shared informer factory
	// (only this namespace, only the course's objects) gives the
	// Deployment informer and its lister. The queue holds keys, not
	// objects: a worker reads the newest object from the lister when
	// it gets to the key. Workers are not started yet, on purpose.
	fmt.Fprintln(out, "Step 1. Informer → handler → workqueue: the handler only enqueues keys")
	factory := informers.NewSharedInformerFactoryWithOptions(c.Client, 0,
		informers.WithNamespace(c.Namespace),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.LabelSelector = cluster.OwnSelector
		}))
	deployInformer := factory.Apps().V1().Deployments()
	// A per-key exponential backoff: 5ms, 10ms, 20ms, ... capped at
	// 1s. (The default limiter caps at 1000s; see the README.)
	limiter := newShownLimiter(
		workqueue.NewTypedItemExponentialFailureRateLimiter[string](
			5*time.Millisecond, time.Second))
	queue := workqueue.NewTypedRateLimitingQueueWithConfig(limiter,
		workqueue.TypedRateLimitingQueueConfig[string]{Name: "summaries"})
	ctl := newController(c.Client, deployInformer.Lister(), queue, log)
	ctl.limiter = limiter
	reg, err := deployInformer.Informer().AddEventHandler(ctl.handler())
	if err != nil {
		queue.ShutDown()
		return err
	}

	// Everything started from here on is stopped by stop, on every
	// path out of run: informers first (no new events), then the
	// queue (Get reports shutdown), then wait for the workers.
	informerCtx, stopInformers := context.WithCancel(ctx)
	workerCtx, stopWorkers := context.WithCancel(ctx)
	var workerWG sync.WaitGroup
	stop := sync.OnceFunc(func() {
		stopInformers()
		factory.Shutdown()
		queue.ShutDown()
		workerWG.Wait()
	})
	defer func() {
		stopWorkers() // unblocks a sync held in step 4 if run failed
		stop()
	}()

	// The informer must have listed before workers may trust the
	// lister, and the handler must have seen that initial list
	// before its keys are all queued. Both waits are channel-based.
	factory.StartWithContext(informerCtx)
	if err := factory.WaitForCacheSyncWithContext(ctx).AsError(); err != nil {
		return err
	}
	if !cache.WaitFor(ctx, "", reg.HasSyncedChecker()) {
		return fmt.Errorf("event handler did not sync: %w", ctx.Err())
	}
	fmt.Fprintf(out, "  informer synced, handler synced: %d deployments cached; no workers yet\n",
		len(deployInformer.Informer().GetStore().ListKeys()))
	mark := log.mark()
	var rvs []string
	for _, name := range []string{"web", "api"} {
		d, err := deploys.Create(ctx, newDeployment(name), metav1.CreateOptions{})
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "  create deployment/%s  rv=%s  release=v1 (paused, replicas 0)\n",
			name, d.ResourceVersion)
		rvs = append(rvs, d.ResourceVersion)
	}
	if err := log.waitFor(ctx, mark, "the handler to see both creates",
		handlerSaw(rvs...)); err != nil {
		return err
	}
	printRecords(out, log.since(mark))
	fmt.Fprintf(out, "  queue length %d: two keys wait, no worker runs yet\n", queue.Len())

	// Step 2. Dedup. The queue is a set of keys waiting for a worker:
	// adding a key that is already waiting changes nothing. Three
	// updates to web while its key waits, then the workers start:
	// web is synced once, and that one sync reads the newest web.
	fmt.Fprintln(out, "\nStep 2. Dedup: three updates to web before any worker runs, one sync")
	mark = log.mark()
	rvs = nil
	for _, release := range []string{"v2", "v3", "v4"} {
		rv, err := patchRelease(ctx, deploys, "web", release)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "  patch deployment/web  rv=%s  release=%s\n", rv, release)
		rvs = append(rvs, rv)
	}
	if err := log.waitFor(ctx, mark, "the handler to see the patches",
		handlerSaw(rvs...)); err != nil {
		return err
	}
	printRecords(out, log.since(mark))
	fmt.Fprintf(out, "  queue length %d: web was already queued, so the three Adds changed nothing\n",
		queue.Len())
	mark = log.mark()
	for range workers {
		workerWG.Go(func() { ctl.runWorker(workerCtx) })
	}
	fmt.Fprintf(out, "  start %d workers\n", workers)
	if err := log.waitFor(ctx, mark, "both keys to sync",
		synced(1, "web", "api")); err != nil {
		return err
	}
	// The workers ran in parallel, so the journal's order is theirs;
	// sorted by key it is the same every run.
	printRecords(out, sortedByKey(log.since(mark)))
	fmt.Fprintln(out, "  web: 4 events (ADD + 3 UPDATE), 1 sync, and it read release=v4")

	// Step 3. Retry. A sync that returns an error is put back with
	// AddRateLimited: the rate limiter says how long to wait, and the
	// wait doubles with each failure of that key. Success calls
	// Forget, which resets the key's failure count. The embedded
	// cluster answers the ConfigMap update with 409 Conflict twice,
	// just as a real API server does when someone else wrote first.
	fmt.Fprintln(out, "\nStep 3. Retry: a failed sync is requeued with backoff, then forgotten")
	if !c.Embedded() {
		fmt.Fprintln(out, "  skipped on a real cluster: kube-apiserver cannot be made "+
			"to answer 409 Conflict on demand")
	} else {
		c.Server.InjectFault(apiserver.Fault{
			Verb: "update", Resource: "configmaps", Name: "api-summary",
			Times: 2,
			Err: apierrors.NewConflict(
				schema.GroupResource{Resource: "configmaps"}, "api-summary",
				fmt.Errorf("the object has been modified")),
		})
		fmt.Fprintln(out, "  inject: the next 2 updates of configmap/api-summary answer 409 Conflict")
		mark = log.mark()
		rv, err := patchRelease(ctx, deploys, "api", "v2")
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "  patch deployment/api  rv=%s  release=v2\n", rv)
		if err := log.waitFor(ctx, mark, "api to sync after its retries",
			synced(1, "api")); err != nil {
			return err
		}
		printRecords(out, log.since(mark))
		fmt.Fprintf(out, "  after Forget: NumRequeues(%s) = %d\n",
			key(c.Namespace, "api"), queue.NumRequeues(key(c.Namespace, "api")))
	}

	// Step 4. Two guards. First the handler's filter: an update that
	// cannot change the summary is not worth a key. Then the
	// workqueue's promise: a key being processed is never handed to a
	// second worker. An Add during the sync only marks the key dirty;
	// Done puts it back in the queue, and it is synced again, after.
	fmt.Fprintln(out, "\nStep 4. Filters, and one key never in two workers at once")
	web, err := ctl.lister.Deployments(c.Namespace).Get("web")
	if err != nil {
		return err
	}
	_, why := skipUpdate(web, web)
	fmt.Fprintf(out, "  filter OnUpdate(web, web), what a resync delivers: skip, %s\n", why)
	statusOnly := web.DeepCopy()
	statusOnly.ResourceVersion += "0" // any other resourceVersion
	statusOnly.Status.ObservedGeneration = web.Generation
	_, why = skipUpdate(web, statusOnly)
	fmt.Fprintf(out, "  filter OnUpdate(web, web with new status): skip, %s\n", why)

	mark = log.mark()
	entered, release := ctl.gate.hold(key(c.Namespace, "web"))
	defer release()
	rv, err := patchRelease(ctx, deploys, "web", "v5")
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "  patch deployment/web  rv=%s  release=v5"+
		"  (its sync will be held after reading)\n", rv)
	select {
	case <-entered:
	case <-ctx.Done():
		return fmt.Errorf("waiting for web's sync to start: %w", ctx.Err())
	}
	rv, err = patchRelease(ctx, deploys, "web", "v6")
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "  patch deployment/web  rv=%s  release=v6  (while that sync is held)\n", rv)
	if err := log.waitFor(ctx, mark, "the handler to see release=v6",
		handlerSaw(rv)); err != nil {
		return err
	}
	fmt.Fprintf(out, "  queue length %d: web is being processed, so its Add only marked it dirty\n",
		queue.Len())
	release()
	fmt.Fprintln(out, "  release the held sync")
	if err := log.waitFor(ctx, mark, "web to sync twice",
		synced(2, "web")); err != nil {
		return err
	}
	printRecords(out, log.since(mark))
	fmt.Fprintf(out, "  most syncs of one key at the same time, over the whole run: %d\n",
		ctl.flight.most())

	// Step 5. Delete, then shut down. The handler's DeleteFunc gets
	// the last known object, or a DeletedFinalStateUnknown tombstone
	// if the informer missed the delete; the key function handles
	// both. The sync finds no deployment in the lister and removes the
	// summary. Then everything stops, in order.
	fmt.Fprintln(out, "\nStep 5. Delete, then shut down: informers, queue, workers")
	mark = log.mark()
	if err := deploys.Delete(ctx, "api", metav1.DeleteOptions{}); err != nil {
		return err
	}
	fmt.Fprintln(out, "  delete deployment/api")
	if err := log.waitFor(ctx, mark, "api's delete to sync",
		synced(1, "api")); err != nil {
		return err
	}
	printRecords(out, log.since(mark))
	stop()
	fmt.Fprintln(out, "  informers stopped (context canceled, factory.Shutdown returned)")
	fmt.Fprintf(out, "  queue.ShutDown: Get reported shutdown, %d workers returned\n", workers)
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

// controller keeps configmap/<name>-summary in sync with each Deployment.
type controller struct {
	client kubernetes.Interface
	lister appslisters.DeploymentLister
	queue  workqueue.TypedRateLimitingInterface[string]
	// sync is syncDeployment; tests swap in their own.
	sync func(ctx context.Context, key string) (result, error)

	// The chapter's window into the controller, not part of the
	// pattern: what it did, the backoff it was given, how many syncs
	// of one key ran at once, and a gate to hold one sync (step 4).
	log     *journal
	limiter *shownLimiter
	flight  inFlight
	gate    gate
}

func newController(client kubernetes.Interface, lister appslisters.DeploymentLister,
	queue workqueue.TypedRateLimitingInterface[string], log *journal) *controller {
	c := &controller{client: client, lister: lister, queue: queue, log: log}
	c.sync = c.syncDeployment
	return c
}

// handler turns informer events into keys. It does no work itself:
// handlers run one at a time on the informer's goroutine for this
// handler, and a slow one delays every later event.
func (c *controller) handler() cache.ResourceEventHandlerFuncs {
	return cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) { c.enqueue("ADD", obj) },
		UpdateFunc: func(old, new any) {
			if skip, _ := skipUpdate(old, new); skip {
				return
			}
			c.enqueue("UPDATE", new)
		},
		// obj is the deleted Deployment, or a DeletedFinalStateUnknown
		// if the informer only noticed the delete on a relist.
		DeleteFunc: func(obj any) { c.enqueue("DELETE", obj) },
	}
}

// enqueue adds obj's namespace/name key. DeletionHandlingMetaNamespaceKeyFunc
// unwraps a tombstone (MetaNamespaceKeyFunc would fail on one).
func (c *controller) enqueue(event string, obj any) {
	key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
	if err != nil {
		utilruntime.HandleError(err)
		return
	}
	// Add and record under the journal's lock: no worker can record
	// this key's sync before the handler's record is in.
	c.log.addAfter(func() { c.queue.Add(key) },
		record{handler: true, event: event, key: key, obj: deploymentOf(obj)})
}

// skipUpdate says whether an update cannot change the summary. With a
// resync period, a shared informer replays every cached object as
// OnUpdate(obj, obj): same resourceVersion. On a real cluster the
// deployment controller writes the status of our paused deployments:
// new resourceVersion, same generation and labels.
func skipUpdate(old, new any) (bool, string) {
	o, ok1 := old.(*appsv1.Deployment)
	n, ok2 := new.(*appsv1.Deployment)
	switch {
	case !ok1 || !ok2:
		return false, ""
	case o.ResourceVersion == n.ResourceVersion:
		return true, "same resourceVersion"
	case o.Generation == n.Generation && maps.Equal(o.Labels, n.Labels):
		return true, "same generation and labels"
	}
	return false, ""
}

// runWorker processes keys until the queue shuts down.
func (c *controller) runWorker(ctx context.Context) {
	for c.processNextWorkItem(ctx) {
	}
}

// processNextWorkItem is one turn of a worker: Get a key, sync it,
// then either Forget it (success) or AddRateLimited (retry later),
// and always Done. Between Get and Done the key is "processing": no
// other worker can Get it, and an Add only marks it dirty.
func (c *controller) processNextWorkItem(ctx context.Context) bool {
	key, shutdown := c.queue.Get()
	if shutdown {
		return false
	}
	defer c.queue.Done(key)

	try := c.queue.NumRequeues(key) + 1
	c.flight.begin(key)
	res, err := c.sync(ctx, key)
	c.flight.end(key)
	rec := record{key: key, obj: res.obj, try: try, did: res.did}
	if err != nil {
		c.queue.AddRateLimited(key)
		rec.err, rec.backoff = err, c.limiter.last(key)
	} else {
		c.queue.Forget(key)
		rec.synced = true
	}
	// Logged before Done: until then no other worker can get this
	// key, so a key's records are in the order its syncs ran.
	c.log.add(rec)
	return true
}

// result is what one sync did, for the journal.
type result struct {
	obj *appsv1.Deployment // what it read from the lister, nil if gone
	did string
}

// syncDeployment makes configmap/<name>-summary match the Deployment
// named by key. It reads the Deployment from the lister (the informer's
// cache), never from the API server: the key says which object, the
// cache says what it looks like now.
func (c *controller) syncDeployment(ctx context.Context, key string) (result, error) {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		utilruntime.HandleError(err)
		return result{did: "bad key, dropped"}, nil // retrying cannot help
	}
	cms := c.client.CoreV1().ConfigMaps(ns)
	cmName := name + "-summary"
	d, err := c.lister.Deployments(ns).Get(name)
	if apierrors.IsNotFound(err) {
		// On a real cluster the garbage collector may have deleted it
		// first (ownerReference); NotFound means done either way.
		err := cms.Delete(ctx, cmName, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return result{did: "delete configmap/" + cmName}, err
		}
		return result{did: "not in the lister: configmap/" + cmName + " gone"}, nil
	}
	if err != nil {
		return result{}, err
	}
	// d belongs to the cache, shared with every other reader: never
	// modify it. (Step 4 holds the sync here, once, after the read.)
	res := result{obj: d}
	c.gate.pass(ctx, key, func() {
		c.log.add(record{key: key, obj: d, did: "read the lister, held before writing"})
	})
	want := summaryOf(d)

	cm, err := cms.Get(ctx, cmName, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		_, err = cms.Create(ctx, newSummary(d, cmName, want), metav1.CreateOptions{})
		res.did = done(err, "create", "created") + " configmap/" + cmName
		return res, err
	case err != nil:
		return res, err
	case maps.Equal(cm.Data, want):
		res.did = "configmap/" + cmName + " already in sync"
		return res, nil
	}
	// cm came from a GET, so it is ours to change. Update sends its
	// resourceVersion: if someone wrote in between, 409 Conflict.
	cm.Data = want
	_, err = cms.Update(ctx, cm, metav1.UpdateOptions{})
	res.did = done(err, "update", "updated") + " configmap/" + cmName
	return res, err
}

// done picks the word for what a write did: "update" if it failed,
// "updated" if it worked.
func done(err error, failed, worked string) string {
	if err != nil {
		return failed
	}
	return worked
}

// summaryOf is the ConfigMap data for d: its replicas and its labels
// (the course's own label left out, it is on everything).
func summaryOf(d *appsv1.Deployment) map[string]string {
	l := labels.Set(maps.Clone(d.Labels))
	delete(l, cluster.ManagedByLabel)
	return map[string]string{
		"replicas": strconv.Itoa(int(ptr.Deref(d.Spec.Replicas, 1))),
		"labels":   l.String(),
	}
}

// newSummary is the ConfigMap for d. Its ownerReference names d as its
// controller, so a real cluster's garbage collector deletes it with d.
// (No BlockOwnerDeletion: nothing here deletes in the foreground, and
// setting it can need extra RBAC.)
func newSummary(d *appsv1.Deployment, name string, data map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{
			Name:   name,
			Labels: cluster.Labels("summary-of", d.Name),
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "apps/v1", Kind: "Deployment",
				Name: d.Name, UID: d.UID, Controller: ptr.To(true),
			}},
		},
		Data: data,
	}
}

// newDeployment is a Deployment that no real cluster will run: it is
// paused with 0 replicas, so the deployment controller creates no
// ReplicaSet (it only writes the status), and its pod template carries
// a scheduling gate in case a pod were ever made.
func newDeployment(name string) *appsv1.Deployment {
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{
			Name:   name,
			Labels: cluster.Labels("app", name, "release", "v1"),
		},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](0),
			Paused:   true,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: cluster.Labels("app", name)},
				Spec: corev1.PodSpec{
					SchedulingGates: []corev1.PodSchedulingGate{{Name: "walkthrough/hold"}},
					Containers:      []corev1.Container{{Name: name, Image: "nginx:1.27"}},
				},
			},
		},
	}
}

// patchRelease sets the release label with a merge patch, which
// carries no resourceVersion: on a real cluster the deployment
// controller writes the status meanwhile, and an Update could conflict.
func patchRelease(ctx context.Context, deploys appsclient.DeploymentInterface,
	name, release string) (string, error) {
	patch := fmt.Sprintf(`{"metadata":{"labels":{"release":%q}}}`, release)
	d, err := deploys.Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
	if err != nil {
		return "", err
	}
	return d.ResourceVersion, nil
}

func key(namespace, name string) string { return namespace + "/" + name }

// deploymentOf unwraps what a handler was given: a Deployment, or a
// tombstone that may (or may not) hold one.
func deploymentOf(obj any) *appsv1.Deployment {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	d, _ := obj.(*appsv1.Deployment)
	return d
}

// A record is one thing the handler or a worker did.
type record struct {
	handler bool   // from the event handler; otherwise from a worker
	event   string // ADD, UPDATE, DELETE (handler)
	key     string
	obj     *appsv1.Deployment // the object seen, if any
	try     int                // worker: 1 for the first attempt
	did     string             // worker: what the sync did
	err     error              // worker: why the sync failed
	backoff time.Duration      // worker: the delay AddRateLimited was given
	synced  bool               // worker: the sync succeeded (Forget)
}

func (r record) String() string {
	if r.handler {
		s := fmt.Sprintf("  handler %-6s %s  rv=%s", r.event, r.key, rvOf(r.obj))
		if r.event != "DELETE" { // a deleted object's labels are beside the point
			s += "  release=" + releaseOf(r.obj)
		}
		return s + "  → Add"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "  worker  sync   %s", r.key)
	if r.obj != nil {
		fmt.Fprintf(&b, "  release=%s", releaseOf(r.obj))
	}
	if r.try > 1 || r.err != nil {
		fmt.Fprintf(&b, "  try %d", r.try)
	}
	if r.err != nil {
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

func printRecords(out io.Writer, recs []record) {
	for _, r := range recs {
		fmt.Fprintln(out, r)
	}
}

// sortedByKey orders records by key, keeping each key's own order (a
// key's syncs never overlap, so that order is real).
func sortedByKey(recs []record) []record {
	recs = slices.Clone(recs)
	slices.SortStableFunc(recs, func(a, b record) int { return strings.Compare(a.key, b.key) })
	return recs
}

// journal is an append-only log that run can wait on. Every add wakes
// the waiters by closing a channel: no polling, no sleeping.
type journal struct {
	mu      sync.Mutex
	recs    []record
	changed chan struct{}
}

func newJournal() *journal { return &journal{changed: make(chan struct{})} }

func (j *journal) add(r record) { j.addAfter(func() {}, r) }

// addAfter runs do, then appends r, holding the lock throughout.
func (j *journal) addAfter(do func(), r record) {
	j.mu.Lock()
	defer j.mu.Unlock()
	do()
	j.recs = append(j.recs, r)
	close(j.changed)
	j.changed = make(chan struct{})
}

// mark is a position in the journal, for since and waitFor.
func (j *journal) mark() int {
	j.mu.Lock()
	defer j.mu.Unlock()
	return len(j.recs)
}

func (j *journal) since(mark int) []record {
	j.mu.Lock()
	defer j.mu.Unlock()
	return slices.Clone(j.recs[mark:])
}

// waitFor blocks until done is true of the records after mark.
func (j *journal) waitFor(ctx context.Context, mark int, what string,
	done func([]record) bool) error {
	for {
		j.mu.Lock()
		recs, changed := j.recs[mark:], j.changed
		ok := done(recs)
		j.mu.Unlock()
		if ok {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: %w", what, ctx.Err())
		}
	}
}

// handlerSaw is true once the handler has enqueued an object at each rv.
func handlerSaw(rvs ...string) func([]record) bool {
	return func(recs []record) bool {
		seen := map[string]bool{}
		for _, r := range recs {
			if r.handler {
				seen[rvOf(r.obj)] = true
			}
		}
		for _, rv := range rvs {
			if !seen[rv] {
				return false
			}
		}
		return true
	}
}

// synced is true once each named object has had n successful syncs.
func synced(n int, names ...string) func([]record) bool {
	return func(recs []record) bool {
		count := map[string]int{}
		for _, r := range recs {
			if r.synced {
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

// shownLimiter is a rate limiter that remembers the delay it last gave
// each key, so the worker can print it. A TypedRateLimiter is just
// When (how long to wait, counting a failure), NumRequeues and Forget.
type shownLimiter struct {
	workqueue.TypedRateLimiter[string]
	mu     sync.Mutex
	delays map[string]time.Duration
}

func newShownLimiter(l workqueue.TypedRateLimiter[string]) *shownLimiter {
	return &shownLimiter{TypedRateLimiter: l, delays: map[string]time.Duration{}}
}

func (l *shownLimiter) When(key string) time.Duration {
	d := l.TypedRateLimiter.When(key)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.delays[key] = d
	return d
}

func (l *shownLimiter) last(key string) time.Duration {
	if l == nil {
		return 0
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.delays[key]
}

// inFlight counts the syncs of each key running right now, and the
// most ever seen at once. The workqueue promises the most is 1.
type inFlight struct {
	mu  sync.Mutex
	now map[string]int
	max int
}

func (f *inFlight) begin(key string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.now == nil {
		f.now = map[string]int{}
	}
	f.now[key]++
	f.max = max(f.max, f.now[key])
}

func (f *inFlight) end(key string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.now[key]--
}

func (f *inFlight) most() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.max
}

// gate holds one sync of one key after it has read the lister, so that
// step 4 can change the object while that sync is in flight.
type gate struct {
	mu      sync.Mutex
	key     string
	entered chan struct{}
	open    chan struct{}
}

// hold arms the gate for key's next sync. entered is closed when that
// sync arrives; release lets it go on.
func (g *gate) hold(key string) (entered <-chan struct{}, release func()) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.key, g.entered, g.open = key, make(chan struct{}), make(chan struct{})
	open := g.open
	return g.entered, sync.OnceFunc(func() { close(open) })
}

// pass is called by every sync; it blocks only the one sync it holds,
// calling held first.
func (g *gate) pass(ctx context.Context, key string, held func()) {
	g.mu.Lock()
	if g.key == "" || g.key != key {
		g.mu.Unlock()
		return
	}
	entered, open := g.entered, g.open
	g.key = "" // hold once
	g.mu.Unlock()
	held()
	close(entered)
	select {
	case <-open:
	case <-ctx.Done():
	}
}
