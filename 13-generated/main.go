// Chapter 13-generated: informers for your own kind, generated, and what
// they are made of.
//
// A controller of a CustomResourceDefinition of your own gets its typed
// clientset, listers, informers and shared factory from
// k8s.io/code-generator, as client-go's own informers/ and listers/ are
// generated. The chapter's kind is Memo (apis/course/v1alpha1: Go types
// with +genclient and +k8s:deepcopy-gen markers); generated/ is what
// code-generator v0.37.2 writes for it (hack/update-codegen.sh, checked
// by TestGeneratedCodeIsCurrent). Each step runs a generated part and
// shows it is the client-go machine of an earlier chapter.
//
// Read alongside: generated/informers/externalversions/course/v1alpha1/
// memo.go and factory.go, generated/listers/course/v1alpha1/memo.go;
// at k8s.io/code-generator v0.37.2, kube_codegen.sh and
// cmd/informer-gen/generators/informer.go; at client-go v0.37.2,
// gentype/type.go and listers/generic_helpers.go. crd.go holds the CRD,
// controller.go step 5's controller, fake.go step 7, objects.go the
// memos; observe.go (and internal/heap, 09's measurement) what only
// shows them at work.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	coursev1alpha1 "github.com/informer-walkthrough/informer-walkthrough/13-generated/apis/course/v1alpha1"
	"github.com/informer-walkthrough/informer-walkthrough/13-generated/generated/clientset/versioned"
	"github.com/informer-walkthrough/informer-walkthrough/13-generated/generated/informers/externalversions"
	memoinformers "github.com/informer-walkthrough/informer-walkthrough/13-generated/generated/informers/externalversions/course/v1alpha1"
	memolisters "github.com/informer-walkthrough/informer-walkthrough/13-generated/generated/listers/course/v1alpha1"
	"github.com/informer-walkthrough/informer-walkthrough/internal/cluster"
	"github.com/informer-walkthrough/informer-walkthrough/internal/show"
	"github.com/informer-walkthrough/informer-walkthrough/internal/tap"
)

func main() { cluster.MainWith("13-generated", extras, run) }

// step is one step of the chapter, given the generated clientset.
type step func(context.Context, io.Writer, *cluster.Cluster, versioned.Interface) error

// run installs the CRD, then runs the steps, each on the generated
// clientset, and removes the memos and (if it made it) the CRD.
func run(ctx context.Context, out io.Writer, c *cluster.Cluster) error {
	removeCRD, err := installCRD(ctx, out, c)
	if err != nil {
		return err
	}
	defer removeCRD()
	// The generated clientset is made from a rest.Config, as
	// kubernetes.NewForConfig is: the chapter's request log sees it.
	client, err := versioned.NewForConfig(c.Config)
	if err != nil {
		return err
	}
	if err := deleteMemos(ctx, client, c.Namespace); err != nil {
		return err
	}
	defer deleteMemos(ctx, client, c.Namespace)
	for _, s := range []step{
		typedClient,         // 1. the generated clientset: chapter 01's requests
		generatedInformer,   // 2. the generated informer: chapter 05's
		generatedLister,     // 3. the generated lister: chapter 04's indexer
		generatedFactory,    // 4. the generated factory: chapter 06's
		controllerOnIt,      // 5. a controller on it: chapter 07's (controller.go)
		typedAgainstDynamic, // 6. the same memos through chapter 09's dynamic informer
		generatedFake,       // 7. the generated fake clientset: chapter 08's traps (fake.go)
	} {
		if err := s(ctx, out, c, client); err != nil {
			return err
		}
	}
	return nil
}

// typedClient creates memos with the generated clientset, then lists
// and watches them: chapter 01's requests, under the CRD's group and
// version, decoded into the chapter's own Go type.
func typedClient(ctx context.Context, out io.Writer, c *cluster.Cluster, client versioned.Interface) error {
	fmt.Fprintln(out, "\nStep 1. The generated clientset: chapter 01's requests, typed")
	c.ResetRequests()
	// !+typedClient
	memos := client.CourseV1alpha1().Memos(c.Namespace)
	for _, m := range []*coursev1alpha1.Memo{
		newMemo("welcome", "a", "Welcome to the course"),
		newMemo("standup", "a", "Stand-up at ten"),
		newMemo("lunch", "b", "Lunch at noon"),
	} {
		created, err := memos.Create(ctx, m, metav1.CreateOptions{})
		if err != nil {
			return err
		}
		printCreated(out, created)
	}
	list, err := memos.List(ctx, own)
	if err != nil {
		return err
	}
	opts := own
	opts.ResourceVersion = list.ResourceVersion
	w, err := memos.Watch(ctx, opts)
	if err != nil {
		return err
	}
	defer w.Stop()
	// !-typedClient
	printList(out, list)

	// A change arrives on the watch as a *Memo: the generated client's
	// decoder knows the type (its scheme, generated/clientset/versioned/
	// scheme, registers apis/course/v1alpha1). The server lists by name.
	lunch := list.Items[0]
	lunch.Spec.Text = "Lunch at one"
	if _, err := memos.Update(ctx, &lunch, metav1.UpdateOptions{}); err != nil {
		return err
	}
	ev, err := nextEvent(ctx, w)
	if err != nil {
		return err
	}
	printEvent(out, "  update memo/lunch; the watch says:", ev)
	show.Under(out, "  requests, as chapter 01's (…/memos is "+memosPath(c)+"):",
		requests(c, "create", "list", "watch", "update"))
	return nil
}

// newMemo is a memo of team with text, labelled as the course's own:
// the Go type you wrote, in apis/course/v1alpha1/types.go.
func newMemo(name, team, text string) *coursev1alpha1.Memo {
	return &coursev1alpha1.Memo{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: cluster.Labels("team", team)},
		Spec:       coursev1alpha1.MemoSpec{Text: text},
	}
}

// generatedInformer runs the informer informer-gen wrote for Memo, built
// by its constructor without a factory, beside chapter 05's hand-built
// one over the same client: the same requests, the same events.
func generatedInformer(ctx context.Context, out io.Writer, c *cluster.Cluster, client versioned.Interface) error {
	fmt.Fprintln(out, "\nStep 2. The generated informer is chapter 05's informer")
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer wg.Wait() // runs second: the informers have returned
	defer cancel()  // runs first: stops them

	// !+filteredInformer
	// The generated constructor: a ListWatch over the generated client,
	// with the tweak applied to every list and watch.
	generated := memoinformers.NewFilteredMemoInformer(client, c.Namespace, 0,
		cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc},
		func(o *metav1.ListOptions) { o.LabelSelector = own.LabelSelector })

	// Chapter 05's, by hand: the same client, the same ListWatch.
	memos := client.CourseV1alpha1().Memos(c.Namespace)
	byHand := cache.NewSharedIndexInformer(&cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			o.LabelSelector = own.LabelSelector
			return memos.List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.LabelSelector = own.LabelSelector
			return memos.Watch(ctx, o)
		},
	}, &coursev1alpha1.Memo{}, 0,
		cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	// !-filteredInformer

	// Each informer's handler is the course's reporting tap.Handler.
	genCalls, handCalls := tap.NewRecorder(ctx), tap.NewRecorder(ctx)
	genReg, err1 := generated.AddEventHandler(tap.Handler{Rec: genCalls})
	handReg, err2 := byHand.AddEventHandler(tap.Handler{Rec: handCalls})
	if err := errors.Join(err1, err2); err != nil {
		return err
	}
	// One after the other, so that each one's requests can be told apart.
	c.ResetRequests()
	wg.Go(func() { generated.RunWithContext(ctx) })
	if !cache.WaitFor(ctx, "", genReg.HasSyncedChecker()) {
		return fmt.Errorf("the generated informer did not sync: %w", context.Cause(ctx))
	}
	show.Under(out, "  generated: requests", requests(c, "list", "watch"))
	c.ResetRequests()
	wg.Go(func() { byHand.RunWithContext(ctx) })
	if !cache.WaitFor(ctx, "", handReg.HasSyncedChecker()) {
		return fmt.Errorf("the hand-built informer did not sync: %w", context.Cause(ctx))
	}
	show.Under(out, "  by hand: requests", requests(c, "list", "watch"))

	// Both informers get the same events: the initial list (in no
	// defined order: sorted), then a change.
	standup, err := memos.Get(ctx, "standup", metav1.GetOptions{})
	if err != nil {
		return err
	}
	standup.Spec.Text = "Stand-up at half past ten"
	if _, err := memos.Update(ctx, standup, metav1.UpdateOptions{}); err != nil {
		return err
	}
	if err := printEvents(ctx, out, "generated", memoCalls(genCalls), 4); err != nil {
		return err
	}
	if err := printEvents(ctx, out, "by hand", memoCalls(handCalls), 4); err != nil {
		return err
	}
	return checkSameCache(generated, byHand)
}

// generatedLister reads the cache of a generated informer through the
// generated lister: chapter 04's indexer, with its namespace index, and
// the cached objects themselves, which are shared.
func generatedLister(ctx context.Context, out io.Writer, c *cluster.Cluster, client versioned.Interface) error {
	fmt.Fprintln(out, "\nStep 3. The generated lister is chapter 04's indexer")
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	informer := memoinformers.NewFilteredMemoInformer(client, c.Namespace, 0,
		cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc},
		func(o *metav1.ListOptions) { o.LabelSelector = own.LabelSelector })
	wg.Go(func() { informer.RunWithContext(ctx) })
	if !cache.WaitFor(ctx, "", informer.HasSyncedChecker()) {
		return fmt.Errorf("the informer did not sync: %w", context.Cause(ctx))
	}

	// !+lister
	// A lister is a view of the informer's indexer: no request, no copy.
	lister := memolisters.NewMemoLister(informer.GetIndexer())
	teamA, err1 := lister.List(labels.SelectorFromSet(labels.Set{"team": "a"}))
	inNamespace, err2 := lister.Memos(c.Namespace).List(labels.Everything())
	indexed, err3 := informer.GetIndexer().IndexKeys(cache.NamespaceIndex, c.Namespace)
	lunch, err4 := lister.Memos(c.Namespace).Get("lunch")
	_, notFound := lister.Memos(c.Namespace).Get("dinner")
	// !-lister
	if err := errors.Join(err1, err2, err3, err4); err != nil {
		return err
	}
	printListerReads(out, teamA, inNamespace, indexed, lunch, notFound)

	// !+shared
	// Get returns the cached object itself, shared with every reader of
	// the informer: change a copy, and write the copy.
	cached, _, err := informer.GetIndexer().GetByKey(c.Namespace + "/lunch")
	if err != nil {
		return err
	}
	changed := withText(lunch, "Lunch at two")
	// !-shared
	printShared(out, cached == any(lunch), lunch, changed)
	return nil
}

// withText returns a copy of m that says text: m, from a lister, is
// the informer's cached object, which nobody may change.
func withText(m *coursev1alpha1.Memo, text string) *coursev1alpha1.Memo {
	m = m.DeepCopy()
	m.Spec.Text = text
	return m
}

// generatedFactory uses the generated shared informer factory as chapter
// 06 uses client-go's: its options on the wire, one informer for every
// consumer of memos, InformerFor, Start, WaitForCacheSync and Shutdown.
func generatedFactory(ctx context.Context, out io.Writer, c *cluster.Cluster, client versioned.Interface) error {
	fmt.Fprintln(out, "\nStep 4. The generated factory is chapter 06's factory")
	ctx, cancel := context.WithCancel(ctx)
	// !+factory
	factory := externalversions.NewSharedInformerFactoryWithOptions(client, 0,
		externalversions.WithNamespace(c.Namespace),
		externalversions.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.LabelSelector = own.LabelSelector + ",team=a"
		}))
	defer factory.Shutdown() // runs second: waits for the informers
	defer cancel()           // runs first: stops them

	// Three consumers ask for memos; a fourth asks by resource name.
	memos := factory.Course().V1alpha1().Memos()
	informer := memos.Informer()
	lister := memos.Lister()
	typed := memos.TypedInformer()
	generic, err := factory.ForResource(coursev1alpha1.SchemeGroupVersion.WithResource("memos"))
	if err != nil {
		return err
	}
	// InformerFor is what they all call: the informer made first wins.
	called := false
	again := factory.InformerFor(&coursev1alpha1.Memo{},
		func(versioned.Interface, time.Duration) cache.SharedIndexInformer {
			called = true
			return nil
		})
	// !-factory
	printFactoryShares(out, informer.GetStore(), typed.GetStore(),
		generic.Informer().GetStore(), again.GetStore(), called)

	c.ResetRequests()
	factory.Start(ctx.Done())
	synced := factory.WaitForCacheSync(ctx.Done())
	for typ, ok := range synced {
		if !ok {
			return fmt.Errorf("cache of %v did not sync", typ)
		}
	}
	teamA, err := lister.Memos(c.Namespace).List(labels.Everything())
	if err != nil {
		return err
	}
	printFactoryRun(out, synced, requests(c, "list", "watch"), teamA)

	// Shutdown waits for the informers, which stop when ctx ends: cancel
	// first (chapter 06, pitfall 4d), as the defers above do.
	cancel()
	factory.Shutdown()
	fmt.Fprintf(out, "  cancel, then Shutdown: the informer has stopped: %t\n", informer.IsStopped())
	return nil
}

// controllerOnIt runs step 5's controller (controller.go) on the memos:
// the generated factory's memo informer and lister, client-go's for the
// ConfigMaps it owns, a workqueue, one worker.
func controllerOnIt(ctx context.Context, out io.Writer, c *cluster.Cluster, client versioned.Interface) error {
	fmt.Fprintln(out, "\nStep 5. A controller on it is chapter 07's controller")
	// !+controller
	ownOnly := func(o *metav1.ListOptions) { o.LabelSelector = own.LabelSelector }
	memoFactory := externalversions.NewSharedInformerFactoryWithOptions(client, 0,
		externalversions.WithNamespace(c.Namespace), externalversions.WithTweakListOptions(ownOnly))
	kubeFactory := informers.NewSharedInformerFactoryWithOptions(c.Client, 0,
		informers.WithNamespace(c.Namespace), informers.WithTweakListOptions(ownOnly))
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() {
		cancel()               // first: stops the informers and the worker
		memoFactory.Shutdown() // then waits for them
		kubeFactory.Shutdown()
		wg.Wait()
	}()
	memoInformer := memoFactory.Course().V1alpha1().Memos()
	cmInformer := kubeFactory.Core().V1().ConfigMaps()
	controller, err := newMemoController(c.Client, client, memoInformer, cmInformer)
	if err != nil {
		return err
	}
	// !-controller

	// What the controller does is seen through the same informers (a
	// reporting tap.Handler on each), and through its workqueue, wrapped
	// by the course's tap before the informers start: a sync that
	// succeeded is the queue's Forget.
	// (Its log goes nowhere here, as chapter 07's: the logger in ctx is
	// what klog.FromContext finds.)
	memoRec, cmRec, rec := tap.NewRecorder(ctx), tap.NewRecorder(ctx), tap.NewRecorder(ctx)
	controller.queue = tap.Queue[cache.ObjectName]{TypedRateLimitingInterface: controller.queue, Rec: rec}
	ctx = klog.NewContext(ctx, logr.Discard())
	_, err1 := memoInformer.Informer().AddEventHandler(tap.Handler{Rec: memoRec})
	_, err2 := cmInformer.Informer().AddEventHandler(tap.Handler{Rec: cmRec})
	if err := errors.Join(err1, err2); err != nil {
		return err
	}
	memoFactory.Start(ctx.Done())
	kubeFactory.Start(ctx.Done())
	wg.Go(func() { _ = controller.run(ctx, 1) })
	if err := printControllerWork(ctx, out, "  one worker syncs the three memos "+
		"(in no defined order; sorted):", configMaps(cmRec), statuses(memoRec), forgotten{rec}, 3); err != nil {
		return err
	}

	memos := client.CourseV1alpha1().Memos(c.Namespace)
	welcome, err := memos.Get(ctx, "welcome", metav1.GetOptions{})
	if err != nil {
		return err
	}
	if _, err := memos.Update(ctx, withText(welcome, "Welcome back"), metav1.UpdateOptions{}); err != nil {
		return err
	}
	return printControllerWork(ctx, out, "  update memo/welcome's text; the controller follows:",
		configMaps(cmRec), statuses(memoRec), forgotten{rec}, 1)
}

// typedAgainstDynamic caches the same memos twice: with the generated
// informer, and with chapter 09's dynamic informer for the CRD's
// resource, which needs no generated code; then weighs the two caches.
func typedAgainstDynamic(ctx context.Context, out io.Writer, c *cluster.Cluster, client versioned.Interface) error {
	fmt.Fprintln(out, "\nStep 6. Typed against dynamic: chapter 09's informer on the same memos")
	memos := client.CourseV1alpha1().Memos(c.Namespace)
	for i := range notes {
		note := newMemo(fmt.Sprintf("note-%03d", i), "c", "A note of the course, number "+fmt.Sprint(i))
		if _, err := memos.Create(ctx, note, metav1.CreateOptions{}); err != nil {
			return err
		}
	}
	dc, err := dynamic.NewForConfig(c.Config)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// !+dynamic
	gvr := coursev1alpha1.SchemeGroupVersion.WithResource("memos")
	dynamicFactory := dynamicinformer.NewFilteredDynamicSharedInformerFactory(dc, 0, c.Namespace,
		func(o *metav1.ListOptions) { o.LabelSelector = own.LabelSelector })
	typedFactory := externalversions.NewSharedInformerFactoryWithOptions(client, 0,
		externalversions.WithNamespace(c.Namespace),
		externalversions.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.LabelSelector = own.LabelSelector
		}))
	caches := []cache.SharedIndexInformer{
		typedFactory.Course().V1alpha1().Memos().Informer(),
		dynamicFactory.ForResource(gvr).Informer(),
	}
	// !-dynamic
	typedFactory.Start(ctx.Done())
	dynamicFactory.Start(ctx.Done())
	if !cache.WaitFor(ctx, "", caches[0].HasSyncedChecker(), caches[1].HasSyncedChecker()) {
		return fmt.Errorf("the informers did not sync: %w", context.Cause(ctx))
	}
	cancel()
	typedFactory.Shutdown()
	dynamicFactory.Shutdown() // the caches stay, filled

	// !+readBoth
	typedObj, _, err1 := caches[0].GetIndexer().GetByKey(c.Namespace + "/lunch")
	dynamicObj, _, err2 := caches[1].GetIndexer().GetByKey(c.Namespace + "/lunch")
	if err := errors.Join(err1, err2); err != nil {
		return err
	}
	memo, ok1 := typedObj.(*coursev1alpha1.Memo)
	u, ok2 := dynamicObj.(*unstructured.Unstructured)
	if !ok1 || !ok2 {
		return fmt.Errorf("the caches hold a %T and a %T", typedObj, dynamicObj)
	}
	// Typed: a field, checked by the compiler. Dynamic: a path in a
	// map, checked at run time.
	text := memo.Spec.Text
	dynamicText, _, err := unstructured.NestedString(u.Object, "spec", "text")
	_, _, wrongType := unstructured.NestedInt64(u.Object, "spec", "text")
	// !-readBoth
	if err != nil {
		return err
	}
	printBoth(out, memo, text, u, dynamicText, wrongType)
	printMemory(out, caches, len(caches[0].GetStore().List()))
	return nil
}
