package main

// The pods the steps work on, and event handlers that take their time
// on the step's schedule, not the clock's: they wait, inside a call,
// until the step lets them go on, so that what the step prints is the
// same on every run. Then what the steps have the workshop cluster do
// (refuse a list, hold watch events), and the printing of what the
// handlers and the informer's reads did.

import (
	"context"
	"fmt"
	"io"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"

	"github.com/informer-walkthrough/informer-walkthrough/internal/apiserver"
	"github.com/informer-walkthrough/informer-walkthrough/internal/cluster"
	"github.com/informer-walkthrough/informer-walkthrough/internal/show"
)

// createPod creates a gated pod (one no scheduler or kubelet touches).
func createPod(ctx context.Context, c *cluster.Cluster, name string) (*corev1.Pod, error) {
	pod := show.GatedPod(name, cluster.Labels("app", "web"))
	return c.Client.CoreV1().Pods(c.Namespace).Create(ctx, pod, metav1.CreateOptions{})
}

// createPods creates gated pods, one after the other, and returns the
// last as the server answered (with its resourceVersion).
func createPods(ctx context.Context, c *cluster.Cluster, names ...string) (last *corev1.Pod, err error) {
	for _, name := range names {
		if last, err = createPod(ctx, c, name); err != nil {
			return nil, err
		}
	}
	return last, nil
}

// slowIndexFunc returns an index function that stands in for one that
// takes long: for the pod named name, it waits until release is closed
// (or the step ends). It indexes nothing.
// !+slowIndexFunc
func slowIndexFunc(ctx context.Context, name string, release <-chan struct{}) cache.IndexFunc {
	return func(obj any) ([]string, error) {
		if pod, ok := obj.(*corev1.Pod); ok && pod.Name == name {
			select {
			case <-release:
			case <-ctx.Done():
			}
		}
		return nil, nil
	}
}

// !-slowIndexFunc

// heldHandler reports each OnUpdate and waits inside it until the step
// lets it end (let).
type heldHandler struct {
	name    string
	lines   *show.Lines
	release chan struct{}
	stop    <-chan struct{} // the step's end: never hold up a shutdown
}

func newHeldHandler(ctx context.Context, name string, lines *show.Lines) *heldHandler {
	return &heldHandler{name, lines, make(chan struct{}), ctx.Done()}
}

func (h *heldHandler) OnAdd(any, bool) {}
func (h *heldHandler) OnUpdate(_, obj any) {
	if pod, ok := obj.(*corev1.Pod); ok {
		h.lines.Sendf("%s: in OnUpdate %s release=%s", h.name, pod.Name, pod.Labels["release"])
	}
	select {
	case <-h.release:
	case <-h.stop:
	}
	h.lines.Sendf("%s: OnUpdate returns", h.name)
}
func (h *heldHandler) OnDelete(any) {}

// let ends the call h is waiting in.
func (h *heldHandler) let(ctx context.Context) {
	select {
	case h.release <- struct{}{}:
	case <-ctx.Done():
	}
}

// slowHandler holds its first call until gate is closed, and takes
// slowCall over each call listed in slow (counted from 1): a handler
// with real work to do, on a queue the step has filled.
type slowHandler struct {
	gate  chan struct{}
	stop  <-chan struct{}
	slow  []int
	calls int // only the handler's goroutine touches it
}

// slowCall is as long as a call must last to be traced.
const slowCall = 100 * time.Millisecond

func newSlowHandler(ctx context.Context, slow ...int) *slowHandler {
	return &slowHandler{gate: make(chan struct{}), stop: ctx.Done(), slow: slow}
}

func (h *slowHandler) OnAdd(any, bool) {
	h.calls++
	if h.calls == 1 {
		select {
		case <-h.gate:
		case <-h.stop:
		}
	}
	for _, s := range h.slow {
		if s == h.calls {
			select { // the work: slowCall, or less if the step ends
			case <-time.After(slowCall):
			case <-h.stop:
			}
		}
	}
}
func (h *slowHandler) OnUpdate(any, any) {}
func (h *slowHandler) OnDelete(any)      {}

// refusePods makes the workshop cluster, which ignores impersonation,
// refuse user's watch-list of pods and then its list with 403
// Forbidden, in the words of kube-apiserver's RBAC. A real cluster
// refuses them itself.
func refusePods(c *cluster.Cluster, user string) {
	if !c.Embedded() {
		return
	}
	for _, verb := range []string{"watch", "list"} { // a watch-list, then a list
		c.Server.InjectFault(apiserver.Fault{Verb: verb, Resource: "pods", Times: 1,
			Err: apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "", fmt.Errorf(
				`User %q cannot %s resource "pods" in API group "" in the namespace %q`,
				user, verb, c.Namespace))})
	}
}

// holdWatchEvents makes the workshop cluster end the informer's watch
// and hold the next one at the server, so that the events of the writes
// that follow wait there until release. A real cluster cannot be told
// to: there release does nothing. Calling release again does nothing.
func holdWatchEvents(c *cluster.Cluster) (release func()) {
	if !c.Embedded() {
		return func() {}
	}
	c.Server.HoldWatches() // the informer's next watch waits at the server
	c.Server.DropWatches()
	return c.Server.ReleaseWatches
}

// printNext awaits the next n lines the held handlers send, sorted (each
// handler sends from its own goroutine), and prints them.
func printNext(ctx context.Context, out io.Writer, lines *show.Lines, n int) error {
	got, err := lines.AwaitSorted(ctx, n)
	show.Print(out, "  ", got)
	return err
}

// printShutDown prints what ShutDownEventHandler(report) returned once
// report's call ended, and what report sent meanwhile.
func printShutDown(out io.Writer, err error, sent []string) {
	fmt.Fprintln(out, "  ShutDownEventHandler(report) waits: report is inside OnUpdate")
	fmt.Fprintf(out, "  it returned %v after %q\n", err, sent)
}

// printShutDownAtOnce prints what ShutDownEventHandler(audit) returned,
// audit being removed already, and what audit sent since.
func printShutDownAtOnce(out io.Writer, err error, sent []string) {
	fmt.Fprintf(out, "  ShutDownEventHandler(audit) returned %v at once; nothing more reached audit: %q\n",
		err, sent)
}

// printNoHandler prints whether the informer with no handler left has
// stopped, and whether its cache has the pod created since.
func printNoHandler(out io.Writer, stopped, cached bool) {
	fmt.Fprintf(out, "  no handler left: IsStopped() %t, and its cache still follows: web-5 in it: %t\n",
		stopped, cached)
}

// printStoppedOne prints which of step 4's informers are stopped once
// the configmaps informer's context ended, and what AddEventHandler on
// the stopped one returned (from the deterministic part of its message).
func printStoppedOne(out io.Writer, configMapsStopped, podsStopped bool, err error) {
	fmt.Fprintf(out, "  stop configmaps' context: IsStopped() configmaps %t, pods %t\n",
		configMapsStopped, podsStopped)
	fmt.Fprintf(out, "  the factory still hands it out: AddEventHandler: %s\n", tail(err, "was not added"))
}

// printGates prints the feature gates step 5 depends on.
func printGates(out io.Writer, inOrderInformers, atomicFIFO bool) {
	fmt.Fprintf(out, "  gates: InOrderInformers=%t AtomicFIFO=%t\n", inOrderInformers, atomicFIFO)
}

// printRead prints step 5's first write and the lister's read after
// waitForStore.
func printRead(out io.Writer, written, cached *corev1.Pod) {
	fmt.Fprintf(out, "  patch web-1 release=v1 (rv=%s), waitForStore, lister.Get: release=%s rv=%s\n",
		written.ResourceVersion, cached.Labels["release"], cached.ResourceVersion)
}

// printAtOnce prints step 5's read at once, while the write's event is
// held: the lister's pod and how the store's resourceVersion compares
// with the write's. A real cluster cannot hold the event, so there the
// read may or may not be stale, and is not printed.
func printAtOnce(out io.Writer, held bool, written, cached *corev1.Pod, seen string, order int, err error) {
	fmt.Fprintf(out, "  patch web-1 release=v2 (rv=%s)", written.ResourceVersion)
	if !held {
		fmt.Fprintln(out, "; the read at once is skipped on a real cluster (it may or may not be stale there)")
		return
	}
	fmt.Fprintf(out, ", its event held; lister.Get at once: release=%s\n"+
		"  CompareResourceVersion(store %s, write %s) = %d, %v: the store is behind\n",
		cached.Labels["release"], seen, written.ResourceVersion, order, err)
}

// printCaughtUp prints the store's resourceVersion (seen) and the
// lister's read once waitForStore has returned for the second write.
func printCaughtUp(out io.Writer, written *corev1.Pod, seen string, cached *corev1.Pod) {
	fmt.Fprintf(out, "  waitForStore(%s): store at %s; lister.Get: release=%s\n",
		written.ResourceVersion, seen, cached.Labels["release"])
}
