package main

// What chapter 06 needs only to show the factory at work, and nothing of
// what it teaches: the lines it prints of the calls the course's taps
// record (internal/tap: the reporting handlers, the transform that holds
// step 4c's change), the waits on those calls, the request log in short,
// and the print functions, which print what the steps got in a fixed
// order. main.go and handlers.go are the lesson. The taps also record
// each call for --trace and --view (internal/trace).

import (
	"context"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"

	"github.com/informer-walkthrough/informer-walkthrough/internal/show"
	"github.com/informer-walkthrough/informer-walkthrough/internal/tap"
)

// handlerLine is a call of step 1's handlers as the chapter prints it:
// the event, the object, and a note.
func handlerLine(c tap.HandlerCall) string {
	event := map[string]string{"OnAdd": "ADDED", "OnUpdate": "UPDATED", "OnDelete": "DELETED"}[c.Method]
	note := ""
	if c.InInitialList {
		note = "initial list"
	}
	var line string
	switch o := c.Obj.(type) {
	case *appsv1.Deployment:
		line = fmt.Sprintf("%-9s deployment/%s  gen=%d  rv=%s",
			event, o.Name, o.Generation, o.ResourceVersion)
	case *corev1.Pod:
		line = fmt.Sprintf("%-9s pod/%s  rv=%s", event, o.Name, o.ResourceVersion)
		if c.Method == "OnUpdate" && o.DeletionTimestamp != nil {
			note = "deletionTimestamp set"
		}
	case cache.DeletedFinalStateUnknown:
		line, note = fmt.Sprintf("%-9s %s", event, o.Key), "final state unknown"
	default:
		line = fmt.Sprintf("%-9s %s", event, show.Describe(o))
	}
	if note != "" {
		line += "  (" + note + ")"
	}
	return line
}

// drainLines is the handler calls rec has got, as handlerLine renders
// them, sorted: an initial list comes in no defined order.
func drainLines(rec *tap.Recorder) []string {
	var lines []string
	for _, c := range tap.HandlerCalls(rec.Drain()) {
		lines = append(lines, handlerLine(c))
	}
	slices.Sort(lines)
	return lines
}

// updateLine is an OnUpdate call of step 5's handlers as the chapter
// prints it, old and new resourceVersion: the informer calls an update
// whose two are equal a sync, in this step a resync (after a relist it
// is also an object that did not change, README step 5). Other calls
// are not printed ("").
func updateLine(c tap.HandlerCall) string {
	old, ok1 := c.Old.(*corev1.Pod)
	p, ok2 := c.Obj.(*corev1.Pod)
	if c.Method != "OnUpdate" || !ok1 || !ok2 {
		return ""
	}
	event := "UPDATED"
	if old.ResourceVersion == p.ResourceVersion {
		event = "RESYNC"
	}
	return fmt.Sprintf("%-9s pod/%s  rv=%s->%s", event, p.Name, old.ResourceVersion, p.ResourceVersion)
}

// reporter is a reporting handler named name, with a recorder of its
// own: step 5 awaits each handler's calls apart.
func reporter(ctx context.Context, name string) tap.Handler {
	return tap.Handler{Rec: tap.NewRecorder(ctx), Name: name}
}

// await waits for the first event rec gets that match accepts,
// dropping those before it.
func await(ctx context.Context, rec *tap.Recorder, match func(tap.Event) bool) error {
	for {
		e, err := rec.Next(ctx)
		if err != nil {
			return fmt.Errorf("waiting for a call at a tap: %w", err)
		}
		if match(e) {
			return nil
		}
	}
}

// tierGold picks the transform of a pod labelled tier=gold: step 4c's
// change, which it holds.
func tierGold(e tap.Event) bool {
	t, ok := e.(tap.Transformed)
	if !ok {
		return false
	}
	p, ok := t.Obj.(*corev1.Pod)
	return ok && p.Labels["tier"] == "gold"
}

// held picks a call that a gate holds.
func held(e tap.Event) bool {
	_, ok := e.(tap.Held)
	return ok
}

// updatedTo picks a handler's OnUpdate to p's resourceVersion.
func updatedTo(p *corev1.Pod) func(tap.Event) bool {
	return func(e tap.Event) bool {
		c, ok := e.(tap.HandlerCall)
		if !ok || c.Method != "OnUpdate" {
			return false
		}
		m, err := meta.Accessor(c.Obj)
		return err == nil && m.GetName() == p.Name && m.GetResourceVersion() == p.ResourceVersion
	}
}

// printResync awaits the n resync calls handler eager gets and prints
// them sorted: a resync walks the cache, a map, in no order.
func printResync(ctx context.Context, out io.Writer, eager *tap.Recorder, n int) error {
	fmt.Fprintf(out, "  eager, a second later: OnUpdate for the %d cached pods\n", n)
	return show.Sorted(ctx, out, show.Block{Indent: "    ", From: eager.CallLines(updateLine), N: n})
}

// printFirstUpdates awaits the first update handlers quiet and ignored
// get after patched, and prints them. It awaits eager's too, between its
// resyncs, so that the step ends with every call of the patch recorded.
func printFirstUpdates(ctx context.Context, out io.Writer, patched *corev1.Pod,
	quiet, eager, ignored *tap.Recorder) error {
	if err := await(ctx, eager, updatedTo(patched)); err != nil {
		return err
	}
	fmt.Fprintf(out, "  patch pod/web-1 (rv=%s); the first update the others got:\n",
		patched.ResourceVersion)
	q, err := quiet.CallLines(updateLine).Await(ctx, 1)
	if err != nil {
		return err
	}
	i, err := ignored.CallLines(updateLine).Await(ctx, 1)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "    quiet   %s\n    ignored %s\n", q[0], i[0])
	return nil
}

// printShared prints what step 2's three consumers got from the factory.
func printShared(out io.Writer, sameCache, sameInformer bool) {
	fmt.Fprintln(out, "  audit, metrics, cleanup: each calls factory.Core().V1().Pods().Informer()")
	fmt.Fprintf(out, "    the same cache behind all three: %t\n", sameCache)
	fmt.Fprintf(out, "    the Informer() values are equal: %t\n", sameInformer)
}

// syncedString renders WaitForCacheSync's map in a fixed order.
func syncedString(m map[reflect.Type]bool) string {
	var parts []string
	for typ, ok := range m {
		parts = append(parts, fmt.Sprintf("%v=%t", typ, ok))
	}
	slices.Sort(parts)
	return strings.Join(parts, " ")
}

// countEach renders how many OnAdd calls each of names, a reporting
// handler's name, has among events, in the order of names:
// "audit=3 metrics=3".
func countEach(events []tap.Event, names []string) string {
	var parts []string
	for _, name := range names {
		n := 0
		for _, c := range tap.HandlerCalls(events) {
			if c.Handler == name && c.Method == "OnAdd" {
				n++
			}
		}
		parts = append(parts, fmt.Sprintf("%s=%d", name, n))
	}
	return strings.Join(parts, " ")
}

// printLate prints what step 4b sees of the informer made after Start.
func printLate(out io.Writer, label string, synced map[reflect.Type]bool,
	cmSynced bool, reqs []string) {
	fmt.Fprintf(out, "    %s WaitForCacheSync: %s\n", label, syncedString(synced))
	fmt.Fprintf(out, "                   configmaps synced=%t, requests=%d\n", cmSynced, len(reqs))
}

// printListerReads prints what step 1's lister reads returned.
func printListerReads(out io.Writer, ds []*appsv1.Deployment, web *appsv1.Deployment,
	ps []*corev1.Pod, notFound error) {
	fmt.Fprintln(out, "  listers read the cache:")
	fmt.Fprintf(out, "    %-32s %s\n", "Deployments(ns).List(everything)", names(ds))
	fmt.Fprintf(out, "    %-32s gen=%d paused=%t replicas=%d image=%s\n",
		`Deployments(ns).Get("web")`, web.Generation, web.Spec.Paused, *web.Spec.Replicas,
		web.Spec.Template.Spec.Containers[0].Image)
	fmt.Fprintf(out, "    %-32s %s\n", "Pods(ns).List(app=web)", names(ps))
	fmt.Fprintf(out, "    %-32s %v (IsNotFound=%t)\n",
		`Pods(ns).Get("web-9")`, notFound, apierrors.IsNotFound(notFound))
}

// printForResource prints what step 3's two ForResource calls returned:
// the informer of a built-in resource, and the error for any other.
func printForResource(out io.Writer, gvr schema.GroupVersionResource, sameCache bool,
	other schema.GroupVersionResource, err error) {
	fmt.Fprintf(out, "  ForResource(%s)\n", gvr)
	fmt.Fprintf(out, "    same cache as Apps().V1().Deployments(): %t\n", sameCache)
	fmt.Fprintf(out, "  ForResource(%s)\n    %v\n", other, err)
}

// printTransformed prints what step 3's listers hold, and pod/web-1 from
// the API beside the cached one.
func printTransformed(out io.Writer, objs []runtime.Object, ps []*corev1.Pod,
	live, cached *corev1.Pod) {
	fmt.Fprintf(out, "  %-30s %s\n", "generic lister, deployments:", objectNames(objs))
	fmt.Fprintf(out, "  %-30s %s\n", "typed lister, pods:", names(ps))
	fmt.Fprintf(out, "  pod/web-1 containers: API %d, cache %d (the transform dropped .spec)\n",
		len(live.Spec.Containers), len(cached.Spec.Containers))
}

// printKinds prints what step 4a got for deployment/web: the type
// meta of the cached object, and what the scheme maps its Go type to.
func printKinds(out io.Writer, web *appsv1.Deployment, gvk schema.GroupVersionKind) {
	fmt.Fprintf(out, "    deployment/web: kind=%q apiVersion=%q\n", web.Kind, web.APIVersion)
	fmt.Fprintf(out, "    scheme.Scheme.ObjectKinds: %s\n", gvk)
}

// printOwnWrite prints step 4c: what the write returned, and pod/web-1
// as the lister had it while the event was held, and once a handler
// had seen it.
func printOwnWrite(out io.Writer, patched, stale, fresh *corev1.Pod) {
	fmt.Fprintln(out, "    patch pod/web-1 tier=gold: the API answers rv="+patched.ResourceVersion)
	fmt.Fprintf(out, "    lister, event still on its way: %s\n", rvTier(stale))
	fmt.Fprintf(out, "    lister, once the handler saw it: %s\n", rvTier(fresh))
}

// rvTier renders a pod's resourceVersion and tier label.
func rvTier(p *corev1.Pod) string {
	return fmt.Sprintf("rv=%s tier=%q", p.ResourceVersion, p.Labels["tier"])
}

// printStopped prints what step 4d sees after label: whether Shutdown
// has returned, and whether the informer has stopped.
func printStopped(out io.Writer, label string, returned, stopped bool) {
	fmt.Fprintf(out, "    %s Shutdown returned=%t, informer stopped=%t\n", label, returned, stopped)
}

// names lists the names of typed objects, sorted: a lister returns
// them in no particular order.
func names[T metav1.Object](objs []T) string {
	var ns []string
	for _, o := range objs {
		ns = append(ns, o.GetName())
	}
	slices.Sort(ns)
	return strings.Join(ns, " ")
}

// objectNames is names for what a GenericLister returns.
func objectNames(objs []runtime.Object) string {
	var ns []string
	for _, o := range objs {
		if m, err := meta.Accessor(o); err == nil {
			ns = append(ns, m.GetName())
		}
	}
	slices.Sort(ns)
	return strings.Join(ns, " ")
}
