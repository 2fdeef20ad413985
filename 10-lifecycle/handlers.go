package main

// The pods the steps work on, and event handlers that take their time
// on the step's schedule, not the clock's: they wait, inside a call,
// until the step lets them go on, so that what the step prints is the
// same on every run.

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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
