package main

// What chapter 06 needs only to show the factory at work. The handlers
// it adds to its informers: they do not print, they run on the
// informers' goroutines, so they report a line to a show.Lines, and the
// step prints in an order it controls. The gate that holds one event
// back for step 4c, and the small waits beside it; the request log in
// short; and the print functions, which await what the handlers report
// and print what the steps got, in a fixed order. Nothing here is the
// lesson; main.go is. The handlers and the gate also record what they
// see for --trace and --view (internal/trace): the handler calls
// (handlers lane) and the objects the gate's transform sees queued
// (FIFO lane) or buffered by a watch-list (reflector lane).

import (
	"context"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"
	"sync"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	corev1informers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/informer-walkthrough/informer-walkthrough/internal/apiserver"
	"github.com/informer-walkthrough/informer-walkthrough/internal/cluster"
	"github.com/informer-walkthrough/informer-walkthrough/internal/show"
	"github.com/informer-walkthrough/informer-walkthrough/internal/trace"
)

// deploymentHandler is written the way most code in the wild is: an
// untyped handler whose type assertions must also expect a
// DeletedFinalStateUnknown tombstone in OnDelete.
func deploymentHandler(events *show.Lines) cache.ResourceEventHandler {
	return cache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(obj any, initial bool) {
			if trace.On() {
				recordCall("OnAdd", fmt.Sprintf("%s  isInInitialList=%t", describe(obj), initial), obj, false)
			}
			if d, ok := obj.(*appsv1.Deployment); ok {
				events.Send(deployLine("ADDED", d, initialNote(initial)))
			}
		},
		UpdateFunc: func(oldObj, newObj any) {
			// The deployment controller writes status even for a paused
			// deployment. Only a spec change bumps metadata.generation:
			// act on that, and the output is the same on a real cluster.
			if trace.On() {
				recordCall("OnUpdate", describe(oldObj)+" -> "+describe(newObj), newObj, false)
			}
			old, ok1 := oldObj.(*appsv1.Deployment)
			d, ok2 := newObj.(*appsv1.Deployment)
			if ok1 && ok2 && old.Generation != d.Generation {
				events.Send(deployLine("UPDATED", d, ""))
			}
		},
		DeleteFunc: func(obj any) {
			if trace.On() {
				recordCall("OnDelete", describe(obj), obj, false)
			}
			if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = tomb.Obj
			}
			if d, ok := obj.(*appsv1.Deployment); ok {
				events.Send(deployLine("DELETED", d, ""))
			}
		},
	}
}

// podHandler uses the typed handlers new in client-go v0.37: no type
// assertions, and OnDelete gets a DeletedPod that says whether the
// final state is known.
func podHandler(events *show.Lines) corev1informers.PodDetailedHandlerFuncs {
	// !+podHandler
	return corev1informers.PodDetailedHandlerFuncs{
		AddFunc: func(p *corev1.Pod, initial bool) {
			events.Send(podLine("ADDED", p, initialNote(initial)))
		},
		UpdateFunc: func(_, p *corev1.Pod) {
			events.Send(podLine("UPDATED", p, deletingNote(p)))
		},
		DeleteFunc: func(d corev1informers.DeletedPod) {
			if d.FinalStateUnknown != nil || d.OptionalObj == nil {
				events.Send("DELETED   pod/" + d.GetName() + "  (final state unknown)")
				return
			}
			events.Send(podLine("DELETED", d.OptionalObj, ""))
		},
	}
	// !-podHandler
}

// updateHandler reports OnUpdate calls. The informer calls an update
// whose old and new resourceVersion are equal a sync: in this step, a
// resync. After a relist it is also an object that did not change, and
// reaches the same handlers (README, step 5).
func updateHandler(lines *show.Lines) cache.ResourceEventHandler {
	return cache.ResourceEventHandlerFuncs{
		UpdateFunc: func(oldObj, newObj any) {
			old, ok1 := oldObj.(*corev1.Pod)
			p, ok2 := newObj.(*corev1.Pod)
			if !ok1 || !ok2 {
				return
			}
			event := "UPDATED"
			if old.ResourceVersion == p.ResourceVersion {
				event = "RESYNC"
				// A timer repeats it. A change is recorded where the
				// step awaits it (printFirstUpdates): the step does not
				// wait for every handler's.
				if trace.On() {
					recordCall("OnUpdate", describe(old)+" -> "+describe(p)+"  (resync)", p, true)
				}
			}
			lines.Sendf("%-9s pod/%s  rv=%s->%s",
				event, p.Name, old.ResourceVersion, p.ResourceVersion)
		},
	}
}

// rvHandler reports the resourceVersion of each update of pod name.
func rvHandler(lines *show.Lines, name string) cache.ResourceEventHandler {
	return cache.ResourceEventHandlerFuncs{
		UpdateFunc: func(old, obj any) {
			if trace.On() {
				recordCall("OnUpdate", describe(old)+" -> "+describe(obj), obj, false)
			}
			if p, ok := obj.(*corev1.Pod); ok && p.Name == name {
				lines.Send(p.ResourceVersion)
			}
		},
	}
}

// deployLine is what the deployment handler reports.
func deployLine(event string, d *appsv1.Deployment, note string) string {
	return withNote(fmt.Sprintf("%-9s deployment/%s  gen=%d  rv=%s",
		event, d.Name, d.Generation, d.ResourceVersion), note)
}

// podLine is what the pod handler reports. It records the handler call
// too: the handler's code is quoted in the README as a handler should be
// written, and it calls podLine for every call but a delete whose final
// state is unknown (which this chapter does not cause).
func podLine(event string, p *corev1.Pod, note string) string {
	verb := map[string]string{"ADDED": "OnAdd", "UPDATED": "OnUpdate", "DELETED": "OnDelete"}[event]
	if verb != "" && trace.On() {
		text := describe(p)
		if event == "ADDED" {
			text += fmt.Sprintf("  isInInitialList=%t", note != "")
		} else if note != "" {
			text += "  (" + note + ")"
		}
		recordCall(verb, text, p, false)
	}
	return withNote(fmt.Sprintf("%-9s pod/%s  rv=%s",
		event, p.Name, p.ResourceVersion), note)
}

func withNote(line, note string) string {
	if note == "" {
		return line
	}
	return line + "  (" + note + ")"
}

func initialNote(initial bool) string {
	if initial {
		return "initial list"
	}
	return ""
}

func deletingNote(p *corev1.Pod) string {
	if p.DeletionTimestamp != nil {
		return "deletionTimestamp set"
	}
	return ""
}

// gate holds back the pods labelled key=value on their way into the
// cache, until release: its transform runs on the reflector's goroutine,
// before the cache is written. Step 4c reads the lister meanwhile.
type gate struct {
	key, value string
	stop       <-chan struct{}
	once       sync.Once
	held       chan struct{} // closed when the first such pod arrives
	released   chan struct{}
}

func newGate(ctx context.Context, key, value string) *gate {
	return &gate{key: key, value: value, stop: ctx.Done(),
		held: make(chan struct{}), released: make(chan struct{})}
}

// transform is the factory's transform: it waits for release, or for
// the informers to stop, before it lets such a pod through.
func (g *gate) transform(obj any) (any, error) {
	recordTransform(obj)
	if p, ok := obj.(*corev1.Pod); ok && p.Labels[g.key] == g.value {
		g.once.Do(func() { close(g.held) })
		select {
		case <-g.released:
		case <-g.stop:
		}
	}
	return obj, nil
}

// awaitHeld returns once a pod is held: its event has reached the
// informer, not the cache.
func (g *gate) awaitHeld(ctx context.Context) error {
	select {
	case <-g.held:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("waiting for the gate to hold a pod: %w", context.Cause(ctx))
	}
}

// release lets held pods, and all later ones, through. Call it once.
func (g *gate) release() { close(g.released) }

// awaitLine waits until lines carries want, dropping the lines before.
func awaitLine(ctx context.Context, lines *show.Lines, want string) error {
	for {
		got, err := lines.Await(ctx, 1)
		if err != nil || got[0] == want {
			return err
		}
	}
}

// requestsFor returns the list and watch requests for the resources
// since the last ResetRequests, from the client-side request log, one
// short line each, sorted: informers started together send theirs in no
// fixed order.
func requestsFor(c *cluster.Cluster, resources ...string) []string {
	var lines []string
	for _, r := range c.Requests() {
		if slices.Contains(resources, r.Resource) && show.ListsAndWatches(r) {
			lines = append(lines, describeRequest(r))
		}
	}
	slices.Sort(lines)
	return lines
}

// describeRequest renders a logged request as verb, resource and label
// selector. A watch with sendInitialEvents=true is a watch-list: the
// current objects, then the changes, on one stream.
func describeRequest(r apiserver.Request) string {
	s := strings.ToUpper(r.Verb) + " " + r.Resource
	if sel := r.Query.Get("labelSelector"); sel != "" {
		s += " labelSelector=" + sel
	}
	if r.Query.Get("sendInitialEvents") == "true" {
		s += "  (watch-list)"
	}
	return s
}

// printResync awaits the n resync calls handler eager gets and prints
// them sorted: a resync walks the cache, a map, in no order.
func printResync(ctx context.Context, out io.Writer, eager *show.Lines, n int) error {
	got, err := eager.AwaitSorted(ctx, n)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "  eager, a second later: OnUpdate for the %d cached pods\n", n)
	show.Print(out, "    ", got)
	return nil
}

// printFirstUpdates awaits the first update handlers quiet and ignored
// get after patched, and prints them.
func printFirstUpdates(ctx context.Context, out io.Writer, patched *corev1.Pod,
	quiet, ignored *show.Lines) error {
	fmt.Fprintf(out, "  patch pod/web-1 (rv=%s); the first update the others got:\n",
		patched.ResourceVersion)
	q, err := quiet.Await(ctx, 1)
	if err != nil {
		return err
	}
	i, err := ignored.Await(ctx, 1)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "    quiet   %s\n    ignored %s\n", q[0], i[0])
	for _, name := range []string{"quiet", "ignored"} {
		if !trace.On() {
			break
		}
		trace.Record(trace.Event{Lane: trace.Handlers, Verb: "OnUpdate",
			Text: name + ": " + describe(patched) + "  (the patch; seen when the step read it)", Func: "cache.(*processorListener).run"}, patched)
	}
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

// countEach renders how many of lines are each of names, in the order
// of names: "audit=3 metrics=3".
func countEach(lines, names []string) string {
	var parts []string
	for _, name := range names {
		n := 0
		for _, l := range lines {
			if l == name {
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

// The trace's taps.

// recordCall records a handler call on the trace's handlers lane, under
// the client-go function that made it. timed marks a resync's, which a
// timer repeats.
func recordCall(verb, text string, obj any, timed bool) {
	if !trace.On() {
		return
	}
	fn, _ := trace.Caller(nil)
	trace.Record(trace.Event{Lane: trace.Handlers, Verb: verb, Text: text, Func: fn, Timed: timed}, obj)
}

// recordTransform records an object a transform is given, in the lane
// of the client-go function that gave it (trace.RecordTransform).
func recordTransform(obj any) { trace.RecordTransform(obj, describe(obj)) }

// describe names an object, its kind and resourceVersion, or a tombstone.
func describe(obj any) string {
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		return "DeletedFinalStateUnknown key=" + tomb.Key + ", last known " + describe(tomb.Obj)
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return fmt.Sprintf("a %T", obj)
	}
	kind := strings.ToLower(reflect.TypeOf(obj).Elem().Name())
	return fmt.Sprintf("%s/%s rv=%s", kind, m.GetName(), m.GetResourceVersion())
}
