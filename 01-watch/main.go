// Chapter 01-watch: the raw watch stream.
//
// Everything an informer does stands on two API calls: LIST, which
// returns the objects and the resourceVersion they were read at, and
// WATCH, which streams every change after a resourceVersion as ADDED,
// MODIFIED, DELETED, BOOKMARK or ERROR events. This chapter makes both
// calls by hand, with the typed client and with the ListWatch that
// informers use, and then looks at the bytes on the wire.
//
// Read alongside (client-go v0.37.2, apimachinery v0.37.2):
// apimachinery pkg/watch/watch.go (Interface, Event, EventType) and
// client-go tools/cache/listwatch.go (ListWatch).
package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	"github.com/informer-walkthrough/informer-walkthrough/internal/cluster"
	"github.com/informer-walkthrough/informer-walkthrough/internal/runner"
)

func main() { cluster.Main("01-watch", run) }

// run is the chapter. Each step prints a heading, then what it saw.
func run(ctx context.Context, out io.Writer, c *cluster.Cluster) error {
	// No step may wait forever: if an expected event never comes, fail
	// with a clear error instead of hanging.
	ctx, cancel := runner.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	pods := c.Client.CoreV1().Pods(c.Namespace)

	// Step 1. LIST. Two pods exist; the list returns them and the
	// resourceVersion the whole list was read at. That number is the
	// bookmark from which a watch can continue without missing anything.
	fmt.Fprintln(out, "Step 1. LIST pods: the items, and the list's resourceVersion")
	for _, name := range []string{"web-1", "web-2"} {
		if _, err := pods.Create(ctx, newPod(name), metav1.CreateOptions{}); err != nil {
			return err
		}
	}
	list, err := pods.List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	for _, p := range list.Items {
		fmt.Fprintf(out, "  %-9s %s\n", "item", describe(&p))
	}
	listRV := list.ResourceVersion
	fmt.Fprintf(out, "  list resourceVersion=%s\n", listRV)

	// Step 2. WATCH from the list's resourceVersion with the typed
	// client. The server sends every change after it, in order, each
	// stamped with a new resourceVersion. Note that deleting a pod gives
	// two events: MODIFIED (deletionTimestamp set), then DELETED.
	fmt.Fprintln(out, "\nStep 2. WATCH from resourceVersion", listRV, "(typed client)")
	w, err := pods.Watch(ctx, metav1.ListOptions{ResourceVersion: listRV})
	if err != nil {
		return err
	}
	if err := makeChanges(ctx, out, c); err != nil {
		w.Stop()
		return err
	}
	const changes = 5 // ADDED, MODIFIED x2, then MODIFIED+DELETED
	events, err := receive(ctx, w, changes)
	w.Stop()
	if err != nil {
		return err
	}
	for _, ev := range events {
		fmt.Fprintln(out, " ", describeEvent(ev))
	}

	// Step 3. The same, built the way informers build it: a ListWatch
	// over the REST client. Watching again from the same
	// resourceVersion replays the same changes: the server keeps a
	// history, and the resourceVersion says where in it to start.
	fmt.Fprintln(out, "\nStep 3. The same WATCH through cache.ListWatch (as informers do)")
	lw := cache.NewListWatchFromClient(
		c.Client.CoreV1().RESTClient(), "pods", c.Namespace,
		fields.Everything())
	w, err = lw.WatchWithContext(ctx,
		metav1.ListOptions{ResourceVersion: listRV})
	if err != nil {
		return err
	}
	events, err = receive(ctx, w, changes)
	w.Stop()
	if err != nil {
		return err
	}
	for _, ev := range events {
		fmt.Fprintln(out, " ", describeEvent(ev))
	}

	// Step 4. The wire. A watch is one long HTTP GET with ?watch=true;
	// the body is a stream of JSON objects, one per line, flushed as
	// each change happens. (client-go's typed clients ask for protobuf
	// by default; here we ask for JSON to read it.)
	fmt.Fprintln(out, "\nStep 4. The wire: GET ...?watch=true, one JSON frame per event")
	if err := rawWatch(ctx, out, c, listRV, changes); err != nil {
		return err
	}

	// Step 5. WATCH with no resourceVersion: "start at the most recent".
	// The server first sends a synthetic ADDED for every object that
	// exists now (it is a list in disguise), then the changes.
	fmt.Fprintln(out, "\nStep 5. WATCH with resourceVersion unset: synthetic ADDED for what exists")
	w, err = pods.Watch(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	events, err = receive(ctx, w, 2) // web-1 and web-3 exist
	w.Stop()
	if err != nil {
		return err
	}
	for _, ev := range events {
		fmt.Fprintln(out, " ", describeEvent(ev))
	}

	// Step 6. A watch-list: sendInitialEvents=true asks for the current
	// state as ADDED events and then a BOOKMARK, an event that carries
	// no object change, only a resourceVersion; its annotation marks
	// the end of the initial events. This is how v0.37 reflectors start.
	fmt.Fprintln(out, "\nStep 6. Watch-list: initial ADDED events, then a BOOKMARK")
	w, err = pods.Watch(ctx, metav1.ListOptions{
		SendInitialEvents:    ptr.To(true),
		ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan,
		AllowWatchBookmarks:  true,
	})
	if err != nil {
		return err
	}
	events, err = receive(ctx, w, 3) // 2 ADDED, 1 BOOKMARK
	w.Stop()
	if err != nil {
		return err
	}
	for _, ev := range events {
		fmt.Fprintln(out, " ", describeEvent(ev))
	}
	if bm := events[len(events)-1]; bm.Type == watch.Bookmark {
		m := bm.Object.(*corev1.Pod)
		fmt.Fprintf(out, "  bookmark annotations: %s=%q\n",
			metav1.InitialEventsAnnotationKey,
			m.Annotations[metav1.InitialEventsAnnotationKey])
	}

	// Step 7. A resourceVersion the server no longer has. History is
	// not kept forever (etcd compacts it; the API server's watch cache
	// holds a window). A watch from before that window gets an ERROR
	// event with a 410 Expired Status: the client must LIST again.
	// Doing that for you is the reflector's job (chapter 03).
	fmt.Fprintln(out, "\nStep 7. WATCH from a compacted resourceVersion: ERROR 410 Expired")
	if !c.Embedded() {
		fmt.Fprintln(out, "  skipped on a real cluster: kube-apiserver cannot be made to compact its history on demand")
		return nil
	}
	compactedTo := c.Server.CompactHistory()
	fmt.Fprintf(out, "  (the workshop cluster compacts its history to resourceVersion=%s)\n", compactedTo)
	w, err = pods.Watch(ctx, metav1.ListOptions{ResourceVersion: listRV})
	if err != nil {
		return err
	}
	events, err = receive(ctx, w, 1)
	w.Stop()
	if err != nil {
		return err
	}
	ev := events[0]
	fmt.Fprintln(out, " ", describeEvent(ev))
	if st, ok := ev.Object.(*metav1.Status); ok {
		err := apierrors.FromObject(st)
		fmt.Fprintf(out, "  apierrors.IsResourceExpired: %v, IsGone: %v\n",
			apierrors.IsResourceExpired(err), apierrors.IsGone(err))
	}
	return nil
}

// makeChanges creates, updates (labels, then status) and deletes pods, as
// a user and a kubelet would.
func makeChanges(ctx context.Context, out io.Writer, c *cluster.Cluster) error {
	pods := c.Client.CoreV1().Pods(c.Namespace)
	fmt.Fprintln(out, "  create web-3; label web-1 tier=front; set web-1 Running; delete web-2")
	if _, err := pods.Create(ctx, newPod("web-3"), metav1.CreateOptions{}); err != nil {
		return err
	}
	p, err := pods.Get(ctx, "web-1", metav1.GetOptions{})
	if err != nil {
		return err
	}
	p.Labels["tier"] = "front"
	if p, err = pods.Update(ctx, p, metav1.UpdateOptions{}); err != nil {
		return err
	}
	// Status is a subresource: a kubelet writes it with UpdateStatus.
	p.Status.Phase = corev1.PodRunning
	if _, err = pods.UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
		return err
	}
	return pods.Delete(ctx, "web-2", metav1.DeleteOptions{})
}

// receive reads n events from a watch, or fails if the stream ends or
// the context expires first.
func receive(ctx context.Context, w watch.Interface, n int) ([]watch.Event, error) {
	var events []watch.Event
	for len(events) < n {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				return nil, fmt.Errorf("watch closed after %d of %d events", len(events), n)
			}
			events = append(events, ev)
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for watch event %d of %d: %w", len(events)+1, n, ctx.Err())
		}
	}
	return events, nil
}

// rawWatch makes the watch request by hand and prints the start of each
// JSON frame: the event type and the object's kind, name and
// resourceVersion (the rest is the whole pod, elided).
func rawWatch(ctx context.Context, out io.Writer, c *cluster.Cluster, rv string, n int) error {
	// The REST client builds the URL; the HTTP client carries the
	// kubeconfig's credentials. The request itself is plain HTTP.
	url := c.Client.CoreV1().RESTClient().Get().
		Namespace(c.Namespace).Resource("pods").
		Param("watch", "true").Param("resourceVersion", rv).URL()
	httpClient, err := rest.HTTPClientFor(c.Config)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // ends the stream when we have read enough
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url.String(), nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := httpClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	fmt.Fprintf(out, "  GET %s?watch=true&resourceVersion=%s\n", url.Path, rv)
	fmt.Fprintf(out, "  %s, Content-Type: %s\n", resp.Status, resp.Header.Get("Content-Type"))
	lines := bufio.NewScanner(resp.Body)
	lines.Buffer(make([]byte, 0, 64*1024), 4<<20)
	for i := 0; i < n; i++ {
		if !lines.Scan() {
			return errors.Join(errors.New("watch stream ended early"), lines.Err())
		}
		fmt.Fprintln(out, " ", shorten(lines.Text()))
	}
	return nil
}

// shorten keeps a frame's beginning up to the object's resourceVersion,
// dropping the uid (which differs on every cluster).
func shorten(frame string) string {
	end := strings.Index(frame, `"resourceVersion":`)
	if end < 0 {
		return frame
	}
	end += strings.IndexByte(frame[end+len(`"resourceVersion":"`):], '"') +
		len(`"resourceVersion":"`) + 1
	s := frame[:end]
	if i := strings.Index(s, `"uid":"`); i >= 0 {
		j := strings.IndexByte(s[i+len(`"uid":"`):], '"') + i + len(`"uid":"`) + 1
		s = s[:i] + `"uid":…` + s[j:]
	}
	return s + ",…}…}"
}

// newPod is a pod that nothing else will touch: its scheduling gate keeps
// schedulers and kubelets away on a real cluster.
func newPod(name string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:   name,
			Labels: cluster.Labels("app", "web"),
		},
		Spec: corev1.PodSpec{
			SchedulingGates: []corev1.PodSchedulingGate{{Name: "walkthrough/hold"}},
			Containers:      []corev1.Container{{Name: "web", Image: "nginx:1.27"}},
		},
	}
}

// describeEvent prints one event: its type, then what it carries.
func describeEvent(ev watch.Event) string {
	switch obj := ev.Object.(type) {
	case *corev1.Pod:
		if ev.Type == watch.Bookmark {
			return fmt.Sprintf("%-9s rv=%s", ev.Type, obj.ResourceVersion)
		}
		return fmt.Sprintf("%-9s %s", ev.Type, describe(obj))
	case *metav1.Status:
		return fmt.Sprintf("%-9s %d %s: %s", ev.Type, obj.Code, obj.Reason, obj.Message)
	default:
		return fmt.Sprintf("%-9s %T", ev.Type, obj)
	}
}

// describe prints a pod as name, phase, resourceVersion, and whether its
// deletion has begun.
func describe(p *corev1.Pod) string {
	s := fmt.Sprintf("pod/%-6s %-8s rv=%s", p.Name, p.Status.Phase, p.ResourceVersion)
	if p.DeletionTimestamp != nil {
		s += "  (deletionTimestamp set)"
	}
	return s
}
