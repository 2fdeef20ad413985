package main

// How the chapter watches its controller, and nothing of what it
// teaches: the controller (controller.go) is sample-controller's shape,
// unchanged; the chapter wraps three of the client-go interfaces it is
// handed (internal/tap): the informer it registers its handler on, its
// workqueue, and its client's transport. Each records its calls as typed
// events, which the steps await and print here as the lines of the
// output, in the order they happened (or sorted by key, where workers
// ran in parallel); the trace (--trace, --view) is drawn from the same
// events. A step can hold the controller's Update of a summary before it
// leaves, like a breakpoint, to make something happen meanwhile (steps 3
// and 4). Then the steps' printing helpers, and the relist step 4
// stages through the chapter's own client (relistFromClient).

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	appsinformers "k8s.io/client-go/informers/apps/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/informer-walkthrough/informer-walkthrough/internal/apiserver"
	"github.com/informer-walkthrough/informer-walkthrough/internal/tap"
	"github.com/informer-walkthrough/informer-walkthrough/internal/trace"
)

// watch is what the taps saw, rendered as the lines the steps print.
type watch struct {
	rec       *tap.Recorder
	namespace string
	// What a line needs from earlier events: the Adds a handler call
	// made (recorded before the call returned: each holds the place of
	// the handler's line, filled in when the call is recorded), and how
	// a worker's turn is ending: its last failed write, its Forget or
	// AddRateLimited.
	added  map[string][]*line
	failed map[string]string
	ending map[string]string
}

func newWatch(ctx context.Context, namespace string) *watch {
	return &watch{rec: tap.NewRecorder(ctx), namespace: namespace,
		added: map[string][]*line{}, failed: map[string]string{}, ending: map[string]string{}}
}

// client is cfg with its requests recorded: the controller's writes are
// the workers' lane of the trace.
func (w *watch) client(cfg *rest.Config) *rest.Config {
	return tap.Transport(cfg, w.rec, trace.Workers)
}

// queue wraps the controller's workqueue.
func (w *watch) queue(q workqueue.TypedRateLimitingInterface[cache.ObjectName]) workqueue.TypedRateLimitingInterface[cache.ObjectName] {
	return tap.Queue[cache.ObjectName]{TypedRateLimitingInterface: q, Rec: w.rec}
}

// handlerOf is the factory's Deployment informer, but every handler
// registered on it is wrapped: its calls are recorded once they return.
func (w *watch) handlerOf(d appsinformers.DeploymentInformer) appsinformers.DeploymentInformer {
	return tappedDeployments{d, w.rec}
}

type tappedDeployments struct {
	appsinformers.DeploymentInformer
	rec *tap.Recorder
}

func (d tappedDeployments) Informer() cache.SharedIndexInformer {
	return tappedInformer{d.DeploymentInformer.Informer(), d.rec}
}

type tappedInformer struct {
	cache.SharedIndexInformer
	rec *tap.Recorder
}

func (i tappedInformer) AddEventHandler(h cache.ResourceEventHandler) (cache.ResourceEventHandlerRegistration, error) {
	return i.SharedIndexInformer.AddEventHandler(tap.Handler{Rec: i.rec, Next: h})
}

// holdUpdate holds the next n Updates of configmap/name at the
// controller's client, before they leave, until the step releases them;
// all go on when the controller stops.
func (w *watch) holdUpdate(name string, n int) *tap.Gate {
	return w.rec.Hold(n, func(e tap.Event) bool {
		r, ok := e.(tap.Request)
		return ok && r.Verb == "update" && r.Resource == "configmaps" && r.Name == name
	})
}

// A line is one line of the output, and the key it is about.
type line struct{ key, text string }

// print awaits the next n lines and prints them in the order their
// events happened.
func (w *watch) print(ctx context.Context, out io.Writer, n int) error {
	lines, err := w.await(ctx, n)
	for _, l := range lines {
		fmt.Fprintf(out, "  %s\n", l.text)
	}
	return err
}

// printByKey is print for lines of workers that ran in parallel: sorted
// by key, keeping each key's own order (a key's syncs never overlap,
// so that order is real).
func (w *watch) printByKey(ctx context.Context, out io.Writer, n int) error {
	lines, err := w.await(ctx, n)
	slices.SortStableFunc(lines, func(a, b line) int { return strings.Compare(a.key, b.key) })
	for _, l := range lines {
		fmt.Fprintf(out, "  %s\n", l.text)
	}
	return err
}

// await renders events until it has n lines. A handler's line takes
// its place at the handler's Add, not at the end of its call: a worker
// may Get the key, and be held, before the handler's call has returned.
func (w *watch) await(ctx context.Context, n int) ([]line, error) {
	var lines []*line
	filled := func() (all []line, done int) {
		for _, l := range lines {
			if l.text != "" {
				all = append(all, *l)
			}
		}
		return all, len(all)
	}
	for {
		all, done := filled()
		if done >= n && done == len(lines) {
			return all, nil
		}
		e, err := w.rec.Next(ctx)
		if err != nil {
			return all, err
		}
		if q, ok := e.(tap.QueueCall); ok && q.Method == "Add" { // only the handler calls Add
			key := fmt.Sprint(q.Item)
			place := &line{key: key}
			w.added[key] = append(w.added[key], place)
			lines = append(lines, place)
			continue
		}
		if l, ok := w.render(e); ok {
			lines = append(lines, &l)
		}
	}
}

// render makes the line an event stands for, if it stands for one:
//
//   - a handler call, with → Add if the handler added its key (the
//     queue's Add was recorded before the call returned) or → skip;
//   - a worker's write, as it leaves the client (held, or answered);
//   - the end of a worker's turn, at its Done: Forget, or the failure
//     and AddRateLimited.
//
// Get and the reads carry nothing the lines show: they are on the trace.
func (w *watch) render(e tap.Event) (line, bool) {
	switch e := e.(type) {
	case tap.QueueCall:
		key := fmt.Sprint(e.Item)
		switch e.Method {
		case "Forget":
			w.ending[key] = "synced  → Forget"
		case "AddRateLimited":
			w.ending[key] = fmt.Sprintf("%s  → AddRateLimited (NumRequeues %d)", w.failed[key], e.Requeues)
		case "Done":
			text := fmt.Sprintf("worker  %s  %s, Done", key, w.ending[key])
			delete(w.ending, key)
			delete(w.failed, key)
			return line{key, text}, true
		}
	case tap.HandlerCall:
		return w.handlerLine(e)
	case tap.Held:
		switch held := e.Event.(type) {
		case tap.Request:
			l, ok := w.writeLine(held)
			l.text += "  ← held here by the step"
			return l, ok
		case tap.QueueCall: // a worker held with a key in hand
			key := fmt.Sprint(held.Item)
			return line{key, fmt.Sprintf("worker  %s  %s  ← held here by the step", key, held)}, true
		}
	case tap.Request:
		key := w.summaryKey(e)
		if e.Code >= 300 && e.Verb != "get" {
			w.failed[key] = fmt.Sprintf("%d %s", e.Code, e.Reason)
		}
		if !e.Held { // a held write has its line already
			return w.writeLine(e)
		}
	}
	return line{}, false
}

// handlerLine is a handler call's line. An update the handler skipped
// is shown when it carries the same resourceVersion (a relist or a
// resync); the others skipped are status writes, many on a real
// cluster, and not shown (the trace has them).
func (w *watch) handlerLine(c tap.HandlerCall) (line, bool) {
	key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(c.Obj)
	if err != nil {
		return line{}, false
	}
	d := deploymentOf(c.Obj)
	event := map[string]string{"OnAdd": "ADD", "OnUpdate": "UPDATE", "OnDelete": "DELETE"}[c.Method]
	if places := w.added[key]; len(places) > 0 {
		w.added[key] = places[1:]
		text := fmt.Sprintf("handler %-6s %s  rv=%s", event, key, rvOf(d))
		if event != "DELETE" { // a deleted object's labels are beside the point
			text += "  release=" + releaseOf(d)
		}
		places[0].text = text + "  → Add" // in the place of its Add
		return line{}, false
	}
	if old := deploymentOf(c.Old); c.Method == "OnUpdate" && rvOf(old) == rvOf(d) {
		return line{key, fmt.Sprintf("handler UPDATE %s  rv=%s (old rv=%s)  release=%s  → skip, no Add",
			key, rvOf(d), rvOf(old), releaseOf(d))}, true
	}
	return line{}, false
}

// writeLine is a worker's write of a summary: what it sends, and for
// a create or an update the release the summary says, which the sync
// read from the lister.
func (w *watch) writeLine(r tap.Request) (line, bool) {
	if r.Resource != "configmaps" || (r.Verb != "create" && r.Verb != "update" && r.Verb != "delete") {
		return line{}, false
	}
	key := w.summaryKey(r)
	if r.Verb == "delete" {
		return line{key, fmt.Sprintf("worker  %s  → delete configmap/%s", key, r.Name)}, true
	}
	release := "?"
	if cm, ok := r.Obj.(*corev1.ConfigMap); ok {
		if set, err := labels.ConvertSelectorToLabelsMap(cm.Data["labels"]); err == nil {
			release = set["release"]
		}
	}
	return line{key, fmt.Sprintf("worker  %s  release=%s  → %s configmap/%s", key, release, r.Verb, r.Name)}, true
}

// summaryKey is the key of the Deployment whose summary r names
// (newSummary: "<name>-summary").
func (w *watch) summaryKey(r tap.Request) string {
	return w.namespace + "/" + strings.TrimSuffix(r.Name, "-summary")
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
