package main

// The chapter's one window into its controller. Nothing in this file
// is part of the controller pattern: the controller logs what it does,
// one line where it happens, to a klog.Logger, as sample-controller
// does; controllerLog is the logger the steps hand it. Handlers and
// workers run on goroutines of their own, so the lines are not printed
// where they are logged: they wait in a show.Lines until the step that
// made them happen awaits and prints them, in the order they were
// logged (or sorted by key, where workers ran in parallel). And a step
// can hold a worker at the line it logs before Update, like a
// breakpoint, to make something happen meanwhile (steps 3 and 4).
// Then the relist that step 4 stages with the client's own faults, and
// the steps' printing helpers.

import (
	"context"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/go-logr/logr"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/informer-walkthrough/informer-walkthrough/internal/apiserver"
	"github.com/informer-walkthrough/informer-walkthrough/internal/show"
	"github.com/informer-walkthrough/informer-walkthrough/internal/trace"
)

// controllerLog turns what the controller logs into lines for the
// steps.
type controllerLog struct {
	lines *show.Lines
	added *show.Lines     // an Add returned (the handler's V(4) "Enqueued")
	done  <-chan struct{} // a held worker goes on when the controller stops

	mu      sync.Mutex
	hold    *hold               // the worker to hold, if any
	syncing map[string]struct{} // keys whose sync has logged (for the trace)
}

// newControllerLog returns a log that stops holding and taking lines
// when ctx ends: the context the controller runs in.
func newControllerLog(ctx context.Context) *controllerLog {
	return &controllerLog{lines: show.NewLines(ctx), added: show.NewLines(ctx), done: ctx.Done()}
}

// Logger is the klog.Logger to hand the controller. It is enabled at
// V(0) only, as a controller's log is by default.
func (l *controllerLog) Logger() klog.Logger { return logr.New(logSink{l}) }

type logSink struct{ l *controllerLog }

func (s logSink) Init(logr.RuntimeInfo)  {}
func (s logSink) Enabled(level int) bool { return level == 0 || level == 4 }

// Info makes a line of what the controller logs at V(0); of V(4), it
// takes only "Enqueued", which says that a handler's Add has returned.
func (s logSink) Info(level int, msg string, keysAndValues ...any) {
	switch {
	case level == 0:
		s.l.record(msg, nil, keysAndValues)
	case msg == "Enqueued":
		// After the Add: the workqueue lane's Add, then the step may go on.
		key := ""
		if len(keysAndValues) == 2 {
			key = fmt.Sprint(keysAndValues[1])
		}
		trace.Record(trace.Event{Lane: trace.Workqueue, Verb: "Add", Text: key, Key: key,
			Func: "workqueue.(*Typed[T]).Add"}, nil)
		s.l.added.Send(msg)
	}
}
func (s logSink) Error(err error, msg string, keysAndValues ...any) {
	s.l.record(msg, err, keysAndValues)
}
func (s logSink) WithValues(...any) logr.LogSink { return s }
func (s logSink) WithName(string) logr.LogSink   { return s }

// record makes one line of a log entry and sends it; then, if the entry
// is the one a step holds, it waits until the step releases it.
func (l *controllerLog) record(msg string, err error, keysAndValues []any) {
	kv := map[string]any{}
	for i := 0; i+1 < len(keysAndValues); i += 2 {
		if k, ok := keysAndValues[i].(string); ok {
			kv[k] = keysAndValues[i+1]
		}
	}
	line := format(msg, err, kv)
	release := l.held(msg, kv["key"])
	if release != nil {
		line += "  ← held here by the step"
	}
	l.trace(msg, err, kv, release != nil)
	l.lines.Send(line)
	if release != nil {
		select {
		case <-release:
		case <-l.done:
		}
	}
}

// trace records a log entry on the trace's lanes (package trace),
// before the line is sent, so before the step that awaits the line
// goes on. The log is the chapter's only window: the handler logs
// before its Add; a worker logs once it has a key (its Get), as it
// syncs, and after its Forget or AddRateLimited, before its Done (a
// deferred call). So a worker's Get is recorded with its first line,
// its Done with its last. The informer's own lanes (reflector, FIFO,
// store) stay empty here: the factory's informer has no tap.
func (l *controllerLog) trace(msg string, err error, kv map[string]any, held bool) {
	if !trace.On() {
		return
	}
	key := fmt.Sprint(kv["key"])
	switch msg {
	case "Enqueue":
		verb := map[any]string{"ADD": "OnAdd", "UPDATE": "OnUpdate", "DELETE": "OnDelete"}[kv["event"]]
		text := key + " → Add"
		if _, ok := kv["object"].(cache.DeletedFinalStateUnknown); ok {
			text = key + " (tombstone) → Add"
		}
		trace.Record(trace.Event{Lane: trace.Handlers, Verb: verb, Text: text,
			Func: "cache.(*processorListener).run"}, kv["object"])
		return
	case "Skip":
		d := deploymentOf(kv["object"])
		k, _ := cache.MetaNamespaceKeyFunc(d)
		trace.Record(trace.Event{Lane: trace.Handlers, Verb: "OnUpdate",
			Text: k + " same resourceVersion → skip, no Add",
			Func: "cache.(*processorListener).run"}, d)
		return
	case "Creating summary", "Updating summary", "Summary in sync", "Deleting summary":
		l.started(key)
		what := map[string]string{"Creating summary": "→ create configmap/%v",
			"Updating summary": "→ update configmap/%v", "Summary in sync": "configmap/%v already in sync",
			"Deleting summary": "not in the lister → delete configmap/%v"}[msg]
		text := key + " " + fmt.Sprintf(what, kv["configmap"])
		if held {
			text += " (held by the step)"
		}
		trace.Record(trace.Event{Lane: trace.Workers, Verb: "sync", Text: text, Key: key}, nil)
	case "Successfully synced":
		l.started(key)
		trace.Record(trace.Event{Lane: trace.Workers, Verb: "synced", Text: key, Key: key}, nil)
		trace.Record(trace.Event{Lane: trace.Workqueue, Verb: "Forget", Text: key + afterTheFact, Key: key,
			Func: "workqueue.(*rateLimitingType[T]).Forget"}, nil)
		l.finished(key)
	case "Error syncing; requeuing for later retry":
		l.started(key)
		code := 0
		if status, ok := err.(apierrors.APIStatus); ok {
			code = int(status.Status().Code)
		}
		trace.Record(trace.Event{Lane: trace.Workers, Verb: "error",
			Text: fmt.Sprintf("%s %d %s", key, code, apierrors.ReasonForError(err)), Key: key}, nil)
		trace.Record(trace.Event{Lane: trace.Workqueue, Verb: "AddRateLimited",
			Text: fmt.Sprintf("%s (NumRequeues %v)%s", key, kv["requeues"], afterTheFact), Key: key,
			Func: "workqueue.(*rateLimitingType[T]).AddRateLimited"}, nil)
		l.finished(key)
	}
}

// afterTheFact ends the text of a workqueue event that the log shows
// only after the call was made (a worker's Get at its first line, its
// Done at its last, Forget and AddRateLimited at the line after them):
// the page places it where the log said it, not where it happened.
const afterTheFact = " (seen at the worker's log line)"

// started records a worker's Get of key, at the first line its sync
// logs.
func (l *controllerLog) started(key string) {
	l.mu.Lock()
	_, ok := l.syncing[key]
	if l.syncing == nil {
		l.syncing = map[string]struct{}{}
	}
	l.syncing[key] = struct{}{}
	l.mu.Unlock()
	if !ok {
		trace.Record(trace.Event{Lane: trace.Workqueue, Verb: "Get", Text: key + afterTheFact, Key: key,
			Func: "workqueue.(*Typed[T]).Get"}, nil)
	}
}

// finished records a worker's Done with key, at the last line its sync
// logs.
func (l *controllerLog) finished(key string) {
	l.mu.Lock()
	delete(l.syncing, key)
	l.mu.Unlock()
	trace.Record(trace.Event{Lane: trace.Workqueue, Verb: "Done", Text: key + afterTheFact, Key: key,
		Func: "workqueue.(*Typed[T]).Done"}, nil)
}

// format renders a log entry as the line the chapter prints.
func format(msg string, err error, kv map[string]any) string {
	key := fmt.Sprint(kv["key"])
	switch msg {
	case "Enqueue":
		s := fmt.Sprintf("handler %-6s %s  rv=%s", kv["event"], key, rvOf(deploymentOf(kv["object"])))
		if kv["event"] != "DELETE" { // a deleted object's labels are beside the point
			s += "  release=" + releaseOf(deploymentOf(kv["object"]))
		}
		return s + "  → Add"
	case "Skip":
		d := deploymentOf(kv["object"])
		k, _ := cache.MetaNamespaceKeyFunc(d)
		return fmt.Sprintf("handler UPDATE %s  rv=%s (old rv=%s)  release=%s  → skip, no Add",
			k, rvOf(d), rvOf(deploymentOf(kv["old"])), releaseOf(d))
	case "Creating summary":
		return fmt.Sprintf("worker  %s  release=%s  → create configmap/%s", key, kv["release"], kv["configmap"])
	case "Updating summary":
		return fmt.Sprintf("worker  %s  release=%s  → update configmap/%s", key, kv["release"], kv["configmap"])
	case "Summary in sync":
		return fmt.Sprintf("worker  %s  release=%s  → configmap/%s already in sync", key, kv["release"], kv["configmap"])
	case "Deleting summary":
		return fmt.Sprintf("worker  %s  not in the lister  → delete configmap/%s", key, kv["configmap"])
	case "Successfully synced":
		return fmt.Sprintf("worker  %s  synced  → Forget, Done", key)
	case "Error syncing; requeuing for later retry":
		code := 0
		if status, ok := err.(apierrors.APIStatus); ok {
			code = int(status.Status().Code)
		}
		return fmt.Sprintf("worker  %s  %d %s  → AddRateLimited (NumRequeues %v), Done",
			key, code, apierrors.ReasonForError(err), kv["requeues"])
	}
	// Anything else, as a klog text line would show it.
	s := msg
	if err != nil {
		s += fmt.Sprintf(" err=%q", err)
	}
	for _, k := range slices.Sorted(maps.Keys(kv)) {
		s += fmt.Sprintf(" %s=%v", k, kv[k])
	}
	return s
}

// A hold stops the worker syncing key at the line it logs before
// Update, the next n times; release lets one go on.
type hold struct {
	key    cache.ObjectName
	left   int           // holds still to come (under l.mu)
	tokens chan struct{} // one per release
}

// holdBeforeUpdate holds the next n syncs of key at their "Updating
// summary" line: after they read the lister and GET the summary,
// before their Update. The step awaits that line, does what it wants
// done meanwhile, then calls release. When the controller stops, every
// held sync goes on (so a step that fails leaves none held).
func (l *controllerLog) holdBeforeUpdate(key cache.ObjectName, n int) *hold {
	h := &hold{key: key, left: n, tokens: make(chan struct{}, n)}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.hold = h
	return h
}

// held returns the channel to wait on if the entry msg of key is to be
// held, and nil otherwise.
func (l *controllerLog) held(msg string, key any) <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	h := l.hold
	if h == nil || msg != "Updating summary" || key != h.key || h.left == 0 {
		return nil
	}
	h.left--
	return h.tokens
}

// release lets one held sync go on.
func (h *hold) release() {
	select {
	case h.tokens <- struct{}{}:
	default: // every hold already released
	}
}

// relistFromClient makes the informer relist, the same way on the
// workshop cluster and on a real one, and says so: the chapter's client
// ends the informer's watch, and answers the re-watch itself with 410
// Expired, as kube-apiserver does for a resourceVersion it no longer
// has. The reflector then relists after its backoff.
func (s *steps) relistFromClient() {
	// !+relist
	isRewatch := func(r apiserver.Request) bool {
		return r.Verb == "watch" && r.Resource == "deployments.apps" &&
			r.Query.Get("sendInitialEvents") == ""
	}
	s.c.Faults().AnswerWatch(isRewatch, apierrors.NewResourceExpired("too old resource version (answered by the client)"))
	s.c.Faults().EndWatches()
	// !-relist
	s.printf("  the client ends the informer's watch and answers its re-watch itself: %d Expired\n",
		http.StatusGone)
	fmt.Fprintln(s.out, "  after its backoff the informer relists")
}

// print awaits the next n lines of the controller's log and prints
// them in the order they were logged.
func (l *controllerLog) print(ctx context.Context, out io.Writer, n int) error {
	lines, err := l.await(ctx, n)
	show.Print(out, "  ", lines)
	return err
}

// await awaits n lines, and for each handler line among them, its Add:
// a handler logs "Enqueue" before it calls Add, so a step that goes on
// at the line (step 2 starts the workers) could otherwise overtake the
// Add, and a worker take web before its last Add marked it dirty again.
func (l *controllerLog) await(ctx context.Context, n int) ([]string, error) {
	lines, err := l.lines.Await(ctx, n)
	if err != nil {
		return lines, err
	}
	adds := 0
	for _, line := range lines {
		if strings.HasPrefix(line, "handler ") && strings.HasSuffix(line, "→ Add") {
			adds++
		}
	}
	_, err = l.added.Await(ctx, adds)
	return lines, err
}

// printByKey is print for lines of workers that ran in parallel: sorted
// by key, keeping each key's own order (a key's syncs never overlap,
// so that order is real).
func (l *controllerLog) printByKey(ctx context.Context, out io.Writer, n int) error {
	lines, err := l.await(ctx, n)
	keyOf := func(line string) string {
		f := strings.Fields(line)
		if f[0] == "handler" {
			return f[2]
		}
		return f[1]
	}
	slices.SortStableFunc(lines, func(a, b string) int { return strings.Compare(keyOf(a), keyOf(b)) })
	show.Print(out, "  ", lines)
	return err
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

// deploymentOf unwraps what a handler was given: a Deployment, or a
// tombstone that may (or may not) hold one.
func deploymentOf(obj any) *appsv1.Deployment {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	d, _ := obj.(*appsv1.Deployment)
	return d
}

// printf prints a line of a step.
func (s *steps) printf(format string, a ...any) { fmt.Fprintf(s.out, format, a...) }

// printCreated prints a Deployment the step created.
func printCreated(out io.Writer, d *appsv1.Deployment) {
	fmt.Fprintf(out, "  create deployment/%s  rv=%s  release=%s (paused, replicas 0)\n",
		d.Name, d.ResourceVersion, releaseOf(d))
}

// printPatched prints a Deployment the step patched, and a note.
func printPatched(out io.Writer, d *appsv1.Deployment, note string) {
	fmt.Fprintf(out, "  patch deployment/%s  rv=%s  release=%s%s\n",
		d.Name, d.ResourceVersion, releaseOf(d), note)
}

// printEdited prints a summary the second client patched.
func printEdited(out io.Writer, cm *corev1.ConfigMap) {
	fmt.Fprintf(out, "  someone else: patch configmap/%s  rv=%s  %s=%s\n",
		cm.Name, cm.ResourceVersion, editedBy, cm.Annotations[editedBy])
}

// printSummary prints a summary and who edited it.
func printSummary(out io.Writer, cm *corev1.ConfigMap) {
	fmt.Fprintf(out, "  configmap/%s  rv=%s  labels=%s  %s=%s\n",
		cm.Name, cm.ResourceVersion, cm.Data["labels"], editedBy, cm.Annotations[editedBy])
}

// printSummaries lists the summaries left on the cluster.
func printSummaries(out io.Writer, cms []corev1.ConfigMap) {
	for _, cm := range cms {
		fmt.Fprintf(out, "  left behind: configmap/%s  labels=%s  replicas=%s\n",
			cm.Name, cm.Data["labels"], cm.Data["replicas"])
	}
}
