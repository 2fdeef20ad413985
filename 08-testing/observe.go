package main

// What the chapter needs only to show what happens: a watch reactor
// that says when a watch opens, the fake's recorded actions as
// requests, watch events read, a stopwatch, the formatting of the steps' lines, and step 7, a table of
// advice with no client-go in it.

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"

	"github.com/informer-walkthrough/informer-walkthrough/internal/apiserver"
	"github.com/informer-walkthrough/informer-walkthrough/internal/cluster"
	"github.com/informer-walkthrough/informer-walkthrough/internal/show"
	"github.com/informer-walkthrough/informer-walkthrough/internal/tap"
	"github.com/informer-walkthrough/informer-walkthrough/internal/trace"
)

// watchesOpened reports, on the feed it returns, each watch of pods
// that client opens, as it opens: the fake's own record of the call,
// from a watch reactor (a fake's calls never reach a transport to tap).
// The reactor returns false: the tracker still serves the watch.
func watchesOpened(ctx context.Context, client *fake.Clientset) *show.Feed[clienttesting.Action] {
	opened := show.NewFeed[clienttesting.Action](ctx)
	client.PrependWatchReactor("pods", func(a clienttesting.Action) (bool, watch.Interface, error) {
		traceWatch(a)
		opened.Send(a)
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

// fakeRequests is the list and watch calls a fake recorded as the
// requests a clientset would send for them, for the course's request
// printer (show.Requests), so that the fake's and a server's read alike.
func fakeRequests(actions []clienttesting.Action) []apiserver.Request {
	var reqs []apiserver.Request
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
		reqs = append(reqs, apiserver.Request{Verb: a.GetVerb(), Resource: a.GetResource().Resource,
			Method: "GET", Path: p, Query: q})
	}
	return reqs
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

// eventsUntil reads events from w up to and including the first that
// last accepts, and returns them.
func eventsUntil(ctx context.Context, w watch.Interface, last func(watch.Event) bool) ([]watch.Event, error) {
	var got []watch.Event
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				return got, fmt.Errorf("the watch ended after %q", got)
			}
			got = append(got, ev)
			if last(ev) {
				return got, nil
			}
		case <-ctx.Done():
			return got, fmt.Errorf("waiting for the last event after %q: %w", got, context.Cause(ctx))
		}
	}
}

// first accepts the first event.
func first(watch.Event) bool { return true }

// is accepts an event of type t about pod name.
func is(t watch.EventType, name string) func(watch.Event) bool {
	return func(ev watch.Event) bool {
		p, ok := ev.Object.(*corev1.Pod)
		return ev.Type == t && ok && p.Name == name
	}
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

// short is an event in short, as a sentence lists events:
// "ADDED pod/web-1".
func short(ev watch.Event) string {
	if m, err := meta.Accessor(ev.Object); err == nil {
		if _, ok := ev.Object.(*corev1.Pod); ok {
			return fmt.Sprintf("%s pod/%s", ev.Type, m.GetName())
		}
	}
	return fmt.Sprintf("%s %T", ev.Type, ev.Object)
}

// takenEvents is the events the stuck informer's reflector took from
// its watch, as its tapped ListerWatcher (Streams) records them, each
// in short.
func takenEvents(rec *tap.Recorder) show.Source {
	return rec.Render(func(e tap.Event) (string, bool) {
		ev, ok := e.(tap.WatchEvent)
		return short(ev.Event), ok
	})
}

// firstOf is the first of got in short: "first: MODIFIED pod/label-yes".
func firstOf(got []watch.Event) string {
	if len(got) == 0 {
		return "no event"
	}
	return "first: " + short(got[0])
}

// eventTypes is events' types only: "MODIFIED, DELETED".
func eventTypes(got []watch.Event) string {
	types := make([]string, len(got))
	for i, ev := range got {
		types[i] = string(ev.Type)
	}
	return strings.Join(types, ", ")
}

// replayed says what a watch delivered before the last of got, the
// event that ends what the watch has to say about the past.
func replayed(got []watch.Event) string {
	if len(got) <= 1 {
		return "no event: the delete is lost"
	}
	return eventTypes(got[:len(got)-1]) + ", replayed"
}
