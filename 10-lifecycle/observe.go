package main

// What the chapter needs only to *show* the lesson that main.go writes
// out. An event handler and an index function that take their time on
// the step's schedule, not the clock's, and the holding of step 4's
// handlers at the course's tap (internal/tap): they wait, inside a call,
// until the step lets them go on, so that what a step prints is the
// same on every run. The refusal step 1 has the workshop cluster make. Loggers that
// keep client-go's log lines, and the masking of what changes from run
// to run in them. Metrics that keep every value client-go sets, so that
// a step can await them. And the print* functions, which only format
// what a step read.

import (
	"context"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2/textlogger"

	"github.com/informer-walkthrough/informer-walkthrough/internal/apiserver"
	"github.com/informer-walkthrough/informer-walkthrough/internal/cluster"
	"github.com/informer-walkthrough/informer-walkthrough/internal/runner"
	"github.com/informer-walkthrough/informer-walkthrough/internal/show"
	"github.com/informer-walkthrough/informer-walkthrough/internal/tap"
	"github.com/informer-walkthrough/informer-walkthrough/internal/trace"
)

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

// holdUpdates holds the next n OnUpdate calls of the handler named
// name at the course's tap (tap.Handler), each until the step releases
// it: a handler inside a call for as long as the step needs. A held
// call records Held as it begins to wait, Released as it goes on.
func holdUpdates(rec *tap.Recorder, name string, n int) *tap.Gate {
	return rec.HoldReporting(n, func(e tap.Event) bool {
		call, ok := e.(tap.HandlerCall)
		return ok && call.Handler == name && call.Method == "OnUpdate"
	})
}

// heldSoFar is the held calls' lines among what rec got that no step
// has awaited yet, without waiting.
func heldSoFar(rec *tap.Recorder) []string {
	got := []string{}
	for _, e := range rec.Drain() {
		if line, ok := heldLine(e); ok {
			got = append(got, line)
		}
	}
	return got
}

// heldLine is how the step prints the held calls rec gets
// (rec.Render(heldLine)): "audit: in OnUpdate web-2 release=v1" for a call held,
// "audit: OnUpdate returns" for one let go; ok is false for any other
// event.
func heldLine(e tap.Event) (line string, ok bool) {
	switch e := e.(type) {
	case tap.Held:
		call, isCall := e.Event.(tap.HandlerCall)
		if pod, isPod := call.Obj.(*corev1.Pod); isCall && isPod {
			return fmt.Sprintf("%s: in %s %s release=%s", call.Handler, call.Method, pod.Name, pod.Labels["release"]), true
		}
	case tap.Released:
		if call, isCall := e.Event.(tap.HandlerCall); isCall {
			return fmt.Sprintf("%s: %s returns", call.Handler, call.Method), true
		}
	}
	return "", false
}

// slowHandler holds its first call until gate is closed, and takes
// slowCall over each call listed in slow (counted from 1): a handler
// with real work to do, on a queue the step has filled.
//
// It is the one handler of the course that does not report through
// tap.Handler, for two reasons. A tap.Handler wrapping it (Next) would
// rename it in the trace client-go logs, which the step prints: client-go
// names a handler by its type (nameForHandler, event_handler_name.go),
// "main.slowHandler" here. And a tap.Handler embedded in it (which keeps
// the name, and whose Recorder.Hold could be its gate) records each of
// the 1100 calls with its pod's name, so the trace (--trace, and
// 10-lifecycle.trace.golden) would list 1100 lines where this records
// one per kind of call: the calls that wait, the held one, the slow two.
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

func (h *slowHandler) OnAdd(obj any, initial bool) {
	h.calls++
	if trace.On() {
		note := ""
		if h.calls == 1 {
			note = ", held until the step opens the gate"
		}
		if slices.Contains(h.slow, h.calls) {
			note += ", takes 100 ms"
		}
		trace.Record(trace.Event{Lane: trace.Handlers, Verb: "OnAdd",
			Text: fmt.Sprintf("isInInitialList=%t%s", initial, note),
			Func: "cache.(*processorListener).run"}, obj)
	}
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

// printHeld says that the client, not the server, holds step 5's events.
func printHeld(out io.Writer) {
	fmt.Fprintln(out, "  the client holds back what its watch sends (a client-side fault): no event reaches the informer")
}

// printAtOnce prints step 5's read at once, while the write's event is
// held: the lister's pod and how the store's resourceVersion compares
// with the write's.
func printAtOnce(out io.Writer, written, cached *corev1.Pod, seen string, order int, err error) {
	fmt.Fprintf(out, "  patch web-1 release=v2 (rv=%s), lister.Get at once: release=%s\n",
		written.ResourceVersion, cached.Labels["release"])
	fmt.Fprintf(out, "  CompareResourceVersion(store %s, write %s) = %d, %v: the store is behind\n",
		seen, written.ResourceVersion, order, err)
}

// printCaughtUp prints the store's resourceVersion (seen) and the
// lister's read once waitForStore has returned for the second write.
func printCaughtUp(out io.Writer, written *corev1.Pod, seen string, cached *corev1.Pod) {
	fmt.Fprintf(out, "  ReleaseWatches, waitForStore(%s): store at %s; lister.Get: release=%s\n",
		written.ResourceVersion, seen, cached.Labels["release"])
}

// logLines keeps what a logger writes, one entry per line, and lets a
// step await them. client-go logs on its own goroutines.
type logLines struct {
	mu      sync.Mutex
	lines   []string
	read    int
	changed chan struct{}
}

func newLogLines() *logLines { return &logLines{changed: make(chan struct{})} }

// Write takes one or more log entries (klog and textlogger write whole
// entries); continuation lines of a multi-line entry stay separate lines.
func (l *logLines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, line := range strings.Split(strings.TrimRight(string(p), "\n"), "\n") {
		l.lines = append(l.lines, line)
	}
	close(l.changed)
	l.changed = make(chan struct{})
	return len(p), nil
}

// await returns the next line that contains substr, skipping others.
func (l *logLines) await(ctx context.Context, substr string) (string, error) {
	for {
		l.mu.Lock()
		for l.read < len(l.lines) {
			line := l.lines[l.read]
			l.read++
			if strings.Contains(line, substr) {
				l.mu.Unlock()
				return line, nil
			}
		}
		changed := l.changed
		l.mu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
			return "", fmt.Errorf("waiting for a log line with %q: %w", substr, context.Cause(ctx))
		}
	}
}

// first returns the first line logged so far that contains substr.
func (l *logLines) first(substr string) string {
	for _, line := range l.all() {
		if strings.Contains(line, substr) {
			return line
		}
	}
	return "(nothing logged with " + strconv.Quote(substr) + ")"
}

// all returns every line logged so far.
func (l *logLines) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.lines...)
}

// newLogger returns a logger that writes klog's text format, without
// the time and file:line header, into the lines it returns. Put it in a
// context (klog.NewContext) and client-go logs there instead of stderr.
func newLogger() (logr.Logger, *logLines) {
	lines := newLogLines()
	cfg := textlogger.NewConfig(textlogger.Output(lines), textlogger.WithHeader(false))
	return textlogger.NewLogger(cfg), lines
}

// captureKlog sends what client-go logs through klog's global logger
// (its traces do, not through the context's logger) into lines, with
// klog's -vmodule set, until restore. The runner owns klog's output: if
// the run ends meanwhile (Ctrl-C), klog stays silent after restore.
func captureKlog(vmodule string) (lines *logLines, restore func()) {
	lines = newLogLines()
	return lines, runner.CaptureKlog(lines, vmodule)
}

var (
	// klogHeader is "I1123 16:56:22.272751   20158 trace.go:236] ".
	klogHeader   = regexp.MustCompile(`^[IWEF]\d{4} [\d:.]+\s+\d+ [^ ]+:\d+\] `)
	traceNumber  = regexp.MustCompile(`Trace\[\d+\]`)
	traceStart   = regexp.MustCompile(`\(\d\d-[A-Za-z]{3}-\d{4} [\d:.]+\)`)
	traceTimes   = regexp.MustCompile(`\[[\d.]+[µnm]?s\]`)
	traceTotal   = regexp.MustCompile(`total time: \d+ms`)
	tracePending = regexp.MustCompile(`pendingNotifications:(\d+)`)
	reflectorAt  = regexp.MustCompile(`reflector="[^"]*"`)
	// A test binary names package main by its import path.
	handlerPkg = regexp.MustCompile(`handler:\S*/10-lifecycle\.`)
)

// masked is a log line with what differs between runs replaced by "…":
// the klog header, trace numbers and times, the pending count (which
// the trace reads while the listener's buffer drains), and the
// reflector's name (the file:line that created it, a path on disk).
func masked(line string) string {
	line = klogHeader.ReplaceAllString(line, "")
	line = traceNumber.ReplaceAllString(line, "Trace[…]")
	line = traceStart.ReplaceAllString(line, "(…)")
	line = traceTimes.ReplaceAllString(line, "[…]")
	line = traceTotal.ReplaceAllString(line, "total time: …ms")
	line = tracePending.ReplaceAllString(line, "pendingNotifications:…")
	line = handlerPkg.ReplaceAllString(line, "handler:main.")
	return reflectorAt.ReplaceAllString(line, `reflector="…"`)
}

// pendingIn reads the pendingNotifications field of a trace line.
func pendingIn(line string) (n int) {
	if m := tracePending.FindStringSubmatch(line); m != nil {
		fmt.Sscan(m[1], &n)
	}
	return n
}

// tail is what follows marker in err's message: an error that prints a
// handler's fields (func values, which print as addresses) is shown
// from its deterministic part on.
func tail(err error, marker string) string {
	if err == nil {
		return "<nil>"
	}
	if i := strings.Index(err.Error(), marker); i >= 0 {
		return "…" + err.Error()[i:]
	}
	return err.Error()
}

// firstTrace is the first processorListener trace klog printed: its
// lines, masked, and its pending count. untraced says whether no trace
// at all reported 1024 or fewer pending (client-go traces none such).
type firstTrace struct {
	lines    []string
	pending  int
	untraced bool
}

// traceNumberOf is the "Trace[123]" a trace's lines all begin with.
var traceNumberOf = regexp.MustCompile(`Trace\[\d+\]`)

func firstTraceIn(logged *logLines) firstTrace {
	t := firstTrace{untraced: true}
	var number string
	for _, line := range logged.all() {
		if strings.Contains(line, "processorListener handler") {
			if number == "" {
				number, t.pending = traceNumberOf.FindString(line), pendingIn(line)
			}
			t.untraced = t.untraced && pendingIn(line) > 1024
		}
		if number != "" && strings.Contains(line, number) {
			t.lines = append(t.lines, masked(line))
		}
	}
	return t
}

// printRefused prints what step 1's informer did with a refused list:
// what WaitForCacheSyncWithContext returned, whether the cause was a 403,
// and the line DefaultWatchErrorHandler logged.
func printRefused(out io.Writer, synced error, forbidden bool, logged *logLines) {
	fmt.Fprintf(out, "  the informer's client acts as user %q, who may not list pods\n", nobody)
	fmt.Fprintf(out, "  WaitForCacheSyncWithContext returned at once: %v\n", synced)
	fmt.Fprintf(out, "  apierrors.IsForbidden(context.Cause(ctx)): %t\n", forbidden)
	fmt.Fprintln(out, "  DefaultWatchErrorHandler logged, as it does at every retry without a handler:")
	fmt.Fprintf(out, "    %s\n", masked(logged.first("Failed to watch")))
}

// printTrace prints the first processorListener trace step 3 captured,
// and whether it is call 2's, not the untraced call n's.
func printTrace(out io.Writer, n int, logged *logLines) {
	fmt.Fprintf(out, "  %d pods in a fake clientset; the handler holds call 1 until the informer has synced\n", n)
	fmt.Fprintf(out, "  calls 2 and %d take 100 ms; klog -vmodule=trace=2 (the trace logs at V(2)), captured:\n", n)
	trace := firstTraceIn(logged)
	show.Print(out, "    ", trace.lines)
	fmt.Fprintf(out, "  it is call 2's: pendingNotifications > 1024: %t; call %d, nothing pending, untraced: %t\n",
		trace.pending > 1024, n, trace.untraced)
}

// printRunTwice awaits and prints what RunWithContext logs when step 4's
// factory starts the configmaps informer that already runs.
func printRunTwice(ctx context.Context, out io.Writer, logged *logLines) error {
	warning, err := logged.await(ctx, "run more than once")
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "  configmaps' informer runs on a context of its own; factory.Start logs %s\n", warning)
	return nil
}

// series is the history of one metric: every value it was set to, or
// one entry per observation or increment.
type series struct {
	mu      sync.Mutex
	values  []float64
	read    int // how many values next has returned
	changed chan struct{}
	missing error // why there is no such metric, if there is not
	// traced, if set, records each value on the trace, from the
	// goroutine that set it (the metrics carry no key: the stack says
	// which client-go call set it).
	traced func(v float64)
}

func newSeries() *series { return &series{changed: make(chan struct{})} }

func (s *series) record(v float64) {
	if s.traced != nil && trace.On() {
		s.traced(v)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.values = append(s.values, v)
	close(s.changed)
	s.changed = make(chan struct{})
}

// next waits for the next n values and returns them as "1 0 1 2".
func (s *series) next(ctx context.Context, n int) (string, error) {
	if s.missing != nil {
		return "", s.missing
	}
	for {
		s.mu.Lock()
		if len(s.values) >= s.read+n {
			got := s.values[s.read : s.read+n]
			s.read += n
			s.mu.Unlock()
			return joined(got), nil
		}
		changed, have := s.changed, s.values[s.read:]
		s.mu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
			return "", fmt.Errorf("waiting for %d metric values (got %s): %w",
				n, joined(have), context.Cause(ctx))
		}
	}
}

// count is how many values the metric has taken: for a counter, its
// value; for a histogram, its number of observations.
func (s *series) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.values)
}

// traceQueued records the RealFIFO's queued-items gauge as the FIFO
// call that set it: a delta queued, a pop (a batch is one pop), a
// Replace.
func traceQueued(v float64) {
	fn := caller("cache.(*RealFIFO).")
	_, method, _ := strings.Cut(fn, ").")
	verb, ok := map[string]string{"Add": "Added", "Update": "Updated", "Delete": "Deleted",
		"Replace": "Replaced", "Resync": "Sync", "Pop": "Pop", "PopBatch": "PopBatch"}[method]
	if !ok {
		verb = "queued"
	}
	trace.Record(trace.Event{Lane: trace.FIFO, Verb: verb,
		Text: fmt.Sprintf("queued items now %v (metric)", v), Func: fn}, nil)
}

// traceStoreRV records the store's resourceVersion gauge as the store
// call that set it.
func traceStoreRV(v float64) {
	fn := caller("cache.(*cache).")
	_, method, _ := strings.Cut(fn, ").")
	if method == "" {
		method = "write"
	}
	trace.Record(trace.Event{Lane: trace.Store, Verb: method,
		Text: fmt.Sprintf("store rv=%v (metric)", v), Func: fn}, nil)
}

// caller is the first function on the call stack whose name (without
// its package path) begins with prefix and that the trace can link, or "".
func caller(prefix string) string {
	name, _ := trace.Caller(func(name string) bool { return strings.HasPrefix(name, prefix) && trace.Linkable(name) })
	return name
}

func joined(vs []float64) string {
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = strconv.FormatFloat(v, 'f', -1, 64)
	}
	return strings.Join(parts, " ")
}

// informerMetrics is the chapter's cache.InformerMetricsProvider (its
// New*Metric methods are in main.go). It is one value for the whole
// process because client-go keeps the first provider it is given
// (SetInformerMetricsProvider), for every informer created after. A
// real program hands client-go Prometheus metrics instead
// (kube-controller-manager registers its providers through
// k8s.io/component-base); the interfaces they implement are the same.
var informerMetrics = &informerMetricsProvider{byInformer: map[informerKey]*informerSeries{}}

type informerMetricsProvider struct {
	mu         sync.Mutex
	byInformer map[informerKey]*informerSeries
}

// informerKey is what identifies an informer's metrics: its name and
// the resource it informs on (cache.InformerNameAndResource).
type informerKey struct {
	name string
	gvr  schema.GroupVersionResource
}

// informerSeries are the three metrics of one named informer.
type informerSeries struct {
	queued  *series // items in its RealFIFO
	latency *series // one entry per Pop: the seconds processing took
	storeRV *series // the resourceVersion its store has reached
}

// get returns the metrics client-go made for the informer named name
// that informs on gvr. If it made none (another provider was set first,
// or the informer has no name), awaiting them is an error.
func (p *informerMetricsProvider) get(name string, gvr schema.GroupVersionResource) *informerSeries {
	p.mu.Lock()
	defer p.mu.Unlock()
	if m, ok := p.byInformer[informerKey{name, gvr}]; ok {
		return m
	}
	none := &series{missing: fmt.Errorf("client-go made no metrics for informer %s of %s here "+
		"(was another InformerMetricsProvider set first?)", name, gvr.Resource)}
	return &informerSeries{none, none, none}
}

// of returns id's metrics; fresh ones when fresh is set. The store's
// metric is asked for first, when the informer is built; the FIFO's when
// it runs.
func (p *informerMetricsProvider) of(id cache.InformerNameAndResource, fresh bool) *informerSeries {
	p.mu.Lock()
	defer p.mu.Unlock()
	key := informerKey{id.Name(), id.GroupVersionResource()}
	if m, ok := p.byInformer[key]; ok && !fresh {
		return m
	}
	m := &informerSeries{queued: newSeries(), latency: newSeries(), storeRV: newSeries()}
	m.queued.traced, m.storeRV.traced = traceQueued, traceStoreRV
	p.byInformer[key] = m
	return m
}

// queueMetrics is a workqueue.MetricsProvider for one queue.
type queueMetrics struct {
	depth, adds, latency, workDuration, retries *series
}

func newQueueMetrics() *queueMetrics {
	return &queueMetrics{newSeries(), newSeries(), newSeries(), newSeries(), newSeries()}
}

func (m *queueMetrics) NewDepthMetric(string) workqueue.GaugeMetric { return &upDown{s: m.depth} }
func (m *queueMetrics) NewAddsMetric(string) workqueue.CounterMetric {
	return observer{m.adds}
}
func (m *queueMetrics) NewLatencyMetric(string) workqueue.HistogramMetric {
	return observer{m.latency}
}
func (m *queueMetrics) NewWorkDurationMetric(string) workqueue.HistogramMetric {
	return observer{m.workDuration}
}
func (m *queueMetrics) NewRetriesMetric(string) workqueue.CounterMetric {
	return observer{m.retries}
}

// The two "unfinished work" gauges are set every 500 ms by the queue's
// own goroutine, with times: nothing here to print.
func (m *queueMetrics) NewUnfinishedWorkSecondsMetric(string) workqueue.SettableGaugeMetric {
	return ignored{}
}
func (m *queueMetrics) NewLongestRunningProcessorSecondsMetric(string) workqueue.SettableGaugeMetric {
	return ignored{}
}

// upDown is a gauge moved by Inc and Dec; it records its value after each.
type upDown struct {
	mu sync.Mutex
	v  float64
	s  *series
}

func (g *upDown) Inc() { g.add(1) }
func (g *upDown) Dec() { g.add(-1) }
func (g *upDown) add(d float64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.v += d
	g.s.record(g.v)
}

// observer records one entry per increment or observation.
type observer struct{ s *series }

func (o observer) Inc()              { o.s.record(1) }
func (o observer) Observe(v float64) { o.s.record(v) }

type ignored struct{}

func (ignored) Set(float64) {}

// awaiter awaits metric values one series after another and keeps the
// first error, so that a step can await several without an if each.
type awaiter struct {
	ctx context.Context
	err error
}

// next awaits the next n values of s and returns them as "1 0 1 2".
func (a *awaiter) next(s *series, n int) string {
	if a.err != nil {
		return ""
	}
	got, err := s.next(a.ctx, n)
	a.err = err
	return got
}

// count awaits n values of s (histogram observations, whose values are
// times) and returns how many s has.
func (a *awaiter) count(s *series, n int) int {
	a.next(s, n)
	return s.count()
}

// printSynced prints step 2's metrics once its informer has synced.
func printSynced(out io.Writer, queued, storeRV, depth string) {
	fmt.Fprintf(out, "  synced: queued items %s; store resourceVersion %s; workqueue depth %s\n",
		queued, storeRV, depth)
}

// printQueuedBehind prints the queued items as slow's index function
// holds it (held) and web-2..4 queue behind it (behind).
func printQueuedBehind(out io.Writer, held, behind string) {
	fmt.Fprintf(out, "  create slow (its index function waits), web-2..4: queued items %s %s\n",
		held, behind)
}

// printReleased prints the queue emptied in one batch, and the store at
// the batch's last object, written at lastRV.
func printReleased(out io.Writer, queued, storeRV, lastRV string) {
	fmt.Fprintf(out, "  release it: queued items %s; store resourceVersion %s (web-4 was written at %s)\n",
		queued, storeRV, lastRV)
}

// printAdded prints the workqueue's depth as the handler added keys, and
// how many times processing latency was observed.
func printAdded(out io.Writer, depth string, latencies int) {
	fmt.Fprintf(out, "  workqueue depth %s as the handler adds keys\n", depth)
	fmt.Fprintf(out, "  processing latency: %d observations, one per pop (a batch is one pop)\n", latencies)
}

// printDrained prints the workqueue's metrics once a worker drained it.
func printDrained(out io.Writer, depth string, adds, latencies, workDurations int) {
	fmt.Fprintf(out, "  a worker drains it: depth %s; adds %d; latency, work duration: %d, %d observations\n",
		depth, adds, latencies, workDurations)
}
