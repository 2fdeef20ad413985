// Chapter 08-testing: testing code that uses informers.
//
// Tests of informer-based code mostly run on the fake clientset of
// k8s.io/client-go/kubernetes/fake. The chapter writes the canonical
// test of a small event handler (counter.go) on it, reproduces the
// fake's traps at v0.37.2, each beside what an API server does, and
// runs the same test against the workshop cluster, a real API server
// that a test starts in its own process. It ends with when to use which.
//
// Read alongside (client-go v0.37.2): kubernetes/fake/clientset_generated.go,
// testing/fixture.go, testing/fake.go, tools/cache/listwatch.go and
// tools/cache/reflector.go.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	listersv1 "k8s.io/client-go/listers/core/v1"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/retry"

	"github.com/informer-walkthrough/informer-walkthrough/internal/cluster"
	"github.com/informer-walkthrough/informer-walkthrough/internal/show"
	"github.com/informer-walkthrough/informer-walkthrough/internal/tap"
	"github.com/informer-walkthrough/informer-walkthrough/workshop"
)

func main() { cluster.Main("08-testing", run) }

// run is the chapter: its steps, in the order they run. Steps 1, 2 and
// 4 use fake clientsets only, in memory; steps 3, 5 and 6 also use the
// cluster c. Step 7 is a table, not code: it is in observe.go.
func run(ctx context.Context, out io.Writer, c *cluster.Cluster) error {
	for _, step := range []func(context.Context, io.Writer, *cluster.Cluster) error{
		canonicalTest, writeBetweenListAndWatch, watchListOptOut, conflictFromReactor,
		whatTheFakeDoesNotDo, sameTestOnWorkshopCluster, printWhenToUseWhich,
	} {
		if err := step(ctx, out, c); err != nil {
			return err
		}
	}
	return nil
}

// canonicalTest is step 1: the test of appCounter as most code bases
// would write it, on the fake clientset.
func canonicalTest(ctx context.Context, out io.Writer, c *cluster.Cluster) error {
	fmt.Fprintln(out, "Step 1. The canonical test: fake clientset, factory, Start, WaitForCacheSync")
	// !+fake
	// The fake holds the objects it is given, in memory. NewClientset,
	// unlike NewSimpleClientset, also tracks managedFields (server-side
	// apply works) and stamps kind and apiVersion on what Create stores.
	client := fake.NewClientset(seedPods(c.Namespace)...)
	// !-fake
	if err := testCounter(ctx, out, client, c.Namespace); err != nil {
		return err
	}
	// The fake records every call. Tests check the calls they made, as
	// sample-controller's do, apart from the informer's list and watch:
	// how the two interleave depends on timing.
	printActions(out, client.Actions())
	return nil
}

// !+testCounter
// testCounter tests appCounter on any clientset that holds the seed
// pods: a fake in step 1, the workshop cluster in step 6.
func testCounter(ctx context.Context, out io.Writer, client kubernetes.Interface, ns string) error {
	ctx, cancel := context.WithCancel(ctx)
	factory := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithNamespace(ns))
	defer factory.Shutdown() // after cancel: defers run last-in first-out
	defer cancel()
	counter := newAppCounter()
	reg, err := factory.Core().V1().Pods().Informer().AddEventHandler(counter)
	if err != nil {
		return err
	}
	factory.Start(ctx.Done())
	// WaitForCacheSync: the cache holds the first list. The handler has
	// been given all of it once its registration has synced too.
	if err := factory.WaitForCacheSyncWithContext(ctx).AsError(); err != nil {
		return err
	}
	if !cache.WaitFor(ctx, "", reg.HasSyncedChecker()) {
		return context.Cause(ctx)
	}
	fmt.Fprintf(out, "  synced, counts %s\n", counter)
	pods := client.CoreV1().Pods(ns)
	if _, err := pods.Create(ctx, newPod(ns, "web-2", "web"), metav1.CreateOptions{}); err != nil {
		return err
	}
	if err := counter.await(ctx, "api=1 web=2"); err != nil {
		return err
	}
	fmt.Fprintf(out, "  create pod/web-2, await counts %s\n", counter)
	if err := pods.Delete(ctx, "api-1", metav1.DeleteOptions{}); err != nil {
		return err
	}
	if err := counter.await(ctx, "web=2"); err != nil {
		return err
	}
	fmt.Fprintf(out, "  delete pod/api-1, await counts %s\n", counter)
	return nil
}

// !-testCounter

// writeBetweenListAndWatch is step 2. Over the fake, a reflector LISTs,
// then WATCHes; a test that writes in between used to lose the write.
func writeBetweenListAndWatch(ctx context.Context, out io.Writer, c *cluster.Cluster) error {
	fmt.Fprintln(out, "\nStep 2. A write between the informer's LIST and its WATCH: seen or lost?")
	client := fake.NewClientset(seedPods(c.Namespace)...)
	var werr error // set by the reactor, read after the events it causes
	// !+window
	// A watch reactor runs as the informer, having listed, opens its
	// watch: the moment to write in. Reactors run under the fake's lock,
	// so they write to its tracker (the clientset would deadlock), and
	// return false to leave the watch to the tracker.
	client.PrependWatchReactor("pods", func(clienttesting.Action) (bool, watch.Interface, error) {
		errCreate := client.Tracker().Create(podsResource, newPod(c.Namespace, "web-2", "web"), c.Namespace)
		werr = errors.Join(errCreate, client.Tracker().Delete(podsResource, c.Namespace, "api-1"))
		return false, nil, nil
	})
	// !-window
	counter, lister, stop, err := startCounter(ctx, client, c.Namespace)
	if err != nil {
		return err
	}
	defer stop()
	// web-2 comes on the watch; api-1's delete never comes.
	if err := counter.await(ctx, "api=1 web=2"); err != nil {
		return errors.Join(err, werr)
	}
	_, errCache := lister.Pods(c.Namespace).Get("api-1")
	_, errFake := client.CoreV1().Pods(c.Namespace).Get(ctx, "api-1", metav1.GetOptions{})
	printLost(out, watchedFrom(client.Actions()), counter, errCache == nil, errFake == nil)

	// !+fix
	// The fix: know that the watch is open before a delete. This reactor
	// says so as the watch opens; a delete sent then waits for the fake's
	// lock, which the opening watch holds until the tracker has it.
	client = fake.NewClientset(seedPods(c.Namespace)...)
	opened := make(chan string, 1)
	client.PrependWatchReactor("pods", func(clienttesting.Action) (bool, watch.Interface, error) {
		opened <- "open"
		return false, nil, nil
	})
	counter, _, stop, err = startCounter(ctx, client, c.Namespace)
	if err != nil {
		return err
	}
	defer stop()
	if _, err := receive(ctx, opened); err != nil {
		return err
	}
	if err := client.CoreV1().Pods(c.Namespace).Delete(ctx, "api-1", metav1.DeleteOptions{}); err != nil {
		return err
	}
	if err := counter.await(ctx, "web=1"); err != nil {
		return err
	}
	// !-fix
	fmt.Fprintf(out, "  the fix: await a watch reactor's signal, then delete pod/api-1: counts %s\n", counter)
	return nil
}

// watchListOptOut is step 3: the requests of one informer on the fake
// and on the cluster, and of a hand-built ListWatch on the fake.
func watchListOptOut(ctx context.Context, out io.Writer, c *cluster.Cluster) error {
	fmt.Fprintln(out, "\nStep 3. The fake opts out of watch-list: what the informer asks for")
	client := fake.NewClientset(seedPods(c.Namespace)...)
	ctx, cancel := context.WithCancel(ctx)
	// Synced means listed; the watch comes after. watching says when an
	// informer opens its watch (a watch reactor, in observe.go).
	watching := watchesOpened(ctx, client)
	onFake := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithNamespace(c.Namespace))
	onCluster := informers.NewSharedInformerFactoryWithOptions(c.Client, 0, informers.WithNamespace(c.Namespace))
	var wg sync.WaitGroup
	defer wg.Wait()
	defer onCluster.Shutdown()
	defer onFake.Shutdown()
	defer cancel()
	c.ResetRequests()
	for _, f := range []informers.SharedInformerFactory{onFake, onCluster} {
		f.Core().V1().Pods().Informer()
		f.Start(ctx.Done())
		if err := f.WaitForCacheSyncWithContext(ctx).AsError(); err != nil {
			return err
		}
	}
	if _, err := watching.Await(ctx, 1); err != nil {
		return err
	}
	show.Under(out, "  a factory's pod informer on fake.NewClientset():", show.Requests(fakeRequests(client.Actions()), nil))
	show.Under(out, "  the same informer on the "+clusterName(c)+":", show.Requests(c.Requests(), show.ListsAndWatches))

	// !+listwatch
	// A ListWatch written by hand, as many tests do. The reflector asks
	// it, not the fake, whether watch-list is supported; it does not say
	// no, so the reflector opens a watch-list, whose end the fake never
	// marks with a bookmark.
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return client.CoreV1().Pods(c.Namespace).List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			return client.CoreV1().Pods(c.Namespace).Watch(ctx, o)
		},
	}
	// !-listwatch
	client.ClearActions()
	// The informer reads lw through the course's tap, which records
	// each event its watch streams to the reflector (Streams: tap.Watch).
	rec := tap.NewRecorder(ctx)
	tapped := tap.NewListerWatcher(lw, rec)
	tapped.Streams = true
	stuck := cache.NewSharedIndexInformer(tapped, &corev1.Pod{}, 0, cache.Indexers{})
	wg.Go(func() { stuck.RunWithContext(ctx) })
	got, err := takenEvents(rec).Await(ctx, 2) // the fake has two pods
	if err != nil {
		return err
	}
	show.Under(out, "  a hand-built cache.ListWatch on the fake:", show.Requests(fakeRequests(client.Actions()), nil))
	fmt.Fprintf(out, "    the reflector took %s, and waits for a bookmark: HasSynced=%t, for ever\n", strings.Join(got, ", "), stuck.HasSynced())

	client.ClearActions()
	// !+semantics
	fixed := cache.NewSharedIndexInformer(cache.ToListWatcherWithWatchListSemantics(lw, client),
		&corev1.Pod{}, 0, cache.Indexers{})
	// !-semantics
	wg.Go(func() { fixed.RunWithContext(ctx) })
	if !cache.WaitFor(ctx, "", fixed.HasSyncedChecker()) {
		return context.Cause(ctx)
	}
	// The stuck informer's watch, then this one's.
	if _, err := watching.Await(ctx, 2); err != nil {
		return err
	}
	show.Under(out, "  the same, through cache.ToListWatcherWithWatchListSemantics(lw, client):",
		show.Requests(fakeRequests(client.Actions()), nil))
	fmt.Fprintf(out, "    HasSynced=%t\n", fixed.HasSynced())
	return nil
}

// conflictFromReactor is step 4: a reactor fails an update, as a test
// of retry logic needs; what reaches the tracker and the informer.
func conflictFromReactor(ctx context.Context, out io.Writer, c *cluster.Cluster) error {
	fmt.Fprintln(out, "\nStep 4. A reactor answers an update with 409 Conflict")
	client := fake.NewClientset(seedPods(c.Namespace)...)
	// !+reactor
	// PrependReactor puts a reaction before the tracker's. Answering
	// (true, …) ends the chain: the tracker never sees the update.
	refuse := 1
	client.PrependReactor("update", "pods", func(a clienttesting.Action) (bool, runtime.Object, error) {
		if refuse == 0 {
			return false, nil, nil // on to the tracker
		}
		refuse--
		name := a.(clienttesting.UpdateAction).GetObject().(*corev1.Pod).Name
		gr := a.GetResource().GroupResource()
		return true, nil, apierrors.NewConflict(gr, name, errors.New("injected by a reactor"))
	})
	// !-reactor
	fmt.Fprintln(out, `  PrependReactor("update", "pods", …): the first update answers 409`)
	counter, _, stop, err := startCounter(ctx, client, c.Namespace)
	if err != nil {
		return err
	}
	defer stop()
	if err := counter.await(ctx, "api=1 web=1"); err != nil {
		return err
	}
	// !+retry
	pods := client.CoreV1().Pods(c.Namespace)
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		p, err := pods.Get(ctx, "web-1", metav1.GetOptions{})
		if err != nil {
			return err
		}
		p.Labels["app"] = "api"
		_, err = pods.Update(ctx, p, metav1.UpdateOptions{})
		stored, getErr := client.Tracker().Get(podsResource, c.Namespace, "web-1")
		if getErr != nil {
			return getErr // not a conflict: RetryOnConflict returns it
		}
		fmt.Fprintf(out, "  update pod/web-1 app=api: %s; the fake stores app=%s\n", errOrOK(err), appOf(stored))
		return err
	})
	// !-retry
	if err != nil {
		return err
	}
	if err := counter.await(ctx, "api=2"); err != nil {
		return err
	}
	printRefused(out, counter, client.Actions())
	return nil
}

// whatTheFakeDoesNotDo is step 5: each probe (the table in probes.go;
// the probes that write are below) does one thing to pods and says what
// came back, once on a new fake, once on the cluster.
func whatTheFakeDoesNotDo(ctx context.Context, out io.Writer, c *cluster.Cluster) error {
	fmt.Fprintln(out, "\nStep 5. What the fake does not do that an API server does")
	for _, p := range probes {
		onFake, errFake := p.run(ctx, fake.NewClientset().CoreV1().Pods(c.Namespace))
		onCluster, err := p.run(ctx, c.Client.CoreV1().Pods(c.Namespace))
		if err := errors.Join(errFake, err); err != nil {
			return fmt.Errorf("%s: %w", p.what, err)
		}
		fmt.Fprintf(out, "  %-21s fake: %-33s | %s: %s\n", p.what, onFake, clusterName(c), onCluster)
	}
	return nil
}

// !+probes
// createPod shows what the server fills in: the name, defaults; and
// what it leaves out of what Create returns: kind.
func createPod(ctx context.Context, pods corev1client.PodInterface) (string, error) {
	p := probePod("")
	p.GenerateName = "gen-"
	p, err := pods.Create(ctx, p, metav1.CreateOptions{})
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("name=%q restart=%q kind=%q",
		masked(p.Name, "gen-"), p.Spec.RestartPolicy, p.Kind), nil
}

// updateImage changes a pod's spec, which bumps metadata.generation.
func updateImage(ctx context.Context, pods corev1client.PodInterface) (string, error) {
	p, err := pods.Create(ctx, probePod("image"), metav1.CreateOptions{})
	if err != nil {
		return "", err
	}
	before := fmt.Sprintf("rv=%q gen=%d", p.ResourceVersion, p.Generation)
	p.Spec.Containers[0].Image = "nginx:1.28"
	p, err = pods.Update(ctx, p, metav1.UpdateOptions{})
	return fmt.Sprintf("%s → rv=%q gen=%d", before, p.ResourceVersion, p.Generation), err
}

// staleUpdate: two writers read a pod, then both write it.
func staleUpdate(ctx context.Context, pods corev1client.PodInterface) (string, error) {
	p, err := pods.Create(ctx, probePod("stale"), metav1.CreateOptions{})
	if err != nil {
		return "", err
	}
	first, second := p.DeepCopy(), p.DeepCopy()
	first.Labels["writer"] = "first"
	if _, err := pods.Update(ctx, first, metav1.UpdateOptions{}); err != nil {
		return "", err
	}
	second.Labels["writer"] = "second"
	if _, err = pods.Update(ctx, second, metav1.UpdateOptions{}); apierrors.IsConflict(err) {
		return "the second gets 409 Conflict", nil
	}
	return "both accepted, first one lost", err
}

// !-probes

// sameTestOnWorkshopCluster is step 6: testCounter again, on the fake
// and on a workshop cluster that the test starts (on a real cluster: on
// it), each timed.
func sameTestOnWorkshopCluster(ctx context.Context, out io.Writer, c *cluster.Cluster) error {
	fmt.Fprintln(out, "\nStep 6. The same test against a real API server")
	lap := stopwatch()
	if err := testCounter(ctx, io.Discard, fake.NewClientset(seedPods(c.Namespace)...), c.Namespace); err != nil {
		return err
	}
	onFake := lap()
	client, ns := c.Client, c.Namespace
	// !+workshop
	if c.Embedded() {
		wc, err := workshop.New() // in a test: wc := workshop.Start(t)
		if err != nil {
			return err
		}
		defer wc.Close()
		client, ns = wc.Client(), metav1.NamespaceDefault
	}
	for _, p := range seedPods(ns) {
		if _, err := client.CoreV1().Pods(ns).Create(ctx, p.(*corev1.Pod), metav1.CreateOptions{}); err != nil {
			return err
		}
	}
	if err := testCounter(ctx, io.Discard, client, ns); err != nil {
		return err
	}
	// !-workshop
	printPassed(out, testedOn(c), onFake, lap())
	return nil
}

// startCounter is step 1's informer and counter, started, for the
// steps after it. stop cancels the informer and waits for it to end.
func startCounter(ctx context.Context, client kubernetes.Interface, ns string) (*appCounter, listersv1.PodLister, func(), error) {
	factory := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithNamespace(ns))
	counter := newAppCounter()
	pods := factory.Core().V1().Pods()
	if _, err := pods.Informer().AddEventHandler(counter); err != nil {
		return nil, nil, nil, err // nothing started yet: nothing to stop
	}
	ctx, cancel := context.WithCancel(ctx)
	factory.Start(ctx.Done())
	stop := func() { cancel(); factory.Shutdown() }
	return counter, pods.Lister(), stop, nil
}
