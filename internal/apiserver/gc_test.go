package apiserver

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/utils/ptr"
)

// The garbage collection tests here show, through client-go, what the
// workshop cluster's collector does for each propagation policy, in the
// one order it does it. gc_transcript_test.go checks the same against
// what kube-apiserver and kube-controller-manager v1.37.2 answered and
// streamed (testdata/transcripts 120-134, recorded by
// hack/realk8s/record-gc.sh). A DELETED event carries the object as it
// was last stored: an owner that its last finalizer held still lists
// it there (transcripts 122, 123).

// gcFamily is an owner ConfigMap and three dependents: "blocking" with
// blockOwnerDeletion, "plain" without, and "shared", which has a second
// owner that stays.
type gcFamily struct {
	t     *testing.T
	cms   typedcorev1.ConfigMapInterface
	owner *corev1.ConfigMap
	w     watch.Interface
}

func newGCFamily(t *testing.T, opts Options) *gcFamily {
	t.Helper()
	opts.Bootstrap = true
	s := startServerWith(t, opts)
	cms := kubernetes.NewForConfigOrDie(s.Config()).CoreV1().ConfigMaps("default")
	ctx := t.Context()
	create := func(name string, refs ...metav1.OwnerReference) *corev1.ConfigMap {
		cm, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, OwnerReferences: refs}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return cm
	}
	ref := func(o *corev1.ConfigMap, block bool) metav1.OwnerReference {
		r := metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: o.Name, UID: o.UID}
		if block {
			r.BlockOwnerDeletion = ptr.To(true)
		}
		return r
	}
	owner := create("owner")
	other := create("other-owner")
	create("blocking", ref(owner, true))
	create("plain", ref(owner, false))
	create("shared", ref(owner, false), ref(other, false))
	// The collector reads the creates' ADDED events in turn, behind the
	// test's writes. A delete of the owner that overtook them would have
	// it delete a dependent on its ADDED event, ahead of the order the
	// owner's own event gives (sorted by name): the events' order would
	// depend on timing, as a real collector's does. Let it catch up.
	if s.store.gc != nil {
		s.store.gc.settle()
	}
	w, err := cms.Watch(ctx, metav1.ListOptions{ResourceVersion: s.ResourceVersion()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	return &gcFamily{t: t, cms: cms, owner: owner, w: w}
}

// until reads the watch, one line per event ("DELETED plain", "MODIFIED
// owner finalizers=[orphan] owners=[]"), until done says so, and
// returns the lines.
func (f *gcFamily) until(done func(seen []string) bool) []string {
	f.t.Helper()
	ctx, cancel := context.WithTimeout(f.t.Context(), 10*time.Second)
	defer cancel()
	var seen []string
	for !done(seen) {
		select {
		case ev := <-f.w.ResultChan():
			cm := ev.Object.(*corev1.ConfigMap)
			var owners []string
			for _, r := range cm.OwnerReferences {
				owners = append(owners, r.Name)
			}
			seen = append(seen, fmt.Sprintf("%s %s deleting=%v finalizers=%v owners=%v",
				ev.Type, cm.Name, cm.DeletionTimestamp != nil, cm.Finalizers, owners))
		case <-ctx.Done():
			f.t.Fatalf("waited for the collector; saw:\n%s", strings.Join(seen, "\n"))
		}
	}
	return seen
}

func (f *gcFamily) delete(policy *metav1.DeletionPropagation) {
	f.t.Helper()
	if err := f.cms.Delete(f.t.Context(), "owner", metav1.DeleteOptions{PropagationPolicy: policy}); err != nil {
		f.t.Fatal(err)
	}
}

func (f *gcFamily) left() []string {
	f.t.Helper()
	l, err := f.cms.List(f.t.Context(), metav1.ListOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	var names []string
	for _, cm := range l.Items {
		if cm.Name != "kube-root-ca.crt" {
			names = append(names, cm.Name)
		}
	}
	return names
}

func deleted(name string) func(string) bool {
	return func(l string) bool { return strings.HasPrefix(l, "DELETED "+name+" ") }
}

func sawAll(names ...string) func([]string) bool {
	return func(seen []string) bool {
		for _, n := range names {
			if !slices.ContainsFunc(seen, deleted(n)) {
				return false
			}
		}
		return true
	}
}

func same(t *testing.T, what string, got, want []string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("%s:\n got %q\nwant %q", what, got, want)
	}
}

// TestGCBackground: the owner is deleted at once (no finalizer); then
// the collector deletes the dependents it owned alone, and removes the
// reference to it from the one with another owner. Background is also
// what no policy means.
func TestGCBackground(t *testing.T) {
	for _, policy := range []*metav1.DeletionPropagation{nil, ptr.To(metav1.DeletePropagationBackground)} {
		f := newGCFamily(t, Options{GarbageCollection: true})
		f.delete(policy)
		same(t, "events", f.until(func(seen []string) bool { return len(seen) == 4 }), []string{
			"DELETED owner deleting=false finalizers=[] owners=[]",
			"DELETED blocking deleting=false finalizers=[] owners=[owner]",
			"DELETED plain deleting=false finalizers=[] owners=[owner]",
			"MODIFIED shared deleting=false finalizers=[] owners=[other-owner]",
		})
		same(t, "left", f.left(), []string{"other-owner", "shared"})
	}
}

// TestGCForeground: the owner is marked first (deletionTimestamp, the
// foregroundDeletion finalizer); the collector deletes its dependents,
// and only once none with blockOwnerDeletion is left does the owner lose
// the finalizer, which deletes it.
func TestGCForeground(t *testing.T) {
	f := newGCFamily(t, Options{GarbageCollection: true})
	f.delete(ptr.To(metav1.DeletePropagationForeground))
	same(t, "events", f.until(func(seen []string) bool { return len(seen) == 5 }), []string{
		"MODIFIED owner deleting=true finalizers=[foregroundDeletion] owners=[]",
		"DELETED blocking deleting=false finalizers=[] owners=[owner]",
		"DELETED plain deleting=false finalizers=[] owners=[owner]",
		"MODIFIED shared deleting=false finalizers=[] owners=[other-owner]",
		"DELETED owner deleting=true finalizers=[foregroundDeletion] owners=[]",
	})
	same(t, "left", f.left(), []string{"other-owner", "shared"})
}

// TestGCForegroundChain: a dependent with dependents of its own, when
// its owner waits for it, is itself deleted in the foreground, so the
// deepest goes first.
func TestGCForegroundChain(t *testing.T) {
	f := newGCFamily(t, Options{GarbageCollection: true})
	ctx := t.Context()
	blocking, err := f.cms.Get(ctx, "blocking", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	leaf := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "leaf", OwnerReferences: []metav1.OwnerReference{{
		APIVersion: "v1", Kind: "ConfigMap", Name: "blocking", UID: blocking.UID, BlockOwnerDeletion: ptr.To(true),
	}}}}
	if _, err := f.cms.Create(ctx, leaf, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	f.delete(ptr.To(metav1.DeletePropagationForeground))
	same(t, "events", f.until(sawAll("owner")), []string{
		"ADDED leaf deleting=false finalizers=[] owners=[blocking]",
		"MODIFIED owner deleting=true finalizers=[foregroundDeletion] owners=[]",
		"MODIFIED blocking deleting=true finalizers=[foregroundDeletion] owners=[owner]",
		"DELETED plain deleting=false finalizers=[] owners=[owner]",
		"MODIFIED shared deleting=false finalizers=[] owners=[other-owner]",
		"DELETED leaf deleting=false finalizers=[] owners=[blocking]",
		"DELETED blocking deleting=true finalizers=[foregroundDeletion] owners=[owner]",
		"DELETED owner deleting=true finalizers=[foregroundDeletion] owners=[]",
	})
}

// TestGCOwnerAlreadyGone: an object created with an owner that does not
// exist (no object of that name, or one with another uid) is deleted.
func TestGCOwnerAlreadyGone(t *testing.T) {
	f := newGCFamily(t, Options{GarbageCollection: true})
	orphan := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "late", OwnerReferences: []metav1.OwnerReference{{
		APIVersion: "v1", Kind: "ConfigMap", Name: "owner", UID: "not-the-owners-uid",
	}}}}
	if _, err := f.cms.Create(t.Context(), orphan, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	same(t, "events", f.until(sawAll("late")), []string{
		"ADDED late deleting=false finalizers=[] owners=[owner]",
		"DELETED late deleting=false finalizers=[] owners=[owner]",
	})
}

// TestGCOrphan: the owner is marked with the orphan finalizer; its
// dependents lose their reference to it and stay; then it goes.
func TestGCOrphan(t *testing.T) {
	f := newGCFamily(t, Options{GarbageCollection: true})
	f.delete(ptr.To(metav1.DeletePropagationOrphan))
	seen := f.until(sawAll("owner"))
	want := []string{
		"MODIFIED owner deleting=true finalizers=[orphan] owners=[]",
		"MODIFIED blocking deleting=false finalizers=[] owners=[]",
		"MODIFIED plain deleting=false finalizers=[] owners=[]",
		"MODIFIED shared deleting=false finalizers=[] owners=[other-owner]",
		"DELETED owner deleting=true finalizers=[orphan] owners=[]",
	}
	same(t, "events", seen, want)
	same(t, "left", f.left(), []string{"blocking", "other-owner", "plain", "shared"})
}

// TestGCDeleteCollection: a collection's DELETE passes its policy to
// each delete, as kube-apiserver's DeleteCollection does.
func TestGCDeleteCollection(t *testing.T) {
	f := newGCFamily(t, Options{GarbageCollection: true})
	err := f.cms.DeleteCollection(t.Context(), metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationOrphan)},
		metav1.ListOptions{FieldSelector: "metadata.name=owner"})
	if err != nil {
		t.Fatal(err)
	}
	seen := f.until(sawAll("owner"))
	same(t, "first and last events", []string{seen[0], seen[len(seen)-1]}, []string{
		"MODIFIED owner deleting=true finalizers=[orphan] owners=[]",
		"DELETED owner deleting=true finalizers=[orphan] owners=[]",
	})
	same(t, "left", f.left(), []string{"blocking", "other-owner", "plain", "shared"})
}

// TestGCOff: without the option, the server is kube-apiserver with
// --enable-garbage-collector=false: a Foreground delete deletes at once,
// adds no finalizer, and the dependents stay, their references dangling.
func TestGCOff(t *testing.T) {
	f := newGCFamily(t, Options{})
	f.delete(ptr.To(metav1.DeletePropagationForeground))
	same(t, "events", f.until(sawAll("owner")), []string{"DELETED owner deleting=false finalizers=[] owners=[]"})
	same(t, "left", f.left(), []string{"blocking", "other-owner", "plain", "shared"})
	if _, err := f.cms.Get(t.Context(), "owner", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("owner: %v, want NotFound", err)
	}
}
