package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"

	"github.com/informer-walkthrough/informer-walkthrough/check/chaptertest"
	"github.com/informer-walkthrough/informer-walkthrough/check/leakcheck"
	"github.com/informer-walkthrough/informer-walkthrough/workshop"
)

// TestGolden runs the chapter as main does, on a fresh workshop cluster,
// and compares every line it prints with testdata/08-testing.golden.
func TestGolden(t *testing.T) { chaptertest.Golden(t, "08-testing", run) }

// TestREADME keeps the README's output blocks equal to the golden file
// and its code blocks equal to the chapter's code.
func TestREADME(t *testing.T) { chaptertest.README(t, "08-testing") }

// The two tests below are the chapter's lesson in the form to copy: one
// test body, written against kubernetes.Interface, run on the fake and
// on a workshop cluster that the test starts.

// !+copyme
// TestAppCounter runs the counter's test on the fake clientset.
func TestAppCounter(t *testing.T) {
	client := fake.NewClientset(seedPods("default")...)
	checkAppCounter(t, client, "default")
}

// TestAppCounterOnWorkshopCluster runs the same test on a workshop
// cluster of its own, which the test stops when it ends.
func TestAppCounterOnWorkshopCluster(t *testing.T) {
	c := workshop.Start(t)
	for _, p := range seedPods("default") {
		_, err := c.Client().CoreV1().Pods("default").Create(t.Context(), p.(*corev1.Pod), metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
	}
	checkAppCounter(t, c.Client(), "default")
}

// checkAppCounter is the test: an informer with the counter, synced,
// then one change at a time, each awaited through the counter itself.
func checkAppCounter(t *testing.T, client kubernetes.Interface, ns string) {
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	factory := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithNamespace(ns))
	t.Cleanup(factory.Shutdown) // cleanups run last-in first-out:
	t.Cleanup(cancel)           // cancel, then wait for the informers
	counter := newAppCounter()
	reg, err := factory.Core().V1().Pods().Informer().AddEventHandler(counter)
	if err != nil {
		t.Fatal(err)
	}
	factory.Start(ctx.Done())
	if err := factory.WaitForCacheSyncWithContext(ctx).AsError(); err != nil {
		t.Fatal(err)
	}
	if !cache.WaitFor(ctx, "", reg.HasSyncedChecker()) {
		t.Fatal("the handler did not get the initial list")
	}
	if got := counter.String(); got != "api=1 web=1" {
		t.Fatalf("after the initial list: %q, want %q", got, "api=1 web=1")
	}
	pods := client.CoreV1().Pods(ns)
	if _, err := pods.Create(ctx, newPod(ns, "web-2", "web"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := counter.await(ctx, "api=1 web=2"); err != nil {
		t.Fatal(err)
	}
	// web-2 came on the watch, so the watch is open: a delete now
	// cannot fall between the informer's LIST and WATCH (step 2).
	if err := pods.Delete(ctx, "api-1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := counter.await(ctx, "web=2"); err != nil {
		t.Fatal(err)
	}
}

// !-copyme

// TestNoLeaks runs both tests again under the leak check: an informer
// that outlives its test shows up here.
func TestNoLeaks(t *testing.T) {
	leakcheck.Verify(t)
	t.Run("fake", TestAppCounter)
	t.Run("workshop", TestAppCounterOnWorkshopCluster)
}

// TestCounterTombstone: a delete the informer learnt of only from a
// relist comes as a DeletedFinalStateUnknown; the counter still counts
// the pod out.
func TestCounterTombstone(t *testing.T) {
	counter := newAppCounter()
	pod := newPod("ns", "web-1", "web")
	counter.OnAdd(pod, true)
	counter.OnDelete(cache.DeletedFinalStateUnknown{Key: "ns/web-1", Obj: pod})
	if got := counter.String(); got != "" {
		t.Errorf("after a tombstone: %q, want no pods", got)
	}
}

// TestTrackerWatchReplaysNewerObjects pins step 2 at the level of the
// fake's tracker: a watch from a list's resourceVersion gets what was
// created or updated since as ADDED, and nothing of what was deleted.
func TestTrackerWatchReplaysNewerObjects(t *testing.T) {
	ctx := t.Context()
	client := fake.NewClientset(seedPods("ns")...)
	pods := client.CoreV1().Pods("ns")
	list, err := pods.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if list.ResourceVersion != "3" {
		t.Errorf("list resourceVersion %q, want 3 (1, then one per object)", list.ResourceVersion)
	}
	if err := pods.Delete(ctx, "api-1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := pods.Create(ctx, newPod("ns", "web-2", "web"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	w, err := pods.Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	var got []string
	for len(w.ResultChan()) > 0 { // the fake queues its replay before Watch returns
		got = append(got, short(<-w.ResultChan()))
	}
	if want := "ADDED pod/web-2"; strings.Join(got, ", ") != want {
		t.Errorf("replayed %q, want %q", got, want)
	}
}

// TestRealClusterPath runs the chapter as it runs on a real cluster (no
// embedded server: step 6 then tests on c itself) and checks that it
// prints what the golden file says, apart from resourceVersions and the
// name of the cluster.
func TestRealClusterPath(t *testing.T) {
	c := chaptertest.Start(t)
	srv := c.Server
	c.Server = nil                       // what a real cluster looks like to run
	t.Cleanup(func() { c.Server = srv }) // so that Close stops it
	var out bytes.Buffer
	if err := run(t.Context(), &out, c); err != nil {
		t.Fatalf("%v\n%s", err, out.Bytes())
	}
	want, err := os.ReadFile("testdata/08-testing.golden")
	if err != nil {
		t.Fatal(err)
	}
	if g, w := normalize(out.String()), normalize(string(want)); g != w {
		t.Errorf("differs beyond resourceVersions:\n got:\n%s\nwant:\n%s", g, w)
	}
}

var (
	rvNumber = regexp.MustCompile(`rv="\d+"`)
	// What names the cluster: "| workshop cluster:", "on the workshop
	// cluster:", "testCounter on a workshop cluster it starts:".
	clusterNames = regexp.MustCompile(`(\| |the )(workshop|real) cluster:|testCounter on (a workshop cluster it starts|the real cluster): +`)
)

// normalize masks what may differ between the workshop cluster and a
// real one: resourceVersions and the cluster's name.
func normalize(s string) string {
	return clusterNames.ReplaceAllString(rvNumber.ReplaceAllString(s, `rv="N"`), "CLUSTER:")
}

// TestRunTimes logs what step 6 only compares with a second: the time
// testCounter takes on the fake and on a workshop cluster it starts, and
// the one-time cost that the first of either pays in a test binary.
// go test -run RunTimes -v ./08-testing
func TestRunTimes(t *testing.T) {
	for _, tc := range []struct {
		name string
		run  func() error
	}{
		{"the first NewClientset (type converter)", func() error {
			fake.NewClientset()
			return nil
		}},
		{"testCounter on fake.NewClientset", func() error {
			return testCounter(t.Context(), &bytes.Buffer{}, fake.NewClientset(seedPods("ns")...), "ns")
		}},
		{"testCounter on a workshop cluster, started and stopped", func() error {
			c, err := workshop.New()
			if err != nil {
				return err
			}
			defer c.Close()
			for _, p := range seedPods("default") {
				_, err := c.Client().CoreV1().Pods("default").Create(t.Context(), p.(*corev1.Pod), metav1.CreateOptions{})
				if err != nil {
					return err
				}
			}
			return testCounter(t.Context(), &bytes.Buffer{}, c.Client(), "default")
		}},
	} {
		start := time.Now()
		if err := tc.run(); err != nil {
			t.Fatal(err)
		}
		t.Logf("%-56s %v", tc.name, time.Since(start))
	}
}

// BenchmarkCreate: what one Create costs on each. NewClientset builds a
// REST mapper of its whole scheme on every write; the workshop cluster
// pays a round trip over HTTP on the loopback.
// go test -run XXX -bench Create ./08-testing
func BenchmarkCreate(b *testing.B) {
	for _, bc := range []struct {
		name   string
		client func(testing.TB) kubernetes.Interface
	}{
		{"NewClientset", func(testing.TB) kubernetes.Interface { return fake.NewClientset() }},
		{"NewSimpleClientset", func(testing.TB) kubernetes.Interface { return fake.NewSimpleClientset() }},
		{"workshop", func(tb testing.TB) kubernetes.Interface { return workshop.Start(tb).Client() }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			pods := bc.client(b).CoreV1().Pods("default")
			for i := 0; b.Loop(); i++ {
				p := newPod("default", fmt.Sprint("p-", i), "web")
				if _, err := pods.Create(b.Context(), p, metav1.CreateOptions{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
