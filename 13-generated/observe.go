package main

// What chapter 13 needs only to show the generated code at work, not
// what it teaches: one line for a memo, a watch event or a request; the
// handler its informers report to (it runs on their goroutines, so it
// sends a line to a show.Lines and the step prints in an order it
// controls, and records the call for --trace); and the print functions.
// Kept apart from the lesson, so that it can move to the course's shared
// taps as they come.

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"reflect"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"

	coursev1alpha1 "github.com/informer-walkthrough/informer-walkthrough/13-generated/apis/course/v1alpha1"
	"github.com/informer-walkthrough/informer-walkthrough/internal/apiserver"
	"github.com/informer-walkthrough/informer-walkthrough/internal/cluster"
	"github.com/informer-walkthrough/informer-walkthrough/internal/heap"
	"github.com/informer-walkthrough/informer-walkthrough/internal/show"
	"github.com/informer-walkthrough/informer-walkthrough/internal/tap"
)

// printCRD prints the CRD's names and what it serves.
func printCRD(out io.Writer, crd *apiextensionsv1.CustomResourceDefinition) {
	v := crd.Spec.Versions[0]
	var columns []string
	for _, col := range v.AdditionalPrinterColumns {
		columns = append(columns, col.Name)
	}
	fmt.Fprintf(out, "  customresourcedefinition/%s  Established\n", crd.Name)
	fmt.Fprintf(out, "    serves %s/%s %s (kind %s), subresource status, columns %s\n",
		crd.Spec.Group, v.Name, crd.Spec.Names.Plural, crd.Spec.Names.Kind,
		strings.Join(columns, " "))
}

// memoLine is one line for a memo: name, text, resourceVersion, and the
// status once the controller has written one.
func memoLine(m *coursev1alpha1.Memo) string {
	s := fmt.Sprintf("memo/%s  %q  rv=%s", m.Name, m.Spec.Text, m.ResourceVersion)
	if m.Status.ConfigMap != "" {
		s += fmt.Sprintf("  status: configMap=%s observedGeneration=%d",
			m.Status.ConfigMap, m.Status.ObservedGeneration)
	}
	return s
}

// printCreated prints what Create returned.
func printCreated(out io.Writer, m *coursev1alpha1.Memo) {
	fmt.Fprintf(out, "  created %s\n", memoLine(m))
}

// printList prints what List returned: its Go type and its items.
func printList(out io.Writer, list *coursev1alpha1.MemoList) {
	fmt.Fprintf(out, "  List returns a %T, rv=%s; its items are %T:\n",
		list, list.ResourceVersion, list.Items[0])
	for i := range list.Items {
		fmt.Fprintf(out, "    %s\n", memoLine(&list.Items[i]))
	}
}

// nextEvent returns the watch's next event, or ctx's end.
func nextEvent(ctx context.Context, w watch.Interface) (watch.Event, error) {
	select {
	case ev, ok := <-w.ResultChan():
		if !ok {
			return watch.Event{}, fmt.Errorf("the watch ended")
		}
		return ev, nil
	case <-ctx.Done():
		return watch.Event{}, fmt.Errorf("waiting for a watch event: %w", context.Cause(ctx))
	}
}

// printEvent prints a watch event: its type, Go type and memo.
func printEvent(out io.Writer, heading string, ev watch.Event) {
	fmt.Fprintln(out, heading)
	if m, ok := ev.Object.(*coursev1alpha1.Memo); ok {
		fmt.Fprintf(out, "    %-9s %T  %s\n", ev.Type, m, memoLine(m))
		return
	}
	fmt.Fprintf(out, "    %-9s %T\n", ev.Type, ev.Object)
}

// memosPath is where the memos of the namespace are served: under the
// CRD's group and version.
func memosPath(c *cluster.Cluster) string {
	return "/apis/course.example.com/v1alpha1/namespaces/" + c.Namespace + "/memos"
}

// requests renders the request log since the last ResetRequests, the
// requests of the given verbs for memos only, one line each, the path
// after memosPath and the course's label selector shortened to "own".
func requests(c *cluster.Cluster, verbs ...string) []string {
	lines := show.Requests(c.Requests(), func(r apiserver.Request) bool {
		return r.Resource == "memos.course.example.com" && slices.Contains(verbs, r.Verb)
	})
	sel := "labelSelector=" + url.QueryEscape(cluster.OwnSelector)
	for i, l := range lines {
		method, target, _ := strings.Cut(l, " ")
		target = strings.Replace(target, memosPath(c), "…/memos", 1)
		target = strings.Replace(target, sel, "labelSelector=own", 1)
		if unescaped, err := url.QueryUnescape(target); err == nil {
			target = unescaped
		}
		lines[i] = fmt.Sprintf("%-4s %s", method, target)
	}
	return lines
}

// memoCalls is the calls an informer made on its handler, a tap.Handler
// recording into rec, each as a line.
func memoCalls(rec *tap.Recorder) show.Source {
	return rec.CallLines(func(c tap.HandlerCall) string {
		obj := c.Obj
		if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = tomb.Obj
		}
		m, ok := obj.(*coursev1alpha1.Memo)
		if !ok {
			return ""
		}
		switch c.Method {
		case "OnAdd":
			note := ""
			if c.InInitialList {
				note = "  (initial list)"
			}
			return fmt.Sprintf("%-9s %s%s", "ADDED", memoLine(m), note)
		case "OnUpdate":
			return fmt.Sprintf("%-9s %s", "UPDATED", memoLine(m))
		}
		return fmt.Sprintf("%-9s %s", "DELETED", memoLine(m))
	})
}

// printEvents awaits n handler calls from calls and prints them:
// the initial list sorted (client-go hands it over in no defined order),
// the rest as they came.
func printEvents(ctx context.Context, out io.Writer, name string, calls show.Source, n int) error {
	got, err := calls.Await(ctx, n)
	if err != nil {
		return err
	}
	initial := slices.IndexFunc(got, func(l string) bool { return !strings.HasSuffix(l, "(initial list)") })
	if initial < 0 {
		initial = len(got)
	}
	slices.Sort(got[:initial])
	show.Under(out, fmt.Sprintf("  %s: its handler got", name), got)
	return nil
}

// checkSameCache fails unless the two informers cache the same memos,
// at the same resourceVersions.
func checkSameCache(a, b cache.SharedIndexInformer) error {
	if x, y := cacheKeys(a), cacheKeys(b); !slices.Equal(x, y) {
		return fmt.Errorf("the caches differ: %v and %v", x, y)
	}
	return nil
}

// cacheKeys lists an informer's cache as sorted key@resourceVersion.
func cacheKeys(inf cache.SharedIndexInformer) []string {
	var keys []string
	for _, obj := range inf.GetStore().List() {
		if m, err := meta.Accessor(obj); err == nil {
			keys = append(keys, m.GetNamespace()+"/"+m.GetName()+"@"+m.GetResourceVersion())
		}
	}
	slices.Sort(keys)
	return keys
}

// printListerReads prints what step 3's lister reads returned.
func printListerReads(out io.Writer, teamA, inNamespace []*coursev1alpha1.Memo, indexed []string,
	lunch *coursev1alpha1.Memo, notFound error) {
	fmt.Fprintf(out, "  %-34s %s\n", "List(team=a)", memoNames(teamA))
	fmt.Fprintf(out, "  %-34s %s\n", "Memos(ns).List(everything)", memoNames(inNamespace))
	var names []string
	for _, key := range indexed {
		_, name, _ := strings.Cut(key, "/")
		names = append(names, name)
	}
	slices.Sort(names)
	fmt.Fprintf(out, "    %-32s %s\n", "the namespace index's keys (ns/)", strings.Join(names, " "))
	fmt.Fprintf(out, "  %-34s %T  %s\n", `Memos(ns).Get("lunch")`, lunch, memoLine(lunch))
	fmt.Fprintf(out, "  %-34s %v (IsNotFound=%t)\n", `Memos(ns).Get("dinner")`,
		notFound, apierrors.IsNotFound(notFound))
}

// printShared prints what step 3 found of the lister's object.
func printShared(out io.Writer, same bool, lunch, changed *coursev1alpha1.Memo) {
	fmt.Fprintf(out, "  the object Get returns is the cache's own: %t\n", same)
	fmt.Fprintf(out, "  withText changes a DeepCopy: cache %q, copy %q\n", lunch.Spec.Text, changed.Spec.Text)
}

// memoNames lists the names of memos, sorted: a lister returns them in
// no particular order.
func memoNames(memos []*coursev1alpha1.Memo) string {
	var names []string
	for _, m := range memos {
		names = append(names, m.Name)
	}
	slices.Sort(names)
	return strings.Join(names, " ")
}

// printFactoryShares prints whether step 4's consumers share one cache,
// and whether InformerFor called the constructor it was given.
func printFactoryShares(out io.Writer, informer, typed, generic, again cache.Store, called bool) {
	fmt.Fprintln(out, "  Memos().Informer(), Memos().Lister(), Memos().TypedInformer(), ForResource(memos):")
	fmt.Fprintf(out, "    one cache behind all of them: %t\n",
		informer == typed && typed == generic && generic == again)
	fmt.Fprintf(out, "  InformerFor(&Memo{}, another constructor): constructor called: %t\n", called)
}

// printFactoryRun prints what step 4's factory did once started.
func printFactoryRun(out io.Writer, synced map[reflect.Type]bool, reqs []string, teamA []*coursev1alpha1.Memo) {
	var parts []string
	for typ, ok := range synced {
		parts = append(parts, fmt.Sprintf("%v=%t", typ, ok))
	}
	slices.Sort(parts)
	fmt.Fprintf(out, "  Start, WaitForCacheSync: %s\n", strings.Join(parts, " "))
	show.Under(out, "  requests (WithNamespace, WithTweakListOptions):", reqs)
	fmt.Fprintf(out, "  Lister().Memos(ns).List(everything): %s\n", memoNames(teamA))
}

// statuses is each memo whose status, as the memo informer's handler
// (a tap.Handler recording into rec) sees it change, says the controller
// has published its current generation.
func statuses(rec *tap.Recorder) show.Source {
	return rec.CallLines(func(c tap.HandlerCall) string {
		o, ok1 := c.Old.(*coursev1alpha1.Memo)
		m, ok2 := c.Obj.(*coursev1alpha1.Memo)
		if c.Method != "OnUpdate" || !ok1 || !ok2 || o.Status == m.Status || m.Status.ObservedGeneration != m.Generation {
			return ""
		}
		return fmt.Sprintf("memo/%s  generation=%d  status: configMap=%s observedGeneration=%d",
			m.Name, m.Generation, m.Status.ConfigMap, m.Status.ObservedGeneration)
	})
}

// configMaps is the ConfigMaps added and changed, as the ConfigMap
// informer's handler (a tap.Handler recording into rec) sees them.
func configMaps(rec *tap.Recorder) show.Source {
	return rec.CallLines(func(c tap.HandlerCall) string {
		cm, ok := c.Obj.(*corev1.ConfigMap)
		event := map[string]string{"OnAdd": "ADDED", "OnUpdate": "UPDATED"}[c.Method]
		if !ok || event == "" {
			return ""
		}
		owner := ""
		if ref := metav1.GetControllerOf(cm); ref != nil {
			owner = "  owner=" + strings.ToLower(ref.Kind) + "/" + ref.Name
		}
		return fmt.Sprintf("%-9s configmap/%s  text=%q%s", event, cm.Name, cm.Data["text"], owner)
	})
}

// printControllerWork awaits n ConfigMap events, n status lines and n
// syncs the controller finished, and prints them, each kind sorted.
func printControllerWork(ctx context.Context, out io.Writer, heading string,
	configMaps, statuses, synced show.Source, n int) error {
	var all []string
	for _, lines := range []show.Source{configMaps, statuses, synced} {
		got, err := lines.Await(ctx, n)
		if err != nil {
			return err
		}
		slices.Sort(got)
		all = append(all, got...)
	}
	show.Under(out, heading, all)
	return nil
}

// forgotten is the syncs that succeeded, as the controller's tapped
// workqueue records them: processNextItem's Forget (chapter 07), one a
// sync, after syncHandler returned. Its other calls (Add, Get, Done) are
// on the trace's workqueue lane.
type forgotten struct{ rec *tap.Recorder }

func (f forgotten) Await(ctx context.Context, n int) ([]string, error) {
	var got []string
	for len(got) < n {
		e, err := f.rec.Next(ctx)
		if err != nil {
			return got, err
		}
		if call, ok := e.(tap.QueueCall); ok && call.Method == "Forget" {
			got = append(got, "workqueue: "+call.String())
		}
	}
	return got, nil
}

// printBoth prints what step 6 read of memo/lunch from each cache.
func printBoth(out io.Writer, memo *coursev1alpha1.Memo, text string,
	u *unstructured.Unstructured, dynamicText string, wrongType error) {
	fmt.Fprintf(out, "  typed:   %T  kind=%q  Spec.Text=%q\n", memo, memo.Kind, text)
	fmt.Fprintf(out, "  dynamic: %T  kind=%q  NestedString(spec.text)=%q\n",
		u, u.GetKind(), dynamicText)
	fmt.Fprintf(out, "           NestedInt64(spec.text): %v\n", wrongType)
}

// printMemory prints how much heap each cache keeps per memo, as a
// ratio to the typed one, and releases the informers.
func printMemory(out io.Writer, caches []cache.SharedIndexInformer, n int) {
	perObject := heap.ReleasePerObject(caches, n)
	fmt.Fprintf(out, "  %d memos cached twice; heap each cache keeps per memo, vs typed:\n", n)
	fmt.Fprintf(out, "    %-38s %s\n", "typed (generated informer, *Memo)", heap.Scale125(perObject[0]/perObject[0]))
	fmt.Fprintf(out, "    %-38s %s\n", "dynamic (dynamicinformer, Unstructured)", heap.Scale125(perObject[1]/perObject[0]))
}

// printActions prints a fake's recorded actions, verb and resource.
func printActions(out io.Writer, heading string, actions []clienttesting.Action) {
	var lines []string
	for _, a := range actions {
		lines = append(lines, a.GetVerb()+" "+a.GetResource().Resource)
	}
	show.Under(out, heading, lines)
}

// printTraps prints what step 7's writes to the fake returned.
func printTraps(out io.Writer, got, updated, afterStatus *coursev1alpha1.Memo, first watch.Event, err1, err2 error) {
	fmt.Fprintf(out, "  Get memo/lunch:                   rv=%q generation=%d\n", got.ResourceVersion, got.Generation)
	fmt.Fprintf(out, "  Update its text:                  rv=%q generation=%d (an API server: a new rv, generation+1)\n",
		updated.ResourceVersion, updated.Generation)
	fmt.Fprintf(out, "  UpdateStatus with another text:   text=%q (an API server keeps the spec)\n", afterStatus.Spec.Text)
	if m, ok := first.Object.(*coursev1alpha1.Memo); ok {
		fmt.Fprintf(out, "  Watch(labelSelector=team=a):      first %s memo/%s team=%s (an API server: only team=a)\n",
			first.Type, m.Name, m.Labels["team"])
	}
	fmt.Fprintf(out, "  two Updates of one stale copy:    %v, %v (an API server: 409 Conflict)\n",
		errString(err1), errString(err2))
}

// errString is "ok" for a nil error.
func errString(err error) string {
	if err == nil {
		return "ok"
	}
	return err.Error()
}
