package main

// The chapter's metrics providers: plain gauges and counters that keep
// every value they are given, so that a step can await them and print
// them (metricsPrinter). A real program hands client-go Prometheus
// metrics instead (kube-controller-manager registers its providers
// through k8s.io/component-base); the interfaces it implements are the
// same.

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
)

// series is the history of one metric: every value it was set to, or
// one entry per observation or increment.
type series struct {
	mu      sync.Mutex
	values  []float64
	read    int // how many values next has returned
	changed chan struct{}
	missing error // why there is no such metric, if there is not
}

func newSeries() *series { return &series{changed: make(chan struct{})} }

func (s *series) record(v float64) {
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

func joined(vs []float64) string {
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = strconv.FormatFloat(v, 'f', -1, 64)
	}
	return strings.Join(parts, " ")
}

// informerMetrics is the chapter's cache.InformerMetricsProvider. It is
// one value for the whole process because client-go keeps the first
// provider it is given (SetInformerMetricsProvider), for every informer
// created after.
var informerMetrics = &informerMetricsProvider{byInformer: map[string]*informerSeries{}}

type informerMetricsProvider struct {
	mu         sync.Mutex
	byInformer map[string]*informerSeries // by "name/resource"
}

// informerSeries are the three metrics of one named informer.
type informerSeries struct {
	queued  *series // items in its RealFIFO
	latency *series // one entry per Pop: the seconds processing took
	storeRV *series // the resourceVersion its store has reached
}

// get returns the metrics of the informer named name that informs on
// resource. If client-go never asked for them (another provider was set
// first, or the informer has no name), awaiting them is an error.
func (p *informerMetricsProvider) get(name, resource string) *informerSeries {
	p.mu.Lock()
	defer p.mu.Unlock()
	if m, ok := p.byInformer[name+"/"+resource]; ok {
		return m
	}
	none := &series{missing: fmt.Errorf("client-go made no metrics for informer %s/%s here "+
		"(was another InformerMetricsProvider set first?)", name, resource)}
	return &informerSeries{none, none, none}
}

// of returns id's metrics; fresh ones when fresh is set. The store's
// metric is asked for first, when the informer is built; the FIFO's when
// it runs.
func (p *informerMetricsProvider) of(id cache.InformerNameAndResource, fresh bool) *informerSeries {
	p.mu.Lock()
	defer p.mu.Unlock()
	key := id.Name() + "/" + id.GroupVersionResource().Resource
	if m, ok := p.byInformer[key]; ok && !fresh {
		return m
	}
	m := &informerSeries{queued: newSeries(), latency: newSeries(), storeRV: newSeries()}
	p.byInformer[key] = m
	return m
}

// !+provider
func (p *informerMetricsProvider) NewStoreResourceVersionMetric(id cache.InformerNameAndResource) cache.GaugeMetric {
	return informerGauge{id, p.of(id, true).storeRV}
}

func (p *informerMetricsProvider) NewQueuedItemMetric(id cache.InformerNameAndResource) cache.GaugeMetric {
	return informerGauge{id, p.of(id, false).queued}
}

func (p *informerMetricsProvider) NewProcessingLatencyMetric(id cache.InformerNameAndResource) cache.HistogramMetric {
	return informerGauge{id, p.of(id, false).latency}
}

// !-provider

// informerGauge records values while its informer's name is reserved:
// InformerMetricsProvider asks every metric to check, since an informer
// may stop (and its factory release the name) while the process runs.
// !+gauge
type informerGauge struct {
	id cache.InformerNameAndResource
	s  *series
}

func (g informerGauge) Set(v float64) {
	if g.id.Reserved() {
		g.s.record(v)
	}
}

func (g informerGauge) Observe(v float64) { g.Set(v) }

// !-gauge

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

// metricsPrinter awaits the metrics of step 2's informer and workqueue,
// in the order the step makes them, and prints them. Its awaiter keeps
// the first error, which the step returns.
type metricsPrinter struct {
	awaiter
	out      io.Writer
	informer *informerSeries
	queue    *queueMetrics
	held     string // queued items while slow's index function waits
}

func newMetricsPrinter(ctx context.Context, out io.Writer, informer *informerSeries, queue *queueMetrics) *metricsPrinter {
	return &metricsPrinter{awaiter: awaiter{ctx: ctx}, out: out, informer: informer, queue: queue}
}

func (p *metricsPrinter) printSynced() {
	fmt.Fprintf(p.out, "  synced: queued items %s; store resourceVersion %s; workqueue depth %s\n",
		p.next(p.informer.queued, 2), p.next(p.informer.storeRV, 1), p.next(p.queue.depth, 1))
}

// awaitHeld awaits slow's item: queued, then popped (and held in its
// index function). printQueuedBehind prints it.
func (p *metricsPrinter) awaitHeld() { p.held = p.next(p.informer.queued, 2) }

// printQueuedBehind awaits web-2..4 in the queue, behind slow: the step
// lets slow go on only then, so that they leave in one batch.
func (p *metricsPrinter) printQueuedBehind() {
	fmt.Fprintf(p.out, "  create slow (its index function waits), web-2..4: queued items %s %s\n",
		p.held, p.next(p.informer.queued, 3))
}

// printReleased prints the queue emptied in one batch, the store at the
// batch's last object (last), and what the handler put in the workqueue.
func (p *metricsPrinter) printReleased(last *corev1.Pod) {
	fmt.Fprintf(p.out, "  release it: queued items %s; store resourceVersion %s (web-4 was written at %s)\n",
		p.next(p.informer.queued, 1), p.next(p.informer.storeRV, 2), last.ResourceVersion)
	fmt.Fprintf(p.out, "  workqueue depth %s as the handler adds keys\n", p.next(p.queue.depth, 4))
	fmt.Fprintf(p.out, "  processing latency: %d observations, one per pop (a batch is one pop)\n",
		p.count(p.informer.latency, 3))
}

func (p *metricsPrinter) printDrained() {
	fmt.Fprintf(p.out, "  a worker drains it: depth %s; adds %d; latency, work duration: %d, %d observations\n",
		p.next(p.queue.depth, 5), p.queue.adds.count(), p.queue.latency.count(), p.queue.workDuration.count())
}
