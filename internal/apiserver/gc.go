package apiserver

import (
	"fmt"
	"slices"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/watch"
)

// Garbage collection (Options.GarbageCollection) is two things on a
// real cluster, and two here:
//
//   - kube-apiserver, started with --enable-garbage-collector (its
//     default), turns a DELETE's propagationPolicy into a finalizer:
//     Orphan adds "orphan", Foreground adds "foregroundDeletion", and the
//     object is then only marked (deletionTimestamp) until they are
//     removed; Background adds none and deletes at once
//     (deletionFinalizersForGarbageCollection in k8s.io/apiserver
//     pkg/registry/generic/registry/store.go). deletionFinalizers below
//     is that function; store.deleteLockedWith calls it.
//   - kube-controller-manager's garbage collector acts on
//     ownerReferences: the collector below, after attemptToDeleteItem,
//     processDeletingDependentsItem and orphanDependents in
//     https://github.com/kubernetes/kubernetes/blob/v1.37.2/pkg/controller/garbagecollector/garbagecollector.go
//     (and, for which events start them, graph_builder.go beside it).
//     It runs after the writes, on a goroutine of its own, as the
//     controller runs after them on a real cluster; where that
//     controller patches, it writes the object back under the store's
//     lock, which no other write can come between.
//
// Without the option the server is kube-apiserver with
// --enable-garbage-collector=false: no finalizers are added, and
// ownerReferences are stored, never acted on. (envtest's kube-apiserver
// keeps the flag's default, true, with no controller-manager: there a
// Foreground or Orphan delete leaves the object marked for ever.)
//
// Each behaviour here is checked against a real control plane
// (kube-apiserver and kube-controller-manager v1.37.2, recorded with
// hack/realk8s/record-gc.sh into testdata/transcripts 120-134;
// gc_transcript_test.go replays them): an owner ConfigMap with a
// dependent with blockOwnerDeletion, one without, and one with a second
// owner that stays, deleted with each policy (120-125); a Foreground
// delete that waits for a dependent held by a finalizer of its own,
// and a chain of three (126); dependents whose owner does not exist
// (127); a Foreground delete that does not wait for a dependent
// without blockOwnerDeletion (134); a collection's DELETE with Orphan
// (132); a namespaced dependent of a cluster-scoped owner (133). What
// the recordings show, beside the code named above:
//
//   - The collector's writes only remove (ownerReferences, its
//     finalizers), so they add no managedFields entry of their own:
//     the entry that owned what was removed loses it.
//   - An object whose last finalizer an update removes is deleted by
//     that update (k8s.io/apiserver's deleteWithoutFinalizers): the
//     DELETED event carries the object as it was stored, finalizers
//     still listed, at a new resourceVersion, and the update is
//     answered with the object the update made, at the old one (126,
//     128). store.updateLocked does the same.
//   - The order in which the collector handles an owner's dependents is
//     its workers', not fixed (120 and 121 differ); the order that
//     follows from the rules is: a Background owner is gone before its
//     dependents change, a Foreground or Orphan owner is marked before
//     and gone after.
//   - Without kube-controller-manager (131; envtest's case) a
//     Foreground delete marks the owner and nothing ever removes the
//     finalizer. This server without the option is kube-apiserver with
//     --enable-garbage-collector=false instead: no finalizer is added.
//
// The DELETE details beside it, also recorded (beforeDelete below,
// server.go and store.go): preconditions (129), 202 Accepted only for
// orphanDependents=false (128), a DELETE of an object already being
// deleted (128), a collection's DELETE answered with the list as it was
// listed (132).

// deletionFinalizers returns an object's finalizers as a DELETE with
// opts leaves them: the orphan and foregroundDeletion finalizers
// removed, then the one the options ask for added. The options win
// over finalizers the object already has, which win over the default,
// Background (every kind served here has Background as its default
// policy, as apps/v1 and the core kinds do).
func deletionFinalizers(existing []string, opts *metav1.DeleteOptions) []string {
	orphan := slices.Contains(existing, metav1.FinalizerOrphanDependents)
	foreground := slices.Contains(existing, metav1.FinalizerDeleteDependents)
	//nolint:staticcheck // SA1019: orphanDependents is still honoured, as kube-apiserver does
	if o := opts.OrphanDependents; o != nil {
		orphan, foreground = *o, false
	} else if p := opts.PropagationPolicy; p != nil {
		orphan = *p == metav1.DeletePropagationOrphan
		foreground = *p == metav1.DeletePropagationForeground
	}
	var out []string
	for _, f := range existing {
		if f != metav1.FinalizerOrphanDependents && f != metav1.FinalizerDeleteDependents {
			out = append(out, f)
		}
	}
	if orphan {
		out = append(out, metav1.FinalizerOrphanDependents)
	}
	if foreground {
		out = append(out, metav1.FinalizerDeleteDependents)
	}
	if sets.New(out...).Equal(sets.New(existing...)) {
		return existing // no change: the order kept, as kube-apiserver keeps it
	}
	return out
}

// beforeDelete is what kube-apiserver's Store.Delete does before it
// marks or removes an object (k8s.io/apiserver
// pkg/registry/generic/registry/store.go, rest.BeforeDelete and
// updateForGracefulDeletionAndFinalizers), for the kinds served by that
// generic registry (namespaces and CRDs have registries of their own),
// after checkDeletePreconditions and validating admission:
//
//   - an object already being deleted is not deleted again, but the
//     DELETE still sets the deletion finalizers its options ask for
//     (a Foreground or Orphan delete of an object that a finalizer
//     holds adds one, which the collector then removes), and is
//     answered with the object; if that leaves it no finalizer, it goes
//     (transcript 128).
//
// done reports that it has answered.
func (s *store) beforeDelete(res *Resource, old runtime.Object, opts *metav1.DeleteOptions) (out deleteResult, done bool, err error) {
	if res.Hooks != nil && res.Hooks.Delete != nil || res.DeleteContents != nil {
		return deleteResult{}, false, nil
	}
	m := metaOf(old)
	if m.GetDeletionTimestamp() == nil {
		return deleteResult{}, false, nil
	}
	finalizers := m.GetFinalizers()
	if s.gc != nil {
		finalizers = deletionFinalizers(finalizers, opts)
	}
	switch {
	case len(finalizers) == 0:
		final := old.DeepCopyObject()
		if err := s.commit(res, watch.Deleted, final, old); err != nil {
			return deleteResult{}, true, err
		}
		if res.GracefulDelete {
			return deleteResult{Object: final.DeepCopyObject()}, true, nil
		}
		return deleteResult{Status: &metav1.Status{
			Status:  metav1.StatusSuccess,
			Details: &metav1.StatusDetails{Name: m.GetName(), Group: res.GVR.Group, Kind: res.GVR.Resource, UID: m.GetUID()},
		}}, true, nil
	case slices.Equal(finalizers, m.GetFinalizers()):
		return deleteResult{Object: old.DeepCopyObject(), Pending: true}, true, nil
	}
	next := old.DeepCopyObject()
	metaOf(next).SetFinalizers(finalizers)
	if err := s.commit(res, watch.Modified, next, old); err != nil {
		return deleteResult{}, true, err
	}
	return deleteResult{Object: next.DeepCopyObject(), Pending: true}, true, nil
}

// checkDeletePreconditions is rest.BeforeDelete's first check: a uid or
// resourceVersion in the DELETE's preconditions that does not match is a
// 409 Conflict that names the kind (not the resource), as kube-apiserver
// words it (transcript 129). Namespaces and CRDs, whose registries word it
// their own way, are not checked (nothing was recorded for them).
func checkDeletePreconditions(res *Resource, old runtime.Object, opts *metav1.DeleteOptions) error {
	p := opts.Preconditions
	if p == nil || res.Hooks != nil && res.Hooks.Delete != nil || res.DeleteContents != nil {
		return nil
	}
	m := metaOf(old)
	kind := schema.GroupResource{Group: res.GVR.Group, Resource: res.Kind}
	if p.UID != nil && *p.UID != m.GetUID() {
		return apierrors.NewConflict(kind, m.GetName(), fmt.Errorf("the UID in the precondition (%s) does not match the UID in record (%s). The object might have been deleted and then recreated", *p.UID, m.GetUID()))
	}
	if p.ResourceVersion != nil && *p.ResourceVersion != m.GetResourceVersion() {
		return apierrors.NewConflict(kind, m.GetName(), fmt.Errorf("the ResourceVersion in the precondition (%s) does not match the ResourceVersion in record (%s). The object might have been modified", *p.ResourceVersion, m.GetResourceVersion()))
	}
	return nil
}

// gcManager is the field manager of the collector's writes, as
// kube-controller-manager's requests carry its name.
const gcManager = "kube-controller-manager"

// collector is the garbage collector: it reads every committed event
// from a queue that commit fills (and never waits on) and acts on it as
// kube-controller-manager's collector acts on its graph:
//
//   - an object whose owners are all gone is deleted (attemptToDelete);
//     one with an owner left loses its references to the gone ones;
//   - an owner marked with foregroundDeletion gets its dependents
//     deleted, and loses the finalizer once no dependent that has
//     blockOwnerDeletion is left (processDeletingDependents);
//   - an owner marked with orphan has its references removed from its
//     dependents, then loses the finalizer (orphanDependents).
//
// Each action is a write of its own, under the store's lock, and makes
// events the collector reads in turn, until nothing is left to do.
type collector struct {
	s *store

	mu    sync.Mutex
	queue []event
	busy  bool          // acting on an event taken from the queue
	ended bool          // run has returned
	idle  *sync.Cond    // on mu: broadcast when the queue is empty and nothing is being acted on
	wake  chan struct{} // one pending wake-up
	stop  chan struct{}
	done  chan struct{}
}

func startCollector(s *store) *collector {
	c := &collector{s: s, wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	c.idle = sync.NewCond(&c.mu)
	go c.run()
	return c
}

// enqueue is called by commit, under the store's lock: it must not
// block, so the queue grows instead.
func (c *collector) enqueue(ev event) {
	c.mu.Lock()
	c.queue = append(c.queue, ev)
	c.mu.Unlock()
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// close stops the collector and waits for it; what is queued is dropped.
func (c *collector) close() {
	close(c.stop)
	<-c.done
}

// settle waits until the collector has acted on every event committed
// so far, and on those its own writes made: what a real cluster's
// collector has done a moment after a write. (Tests only.)
func (c *collector) settle() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for (len(c.queue) > 0 || c.busy) && !c.ended {
		c.idle.Wait()
	}
}

func (c *collector) run() {
	defer close(c.done)
	defer func() { // nothing more will be done: release settle
		c.mu.Lock()
		c.queue, c.busy, c.ended = nil, false, true
		c.idle.Broadcast()
		c.mu.Unlock()
	}()
	for {
		select {
		case <-c.stop:
			return
		case <-c.wake:
		}
		for {
			c.mu.Lock()
			if len(c.queue) == 0 {
				c.busy = false
				c.idle.Broadcast()
				c.mu.Unlock()
				break
			}
			ev := c.queue[0]
			c.queue = c.queue[1:]
			c.busy = true
			c.mu.Unlock()
			select {
			case <-c.stop:
				return
			default:
			}
			c.s.mu.Lock()
			c.handle(ev)
			c.s.mu.Unlock()
		}
	}
}

// handle acts on one event, under the store's lock.
func (c *collector) handle(ev event) {
	m := metaOf(ev.Object)
	if ev.Type == watch.Deleted {
		// Its dependents may now have no owner left; an owner waiting
		// for it (foreground) may now have no blocking dependent left.
		for _, d := range c.dependents(m.GetUID()) {
			c.attemptToDelete(d)
		}
		for _, ref := range m.GetOwnerReferences() {
			if o, _ := c.owner(m.GetNamespace(), ref); o != nil && deletingDependents(o.obj) {
				c.processDeletingDependents(*o)
			}
		}
		return
	}
	self := item{res: ev.Res, obj: ev.Object}
	switch {
	case m.GetDeletionTimestamp() != nil && slices.Contains(m.GetFinalizers(), metav1.FinalizerOrphanDependents):
		c.orphanDependents(self)
	case deletingDependents(ev.Object):
		c.processDeletingDependents(self)
	case len(m.GetOwnerReferences()) > 0:
		// A new or changed dependent: its owners may already be gone.
		c.attemptToDelete(self)
	}
}

// item is an object as the collector finds it, with a resource that
// serves it.
type item struct {
	res *Resource
	obj runtime.Object
}

// latest reads an item again: nil if it is gone, or is now another
// object of the same name, or cannot be read (a custom resource whose
// conversion webhook fails: kube-controller-manager's requests would
// fail too, and it would leave the object until they succeed).
func (c *collector) latest(it item) *item {
	m := metaOf(it.obj)
	obj, ok := c.s.objects[storageOf(it.res)][objectKey(m.GetNamespace(), m.GetName())]
	if !ok || metaOf(obj).GetUID() != m.GetUID() {
		return nil
	}
	if obj, err := view(it.res, obj); err == nil {
		return &item{res: it.res, obj: obj}
	}
	return nil
}

// dependents are the objects that name uid as an owner, in every
// resource (each storage read once, through the first resource that
// serves it), but those that cannot be read (latest).
func (c *collector) dependents(uid types.UID) []item {
	var out []item
	seen := map[any]bool{}
	for _, r := range c.s.reg.all() {
		at := storageOf(r)
		if seen[at] {
			continue
		}
		seen[at] = true
		for _, key := range sortedKeys(c.s.objects[at]) {
			obj := c.s.objects[at][key]
			for _, ref := range metaOf(obj).GetOwnerReferences() {
				if ref.UID == uid {
					if obj, err := view(r, obj); err == nil {
						out = append(out, item{res: r, obj: obj})
					}
					break
				}
			}
		}
	}
	return out
}

// owner finds the object an ownerReference names, in the dependent's
// namespace if its kind is namespaced: nil if there is none, or if it
// is another object of that name (another uid). served is false if its
// kind is not served (or its apiVersion cannot be parsed), or the owner
// cannot be read (latest): either way the dependent stays.
func (c *collector) owner(namespace string, ref metav1.OwnerReference) (o *item, served bool) {
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return nil, false
	}
	res := c.resourceOf(gv.WithKind(ref.Kind))
	if res == nil {
		return nil, false
	}
	if !res.Namespaced {
		namespace = ""
	}
	obj, ok := c.s.objects[storageOf(res)][objectKey(namespace, ref.Name)]
	if !ok || metaOf(obj).GetUID() != ref.UID {
		return nil, true
	}
	if obj, err := view(res, obj); err == nil {
		return &item{res: res, obj: obj}, true
	}
	return nil, false
}

// resourceOf is a served resource of gvk's kind: its own version if
// served, else any version of its group.
func (c *collector) resourceOf(gvk schema.GroupVersionKind) *Resource {
	var other *Resource
	for _, r := range c.s.reg.all() {
		if r.GVR.Group != gvk.Group || r.Kind != gvk.Kind {
			continue
		}
		if r.GVR.Version == gvk.Version {
			return r
		}
		if other == nil {
			other = r
		}
	}
	return other
}

// deletingDependents: marked for deletion, waiting for its dependents
// (the foregroundDeletion finalizer).
func deletingDependents(obj runtime.Object) bool {
	m := metaOf(obj)
	return m.GetDeletionTimestamp() != nil && slices.Contains(m.GetFinalizers(), metav1.FinalizerDeleteDependents)
}

// attemptToDelete is the collector's attemptToDeleteItem: a dependent
// whose owners are all gone (or being deleted in the foreground) is
// deleted; one that still has an owner keeps it and loses its
// references to the others.
func (c *collector) attemptToDelete(it item) {
	cur := c.latest(it)
	if cur == nil || metaOf(cur.obj).GetDeletionTimestamp() != nil {
		return
	}
	m := metaOf(cur.obj)
	var solid, dangling, waiting []metav1.OwnerReference
	for _, ref := range m.GetOwnerReferences() {
		switch o, served := c.owner(m.GetNamespace(), ref); {
		case !served:
			// kube-controller-manager cannot tell either, and retries
			// until the kind is served: the object stays.
			return
		case o == nil:
			dangling = append(dangling, ref)
		case deletingDependents(o.obj):
			waiting = append(waiting, ref)
		default:
			solid = append(solid, ref)
		}
	}
	switch {
	case len(dangling) == 0 && len(waiting) == 0:
		return
	case len(solid) > 0:
		gone := append(dangling, waiting...)
		c.setOwnerReferences(*cur, slices.DeleteFunc(slices.Clone(m.GetOwnerReferences()), func(ref metav1.OwnerReference) bool {
			return slices.ContainsFunc(gone, func(g metav1.OwnerReference) bool { return g.UID == ref.UID })
		}))
		return
	}
	// No owner left: delete it, in the foreground if an owner waits
	// for it and it has dependents of its own, else as its own
	// finalizers say (Background by default).
	policy := metav1.DeletePropagationBackground
	switch {
	case len(waiting) > 0 && len(c.dependents(m.GetUID())) > 0:
		policy = metav1.DeletePropagationForeground
	case slices.Contains(m.GetFinalizers(), metav1.FinalizerOrphanDependents):
		policy = metav1.DeletePropagationOrphan
	case slices.Contains(m.GetFinalizers(), metav1.FinalizerDeleteDependents):
		policy = metav1.DeletePropagationForeground
	}
	_, _ = c.s.deleteLockedWith(cur.res, m.GetNamespace(), m.GetName(), &metav1.DeleteOptions{PropagationPolicy: &policy})
}

// processDeletingDependents: an owner deleted in the foreground has
// its dependents deleted; once none with blockOwnerDeletion is left, it
// loses the foregroundDeletion finalizer (and, with no other finalizer,
// is deleted by that write).
func (c *collector) processDeletingDependents(owner item) {
	cur := c.latest(owner)
	if cur == nil || !deletingDependents(cur.obj) {
		return
	}
	uid := metaOf(cur.obj).GetUID()
	blocking := 0
	for _, d := range c.dependents(uid) {
		c.attemptToDelete(d)
		if now := c.latest(d); now != nil && blocks(now.obj, uid) {
			blocking++
		}
	}
	if blocking == 0 {
		c.removeFinalizer(*cur, metav1.FinalizerDeleteDependents)
	}
}

// blocks: obj names uid as an owner with blockOwnerDeletion.
func blocks(obj runtime.Object, uid types.UID) bool {
	for _, ref := range metaOf(obj).GetOwnerReferences() {
		if ref.UID == uid && ref.BlockOwnerDeletion != nil && *ref.BlockOwnerDeletion {
			return true
		}
	}
	return false
}

// orphanDependents: an owner deleted with Orphan has its references
// removed from its dependents, then loses the orphan finalizer.
func (c *collector) orphanDependents(owner item) {
	cur := c.latest(owner)
	if cur == nil {
		return
	}
	uid := metaOf(cur.obj).GetUID()
	for _, d := range c.dependents(uid) {
		refs := slices.DeleteFunc(slices.Clone(metaOf(d.obj).GetOwnerReferences()), func(ref metav1.OwnerReference) bool {
			return ref.UID == uid
		})
		c.setOwnerReferences(d, refs)
	}
	c.removeFinalizer(*cur, metav1.FinalizerOrphanDependents)
}

func (c *collector) setOwnerReferences(it item, refs []metav1.OwnerReference) {
	next := it.obj.DeepCopyObject()
	metaOf(next).SetOwnerReferences(refs)
	metaOf(next).SetResourceVersion("") // the collector's write wins, as its patch does
	m := metaOf(next)
	_, _ = c.s.updateLocked(it.res, m.GetNamespace(), m.GetName(), "", gcManager, next, false)
}

func (c *collector) removeFinalizer(it item, finalizer string) {
	next := it.obj.DeepCopyObject()
	m := metaOf(next)
	m.SetFinalizers(slices.DeleteFunc(slices.Clone(m.GetFinalizers()), func(f string) bool { return f == finalizer }))
	m.SetResourceVersion("")
	_, _ = c.s.updateLocked(it.res, m.GetNamespace(), m.GetName(), "", gcManager, next, false)
}
