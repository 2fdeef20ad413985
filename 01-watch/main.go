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
// client-go tools/cache/listwatch.go (ListWatch). observe.go holds what
// only shows the events (reading n of them, and one line for each) and
// which requests step 7's client answers itself.
package main

import (
	"context"
	"fmt"
	"io"
	"net/http"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	"github.com/informer-walkthrough/informer-walkthrough/internal/cluster"
	"github.com/informer-walkthrough/informer-walkthrough/internal/fixture"
	"github.com/informer-walkthrough/informer-walkthrough/internal/show"
)

func main() { cluster.Main("01-watch", run) }

// run is the chapter: one step after another, each printing a heading,
// then what it saw. list is what the steps share: step 1 fills it with
// the LIST's metadata, and the steps after it watch from its
// resourceVersion.
func run(ctx context.Context, out io.Writer, c *cluster.Cluster) error {
	var list metav1.ListMeta
	for _, step := range []func(context.Context, io.Writer, *cluster.Cluster, *metav1.ListMeta) error{
		listPods, watchFromListRV, watchThroughListWatch, rawWatch,
		watchFromNow, watchList, watchExpired,
	} {
		if err := step(ctx, out, c, &list); err != nil {
			return err
		}
	}
	return nil
}

// listPods creates two pods and lists them. The list returns the items
// and the resourceVersion the whole list was read at: the bookmark from
// which a watch can continue without missing anything. listPods keeps
// the list's metadata in list, for the steps after it.
func listPods(ctx context.Context, out io.Writer, c *cluster.Cluster, list *metav1.ListMeta) error {
	fmt.Fprintln(out, "Step 1. LIST pods: the items, and the list's resourceVersion")
	pods := c.Client.CoreV1().Pods(c.Namespace)
	for _, name := range []string{"web-1", "web-2"} {
		pod := fixture.GatedPod(name, cluster.Labels("app", "web"))
		if _, err := pods.Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			return err
		}
	}
	podList, err := pods.List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	for _, p := range podList.Items {
		fmt.Fprintf(out, "  %-9s %s\n", "item", show.Pod(&p))
	}
	*list = podList.ListMeta
	fmt.Fprintf(out, "  list resourceVersion=%s\n", list.ResourceVersion)
	return nil
}

// watchFromListRV watches with the typed client from the list's
// resourceVersion, then makes changes. The server sends every change
// after that resourceVersion, in order, each stamped with a new one.
// Deleting a pod gives two events: MODIFIED (deletionTimestamp set),
// then DELETED.
func watchFromListRV(ctx context.Context, out io.Writer, c *cluster.Cluster, list *metav1.ListMeta) error {
	fmt.Fprintf(out, "\nStep 2. WATCH from resourceVersion %s (typed client)\n", list.ResourceVersion)
	pods := c.Client.CoreV1().Pods(c.Namespace)
	// !+typedWatch
	w, err := pods.Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion})
	if err != nil {
		return err
	}
	defer w.Stop()
	// !-typedWatch
	if err := makeChanges(ctx, out, c); err != nil {
		return err
	}
	return printEvents(ctx, out, w, changes)
}

// changes is the number of events makeChanges causes: ADDED, MODIFIED
// twice, then MODIFIED and DELETED.
const changes = 5

// makeChanges creates, updates (labels, then status) and deletes pods, as
// a user and a kubelet would.
func makeChanges(ctx context.Context, out io.Writer, c *cluster.Cluster) error {
	pods := c.Client.CoreV1().Pods(c.Namespace)
	fmt.Fprintln(out, "  create web-3; label web-1 tier=front; set web-1 Running; delete web-2")
	pod := fixture.GatedPod("web-3", cluster.Labels("app", "web"))
	if _, err := pods.Create(ctx, pod, metav1.CreateOptions{}); err != nil {
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
	// Status is a subresource. UpdateStatus PUTs the whole pod to it; a
	// kubelet PATCHes it instead, with a strategic merge patch (03).
	p.Status.Phase = corev1.PodRunning
	if _, err = pods.UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
		return err
	}
	return pods.Delete(ctx, "web-2", metav1.DeleteOptions{})
}

// watchThroughListWatch makes step 2's watch the way informers make it:
// through a ListWatch over the REST client. Watching again from the same
// resourceVersion replays the same changes: the server keeps a history,
// and the resourceVersion says where in it to start.
func watchThroughListWatch(ctx context.Context, out io.Writer, c *cluster.Cluster, list *metav1.ListMeta) error {
	fmt.Fprintln(out, "\nStep 3. The same WATCH through cache.ListWatch (as informers do)")
	// !+listWatch
	lw := cache.NewListWatchFromClient(
		c.Client.CoreV1().RESTClient(), "pods", c.Namespace,
		fields.Everything())
	w, err := lw.WatchWithContext(ctx,
		metav1.ListOptions{ResourceVersion: list.ResourceVersion})
	// !-listWatch
	if err != nil {
		return err
	}
	defer w.Stop()
	return printEvents(ctx, out, w, changes)
}

// rawWatch makes the watch request by hand. A watch is one long HTTP GET
// with ?watch=true; the body is a stream of JSON objects, one per line,
// flushed as each change happens. (client-go's typed clients ask for
// protobuf by default; here we ask for JSON to read it.) Each frame is
// printed up to the object's resourceVersion: the rest is the whole pod.
func rawWatch(ctx context.Context, out io.Writer, c *cluster.Cluster, list *metav1.ListMeta) error {
	fmt.Fprintln(out, "\nStep 4. The wire: GET ...?watch=true, one JSON frame per event")
	// The REST client builds the URL; the HTTP client carries the
	// kubeconfig's credentials. The request itself is plain HTTP.
	// !+rawWatch
	watchURL := c.Client.CoreV1().RESTClient().Get().
		Namespace(c.Namespace).Resource("pods").
		Param("watch", "true").Param("resourceVersion", list.ResourceVersion).URL()
	httpClient, err := rest.HTTPClientFor(c.Config)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, watchURL.String(), nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := httpClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close() // ends the stream when we have read enough
	// !-rawWatch
	return printResponse(out, resp, changes)
}

// watchFromNow watches with no resourceVersion: "start at the most
// recent". The server first sends a synthetic ADDED for every object
// that exists now (a list in disguise), then the changes.
func watchFromNow(ctx context.Context, out io.Writer, c *cluster.Cluster, _ *metav1.ListMeta) error {
	fmt.Fprintln(out, "\nStep 5. WATCH with resourceVersion unset: synthetic ADDED for what exists")
	pods := c.Client.CoreV1().Pods(c.Namespace)
	w, err := pods.Watch(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	defer w.Stop()
	return printEvents(ctx, out, w, 2) // web-1 and web-3 exist
}

// watchList asks for a watch-list: sendInitialEvents=true asks for the
// current state as ADDED events and then a BOOKMARK, an event that
// carries no object change, only a resourceVersion; its annotation marks
// the end of the initial events. This is how v0.37 reflectors start.
func watchList(ctx context.Context, out io.Writer, c *cluster.Cluster, _ *metav1.ListMeta) error {
	fmt.Fprintln(out, "\nStep 6. Watch-list: initial ADDED events, then a BOOKMARK")
	pods := c.Client.CoreV1().Pods(c.Namespace)
	// !+watchList
	w, err := pods.Watch(ctx, metav1.ListOptions{
		SendInitialEvents:    ptr.To(true),
		ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan,
		AllowWatchBookmarks:  true,
	})
	// !-watchList
	if err != nil {
		return err
	}
	defer w.Stop()
	bm, err := printLast(ctx, out, w, 3) // 2 ADDED, then the BOOKMARK
	if err != nil {
		return err
	}
	// !+bookmark
	if pod, ok := bm.Object.(*corev1.Pod); ok && bm.Type == watch.Bookmark {
		fmt.Fprintf(out, "  bookmark annotations: %s=%q\n",
			metav1.InitialEventsAnnotationKey,
			pod.Annotations[metav1.InitialEventsAnnotationKey])
	}
	// !-bookmark
	return nil
}

// watchExpired watches from a resourceVersion the server no longer has.
// History is not kept forever (etcd compacts it; the API server's watch
// cache holds a window). A watch from before that window gets an ERROR
// event with a 410 Expired Status: the client must LIST again. Doing
// that for you is the reflector's job (chapter 03). No client can move
// a server's window on demand, so this step's client answers the watch
// itself, with what kube-apiserver sends (c.Faults, the course's client
// transport): the same on the workshop cluster and on a real one.
func watchExpired(ctx context.Context, out io.Writer, c *cluster.Cluster, list *metav1.ListMeta) error {
	fmt.Fprintln(out, "\nStep 7. WATCH from before the server's window: ERROR 410 Expired")
	now, err := c.Client.CoreV1().Pods(c.Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	// The client's transport answers the next watch as kube-apiserver
	// does once its history starts after now: 200, then one ERROR event.
	c.Faults().AnswerWatch(isWatch, apierrors.NewResourceExpired(fmt.Sprintf(
		"too old resource version: %s (%s)", list.ResourceVersion, now.ResourceVersion)))
	fmt.Fprintf(out, "  (this client answers the watch itself, as kube-apiserver does once its history starts after rv=%s)\n", now.ResourceVersion)
	pods := c.Client.CoreV1().Pods(c.Namespace)
	w, err := pods.Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion})
	if err != nil {
		return err
	}
	defer w.Stop()
	ev, err := printLast(ctx, out, w, 1)
	if err != nil {
		return err
	}
	// !+expired
	if st, ok := ev.Object.(*metav1.Status); ok {
		err := apierrors.FromObject(st)
		fmt.Fprintf(out, "  apierrors.IsResourceExpired: %v, IsGone: %v\n",
			apierrors.IsResourceExpired(err), apierrors.IsGone(err))
	}
	// !-expired
	return nil
}
