package main

// Step 7: the fake clientset client-gen wrote beside the real one
// (generated/clientset/versioned/fake), and chapter 08's traps, for
// memos. Everything here runs in memory: no request leaves the process.

import (
	"context"
	"fmt"
	"io"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"

	"github.com/informer-walkthrough/informer-walkthrough/13-generated/generated/clientset/versioned"
	"github.com/informer-walkthrough/informer-walkthrough/13-generated/generated/clientset/versioned/fake"
	"github.com/informer-walkthrough/informer-walkthrough/13-generated/generated/informers/externalversions"
	"github.com/informer-walkthrough/informer-walkthrough/internal/cluster"
)

// generatedFake runs the generated informer on the generated fake, as
// a unit test would, then makes the writes whose answers differ from an
// API server's.
func generatedFake(ctx context.Context, out io.Writer, c *cluster.Cluster, _ versioned.Interface) error {
	fmt.Fprintln(out, "\nStep 7. The generated fake clientset: chapter 08's traps, for memos")
	lunch := newMemo("lunch", "b", "Lunch at noon")
	lunch.Namespace = c.Namespace

	// !+fake
	// The fake is an object tracker behind the generated interface: the
	// same factory, informers and listers run on it.
	client := fake.NewSimpleClientset(lunch)
	factory := externalversions.NewSharedInformerFactory(client, 0)
	informer := factory.Course().V1alpha1().Memos().Informer()
	// Synced means listed: the watch may come later. A watch reactor
	// that answers nothing says when it has (chapter 08, step 2).
	watching := make(chan struct{})
	var once sync.Once
	client.PrependWatchReactor("memos", func(clienttesting.Action) (bool, watch.Interface, error) {
		once.Do(func() { close(watching) })
		return false, nil, nil // not handled: the tracker's reactor answers
	})
	ctx, cancel := context.WithCancel(ctx)
	defer factory.Shutdown()
	defer cancel()
	factory.Start(ctx.Done())
	if !cache.WaitFor(ctx, "", informer.HasSyncedChecker()) {
		return fmt.Errorf("the informer on the fake did not sync: %w", context.Cause(ctx))
	}
	select {
	case <-watching:
	case <-ctx.Done():
		return fmt.Errorf("the informer on the fake did not watch: %w", context.Cause(ctx))
	}
	// !-fake
	printActions(out, "  an informer on fake.NewSimpleClientset(memo/lunch) sends:", client.Actions())

	// !+traps
	memos := client.CourseV1alpha1().Memos(c.Namespace)
	got, err := memos.Get(ctx, "lunch", metav1.GetOptions{})
	if err != nil {
		return err
	}
	// A spec change: the API server bumps metadata.generation, the
	// tracker does not. Step 5's handler acts on generation changes.
	updated, err := memos.Update(ctx, withText(got, "Lunch at one"), metav1.UpdateOptions{})
	if err != nil {
		return err
	}
	// A status write that also changes the spec: the status subresource
	// keeps the spec; the tracker stores the whole object.
	withStatus := withText(updated, "Lunch at two")
	withStatus.Status.ConfigMap = "lunch-memo"
	afterStatus, err := memos.UpdateStatus(ctx, withStatus, metav1.UpdateOptions{})
	if err != nil {
		return err
	}
	// A watch with a label selector: the API server filters it.
	w, err := memos.Watch(ctx, metav1.ListOptions{LabelSelector: "team=a"})
	if err != nil {
		return err
	}
	defer w.Stop()
	first, err := nextEvent(ctx, w)
	if err != nil {
		return err
	}
	// Two updates of one stale copy: the API server refuses the second.
	_, err1 := memos.Update(ctx, withText(got, "one"), metav1.UpdateOptions{})
	_, err2 := memos.Update(ctx, withText(got, "two"), metav1.UpdateOptions{})
	// !-traps
	printTraps(out, got, updated, afterStatus, first, err1, err2)
	return nil
}
