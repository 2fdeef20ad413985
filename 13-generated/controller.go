package main

// Step 5's controller: kubernetes/sample-controller's shape on the
// course's kind. It publishes each memo's text as a ConfigMap
// <name>-memo that the memo owns, and reports in the memo's status which
// ConfigMap and which generation, written through the generated
// UpdateStatus. Every part is an earlier chapter's: informers and
// listers from the factories (06), a handler that only enqueues keys and
// a workqueue (07).

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	coursev1alpha1 "github.com/informer-walkthrough/informer-walkthrough/13-generated/apis/course/v1alpha1"
	"github.com/informer-walkthrough/informer-walkthrough/13-generated/generated/clientset/versioned"
	memoinformers "github.com/informer-walkthrough/informer-walkthrough/13-generated/generated/informers/externalversions/course/v1alpha1"
	memolisters "github.com/informer-walkthrough/informer-walkthrough/13-generated/generated/listers/course/v1alpha1"
	"github.com/informer-walkthrough/informer-walkthrough/internal/cluster"
)

// memoController keeps configmap/<name>-memo and the status of each memo
// in step with the memo.
type memoController struct {
	// kube writes the ConfigMaps; memos writes the memos' status.
	kube  kubernetes.Interface
	memos versioned.Interface
	// memoLister and configMapLister read the informers' caches.
	memoLister      memolisters.MemoLister
	configMapLister corelisters.ConfigMapLister
	// synced are done once each handler has had its first list.
	synced []cache.DoneChecker
	// queue holds the keys of the memos to sync, each once.
	queue workqueue.TypedRateLimitingInterface[cache.ObjectName]
}

// !+newMemoController
// newMemoController adds the handlers that feed the queue: a memo's key
// when a memo is added or its spec changes, the owner's key when one of
// our ConfigMaps is deleted (its other changes are our own writes).
func newMemoController(kube kubernetes.Interface, memos versioned.Interface,
	memoInformer memoinformers.MemoInformer, cmInformer coreinformers.ConfigMapInformer) (*memoController, error) {
	c := &memoController{
		kube: kube, memos: memos,
		memoLister:      memoInformer.Lister(),
		configMapLister: cmInformer.Lister(),
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.DefaultTypedControllerRateLimiter[cache.ObjectName](),
			workqueue.TypedRateLimitingQueueConfig[cache.ObjectName]{Name: "memos"}),
	}
	memoReg, err := memoInformer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: c.enqueue,
		UpdateFunc: func(old, obj any) {
			// Only a spec change bumps the generation: our own status
			// writes (and resyncs) are nothing to do.
			o, ok1 := old.(*coursev1alpha1.Memo)
			m, ok2 := obj.(*coursev1alpha1.Memo)
			if ok1 && ok2 && o.Generation != m.Generation {
				c.enqueue(m)
			}
		},
	})
	if err != nil {
		return nil, err
	}
	cmReg, err := cmInformer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		DeleteFunc: c.enqueueOwner,
	})
	if err != nil {
		return nil, err
	}
	c.synced = []cache.DoneChecker{memoReg.HasSyncedChecker(), cmReg.HasSyncedChecker()}
	return c, nil
}

// !-newMemoController

// enqueue adds a memo's key.
func (c *memoController) enqueue(obj any) {
	if key, err := cache.DeletionHandlingObjectToName(obj); err != nil {
		utilruntime.HandleError(err)
	} else {
		c.queue.Add(key)
	}
}

// enqueueOwner adds the key of the memo that owns a ConfigMap.
func (c *memoController) enqueueOwner(obj any) {
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	cm, ok := obj.(*corev1.ConfigMap)
	if !ok {
		return
	}
	if owner := metav1.GetControllerOf(cm); owner != nil && owner.Kind == "Memo" {
		c.queue.Add(cache.ObjectName{Namespace: cm.Namespace, Name: owner.Name})
	}
}

// run waits for the handlers' first lists, runs the workers until ctx
// ends, then shuts the queue down and waits for them.
func (c *memoController) run(ctx context.Context, workers int) error {
	defer c.queue.ShutDown()
	if !cache.WaitFor(ctx, "", c.synced...) {
		return fmt.Errorf("failed to wait for caches to sync: %w", context.Cause(ctx))
	}
	var wg wait.Group
	for range workers {
		wg.StartWithContext(ctx, func(ctx context.Context) {
			for c.processNextItem(ctx) {
			}
		})
	}
	<-ctx.Done()
	c.queue.ShutDown()
	wg.Wait()
	return nil
}

// processNextItem syncs one key: Forget on success, AddRateLimited on
// failure, and always Done (chapter 07); and says so in the log, as
// sample-controller does.
func (c *memoController) processNextItem(ctx context.Context) bool {
	key, shutdown := c.queue.Get()
	if shutdown {
		return false
	}
	defer c.queue.Done(key)
	logger := klog.FromContext(ctx)
	if err := c.syncHandler(ctx, key); err != nil {
		c.queue.AddRateLimited(key)
		logger.Error(err, "Error syncing; requeuing for later retry", "key", key)
		return true
	}
	c.queue.Forget(key)
	logger.Info("Successfully synced", "key", key)
	return true
}

// !+syncHandler
// syncHandler makes the memo's ConfigMap say its text, then its status say so.
func (c *memoController) syncHandler(ctx context.Context, key cache.ObjectName) error {
	memo, err := c.memoLister.Memos(key.Namespace).Get(key.Name)
	if apierrors.IsNotFound(err) {
		return nil // deleted: the garbage collector deletes its ConfigMap
	}
	if err != nil {
		return err
	}
	cms := c.kube.CoreV1().ConfigMaps(key.Namespace)
	cm, err := c.configMapLister.ConfigMaps(key.Namespace).Get(memo.Name + "-memo")
	switch {
	case apierrors.IsNotFound(err):
		cm, err = cms.Create(ctx, newConfigMap(memo), metav1.CreateOptions{})
	case err == nil && !metav1.IsControlledBy(cm, memo):
		return fmt.Errorf("configmap %s is not memo %s's", cm.Name, memo.Name)
	case err == nil && cm.Data["text"] != memo.Spec.Text:
		cm = cm.DeepCopy() // the lister's is the cache's
		cm.Data["text"] = memo.Spec.Text
		cm, err = cms.Update(ctx, cm, metav1.UpdateOptions{})
	}
	if err != nil {
		return err
	}
	if memo.Status.ConfigMap == cm.Name && memo.Status.ObservedGeneration == memo.Generation {
		return nil
	}
	// The status subresource: UpdateStatus writes .status, and nothing
	// else of the memo; a stale resourceVersion is a 409 and a retry.
	memo = memo.DeepCopy()
	memo.Status = coursev1alpha1.MemoStatus{ConfigMap: cm.Name, ObservedGeneration: memo.Generation}
	_, err = c.memos.CourseV1alpha1().Memos(key.Namespace).UpdateStatus(ctx, memo, metav1.UpdateOptions{})
	return err
}

// !-syncHandler

// newConfigMap is the ConfigMap that publishes memo, owned by it, so
// that a real cluster's garbage collector deletes it with the memo. (No
// BlockOwnerDeletion: it needs a permission on memos/finalizers.)
func newConfigMap(memo *coursev1alpha1.Memo) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{
			Name:   memo.Name + "-memo",
			Labels: cluster.Labels("memo", memo.Name),
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: coursev1alpha1.SchemeGroupVersion.String(), Kind: "Memo",
				Name: memo.Name, UID: memo.UID, Controller: ptr.To(true),
			}},
		},
		Data: map[string]string{"text": memo.Spec.Text},
	}
}
