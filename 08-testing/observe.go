package main

// What the chapter needs only to show what happens: a tapped
// ListWatch, a watch reactor that says when a watch opens, the fake's
// recorded actions as requests, watch events read and named, a
// stopwatch, the formatting of the steps' lines, and step 7, a table of
// advice with no client-go in it.

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"

	"github.com/informer-walkthrough/informer-walkthrough/internal/apiserver"
	"github.com/informer-walkthrough/informer-walkthrough/internal/cluster"
	"github.com/informer-walkthrough/informer-walkthrough/internal/show"
	"github.com/informer-walkthrough/informer-walkthrough/internal/trace"
)

// tappedListWatch is a ListWatch whose watches report each event to
// lines once the reflector has taken it. It adds no method: the
// reflector sees what it would see of the ListWatch itself.
type tappedListWatch struct {
	*cache.ListWatch
	lines *show.Lines
}

// tapped wraps lw; what its watches deliver comes on the lines it
// returns.
func tapped(ctx context.Context, lw *cache.ListWatch) (*tappedListWatch, *show.Lines) {
	t := &tappedListWatch{ListWatch: lw, lines: show.NewLines(ctx)}
	return t, t.lines
}

func (t *tappedListWatch) WatchWithContext(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
	w, err := t.ListWatch.WatchWithContext(ctx, o)
	if err != nil {
		return nil, err
	}
	tw := &tappedWatch{Interface: w, out: make(chan watch.Event), stop: make(chan struct{})}
	go func() {
		defer close(tw.out)
		for ev := range w.ResultChan() {
			select {
			case tw.out <- ev: // the reflector has it
				trace.Record(trace.Event{Lane: trace.Reflector, Verb: string(ev.Type),
					Text: "pod/" + nameOf(ev.Object) + " taken from the fake's watch",
					Func: "cache.handleAnyWatch"}, ev.Object)
				t.lines.Send(typeAndName(ev))
			case <-tw.stop:
				return
			}
		}
	}()
	return tw, nil
}

// tappedWatch hands on the events of the watch it wraps.
type tappedWatch struct {
	watch.Interface
	out  chan watch.Event
	stop chan struct{}
	once sync.Once
}

func (w *tappedWatch) ResultChan() <-chan watch.Event { return w.out }

func (w *tappedWatch) Stop() {
	w.once.Do(func() { close(w.stop) })
	w.Interface.Stop()
}

// watchesOpened reports on the lines it returns each watch of pods
// that client opens, as it opens, from a watch reactor. The reactor
// returns false: the tracker still serves the watch.
func watchesOpened(ctx context.Context, client *fake.Clientset) *show.Lines {
	opened := show.NewLines(ctx)
	client.PrependWatchReactor("pods", func(a clienttesting.Action) (bool, watch.Interface, error) {
		traceWatch(a)
		opened.Send(a.GetVerb() + " " + a.GetResource().Resource)
		return false, nil, nil
	})
	return opened
}

// traceWatch records, on the trace's reflector lane, a watch that a
// reflector opens on a fake (a fake's calls never reach the wire): a
// watch-list if it asks for the initial events, else a watch.
func traceWatch(a clienttesting.Action) {
	w, ok := a.(clienttesting.WatchActionImpl)
	if !ok || !trace.On() {
		return
	}
	e := trace.Event{Lane: trace.Reflector, Verb: "watch", Text: "pods on the fake",
		Func: "cache.(*Reflector).watch"}
	if o := w.ListOptions; o.SendInitialEvents != nil && *o.SendInitialEvents {
		e.Verb, e.Text, e.Func = "watch-list", "pods on the fake (sendInitialEvents)", "cache.(*Reflector).watchList"
	}
	trace.Record(e, nil)
}

// receive waits for the next line on ch.
func receive(ctx context.Context, ch <-chan string) (string, error) {
	select {
	case s := <-ch:
		return s, nil
	case <-ctx.Done():
		return "", context.Cause(ctx)
	}
}

// printLost is step 2's account of the two writes made between the
// informer's LIST, at resourceVersion rv, and its WATCH.
func printLost(out io.Writer, rv string, counter *appCounter, inCache, inFake bool) {
	fmt.Fprintf(out, "  the informer listed web-1 and api-1 at resourceVersion %s\n"+
		"  before its WATCH (in a watch reactor): create pod/web-2, delete pod/api-1; counts %s\n"+
		"    web-2 seen: the fake's watch from resourceVersion %s replays newer objects\n"+
		"    api-1 lost: the lister finds it: %t, the fake finds it: %t, for good\n",
		rv, counter, rv, inCache, inFake)
}

// fakeRequests renders the list and watch calls a fake recorded as the
// requests a clientset would send for them, in the form of the course's
// request log (show.Requests), so that the two read alike.
func fakeRequests(actions []clienttesting.Action) []string {
	var lines []string
	for _, a := range actions {
		var o metav1.ListOptions
		switch a := a.(type) {
		case clienttesting.ListActionImpl:
			o = a.ListOptions
		case clienttesting.WatchActionImpl:
			o = a.ListOptions
		default:
			continue
		}
		q := url.Values{}
		set := func(k, v string) {
			if v != "" && v != "0" && v != "false" {
				q.Set(k, v)
			}
		}
		set("watch", strconv.FormatBool(o.Watch))
		q.Set("resourceVersion", o.ResourceVersion) // "0" and "" matter here
		if o.ResourceVersion == "" {
			q.Del("resourceVersion")
		}
		set("resourceVersionMatch", string(o.ResourceVersionMatch))
		if o.SendInitialEvents != nil {
			q.Set("sendInitialEvents", strconv.FormatBool(*o.SendInitialEvents))
		}
		set("allowWatchBookmarks", strconv.FormatBool(o.AllowWatchBookmarks))
		set("limit", strconv.FormatInt(o.Limit, 10))
		p := "/api/v1/namespaces/" + a.GetNamespace() + "/" + a.GetResource().Resource
		lines = append(lines, apiserver.Request{Method: "GET", Path: p, Query: q}.String())
	}
	return lines
}

// printActions is step 1's last line: the calls the fake recorded, the
// informer's apart from the test's.
func printActions(out io.Writer, actions []clienttesting.Action) {
	informer, test := splitActions(actions)
	fmt.Fprintf(out, "  client.Actions(): the informer's %s; the test's %s\n", informer, test)
}

// printRefused is step 4's last two lines: the counts the informer
// reached, and the test's calls the fake recorded, the refused one too.
func printRefused(out io.Writer, counter *appCounter, actions []clienttesting.Action) {
	_, test := splitActions(actions)
	fmt.Fprintf(out, "  the informer saw the stored update only: counts %s\n"+
		"  client.Actions() has the refused call too: %s\n", counter, test)
}

// splitActions sorts a fake's recorded calls into the informer's (list
// and watch) and the test's, as "verb resource" lists. Each list is in
// call order; how the two interleave depends on timing.
func splitActions(actions []clienttesting.Action) (informer, test string) {
	var inf, other []string
	for _, a := range actions {
		call := a.GetVerb() + " " + a.GetResource().Resource
		if a.GetVerb() == "list" || a.GetVerb() == "watch" {
			inf = append(inf, call)
		} else {
			other = append(other, call)
		}
	}
	return strings.Join(inf, ", "), strings.Join(other, ", ")
}

// eventsUntil reads events from w up to and including the one that
// describes as last ("DELETED pod/x"; "" for the first event), and
// returns them described.
func eventsUntil(ctx context.Context, w watch.Interface, last string) ([]string, error) {
	var got []string
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				return got, fmt.Errorf("the watch ended after %q", got)
			}
			got = append(got, typeAndName(ev))
			if last == "" || got[len(got)-1] == last {
				return got, nil
			}
		case <-ctx.Done():
			return got, fmt.Errorf("waiting for %q after %q: %w", last, got, context.Cause(ctx))
		}
	}
}

// typeAndName is "ADDED pod/web-1": the short form the chapter's
// sentences list events in (a line of its own would be show.Event).
func typeAndName(ev watch.Event) string {
	return fmt.Sprintf("%s pod/%s", ev.Type, nameOf(ev.Object))
}

func nameOf(obj runtime.Object) string {
	if m, err := meta.Accessor(obj); err == nil {
		return m.GetName()
	}
	return fmt.Sprintf("%T", obj)
}

// masked is a generated name with its random suffix as "?": the same on
// every cluster.
func masked(name, prefix string) string {
	if name == "" {
		return ""
	}
	return prefix + strings.Repeat("?", len(name)-len(prefix))
}

// errOrOK is an error's message, or "ok".
func errOrOK(err error) string {
	if err != nil {
		return err.Error()
	}
	return "ok"
}

// underASecond says how a run time compares with a second, in words
// that are the same on every run. The exact times are in the test log
// (go test -run RunTimes -v ./08-testing).
func underASecond(d time.Duration) string {
	if d < time.Second {
		return "in under 1 s"
	}
	return "in over 1 s"
}

// watchedFrom is the resourceVersion of the first watch in actions.
func watchedFrom(actions []clienttesting.Action) string {
	for _, a := range actions {
		if w, ok := a.(clienttesting.WatchActionImpl); ok {
			return w.ListOptions.ResourceVersion
		}
	}
	return "(no watch)"
}

// stopwatch starts a stopwatch: each call of lap returns the time since
// the one before, or since the start.
func stopwatch() (lap func() time.Duration) {
	start := time.Now()
	return func() time.Duration {
		d := time.Since(start)
		start = time.Now()
		return d
	}
}

// printPassed is step 6's two lines: where testCounter passed, and how
// long it took on the fake and then on the cluster named second.
func printPassed(out io.Writer, second string, onFake, onSecond time.Duration) {
	fmt.Fprintf(out, "  testCounter on %-30s passed, %s\n", "fake.NewClientset():", underASecond(onFake))
	fmt.Fprintf(out, "  testCounter on %-30s passed, %s\n", second+":", underASecond(onSecond))
}

// testedOn names where step 6 ran the test the second time.
func testedOn(c *cluster.Cluster) string {
	if c.Embedded() {
		return "a workshop cluster it starts"
	}
	return "the real cluster"
}

// clusterName names the cluster the chapter runs on.
func clusterName(c *cluster.Cluster) string {
	if c.Embedded() {
		return "workshop cluster"
	}
	return "real cluster"
}

// printWhenToUseWhich is step 7: the README's table, in short. It is
// advice, not client-go, so it is here; run calls it as a step.
func printWhenToUseWhich(_ context.Context, out io.Writer, _ *cluster.Cluster) error {
	fmt.Fprintln(out, "\nStep 7. When to use which")
	show.Print(out, "  ", choices)
	return nil
}

// choices is step 7's table. The README's is the long form.
var choices = []string{
	"                  catches                                   starts in      needs installed",
	"fake clientset    your logic, on objects as you wrote them  microseconds   nothing",
	"workshop cluster  + the API's protocol: resourceVersions,   milliseconds   nothing (a Go package)",
	"                    selectors, watch-list, 409, defaults,",
	"                    server-side apply (built-in kinds)",
	"envtest           + a real kube-apiserver: validation,      seconds        kube-apiserver and etcd",
	"                    admission, CRDs and their schemas",
	"a real cluster    + controllers, scheduler, kubelets, GC    minutes        a cluster (kind)",
}

// eventTypes is events as eventsUntil describes them ("MODIFIED
// pod/x"), their types only: "MODIFIED, DELETED".
func eventTypes(got []string) string {
	types := make([]string, len(got))
	for i, ev := range got {
		types[i], _, _ = strings.Cut(ev, " ")
	}
	return strings.Join(types, ", ")
}

// replayed says what a watch delivered before the last of got, the
// event that ends what the watch has to say about the past.
func replayed(got []string) string {
	if len(got) <= 1 {
		return "no event: the delete is lost"
	}
	return eventTypes(got[:len(got)-1]) + ", replayed"
}
