package main

// The controller, in kubernetes/sample-controller's order: the struct,
// NewController, the handler that turns events into keys, Run and its
// workers, and syncHandler, which makes the world match one key. It
// logs one line where something happens, as sample-controller does;
// nothing reads that log: the steps (main.go) watch the controller
// through its queue, its handler and its client (observe.go).

import (
	"context"
	"fmt"
	"maps"
	"strconv"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	appsinformers "k8s.io/client-go/informers/apps/v1"
	"k8s.io/client-go/kubernetes"
	appslisters "k8s.io/client-go/listers/apps/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	"github.com/informer-walkthrough/informer-walkthrough/internal/cluster"
)

// Controller keeps configmap/<name>-summary in sync with each Deployment.
type Controller struct {
	// client writes the summaries.
	client kubernetes.Interface
	// deploymentsLister reads the informer's cache of Deployments.
	deploymentsLister appslisters.DeploymentLister
	// deploymentsSynced is done once the handler has had the first list.
	deploymentsSynced cache.DoneChecker
	// workqueue holds the keys to sync, each once, and hands a key to
	// one worker at a time.
	workqueue workqueue.TypedRateLimitingInterface[cache.ObjectName]
	// logger is where the handler says what it did; the workers take
	// theirs from their context, as sample-controller's do.
	logger klog.Logger
}

// !+newController
// NewController builds the queue and the handler that feeds it.
func NewController(ctx context.Context, client kubernetes.Interface,
	deployments appsinformers.DeploymentInformer) (*Controller, error) {
	// Per key: 5ms, 10ms, 20ms, ... capped at 1s (see the README).
	limiter := workqueue.NewTypedItemExponentialFailureRateLimiter[cache.ObjectName](5*time.Millisecond, time.Second)
	c := &Controller{
		client:            client,
		deploymentsLister: deployments.Lister(),
		workqueue: workqueue.NewTypedRateLimitingQueueWithConfig(limiter,
			workqueue.TypedRateLimitingQueueConfig[cache.ObjectName]{Name: "summaries"}),
		logger: klog.FromContext(ctx),
	}
	reg, err := deployments.Informer().AddEventHandler(c.handler())
	if err != nil {
		c.workqueue.ShutDown()
		return nil, err
	}
	c.deploymentsSynced = reg.HasSyncedChecker()
	return c, nil
}

// handler turns events into keys and does no work itself: a slow
// handler delays every later event.
func (c *Controller) handler() cache.ResourceEventHandlerFuncs {
	return cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) { c.enqueue("ADD", obj) },
		UpdateFunc: func(old, new any) {
			o, n := old.(*appsv1.Deployment), new.(*appsv1.Deployment)
			switch {
			case o.ResourceVersion == n.ResourceVersion:
				// Unchanged: a relist or a resync. Rare: say so.
				c.logger.Info("Skipping an unchanged update", "deployment", klog.KObj(n),
					"resourceVersion", n.ResourceVersion)
			case o.Generation != n.Generation || !maps.Equal(o.Labels, n.Labels):
				c.enqueue("UPDATE", n)
			}
			// Otherwise a status write: nothing the summary shows.
		},
		// obj may be a DeletedFinalStateUnknown (a delete seen on a relist).
		DeleteFunc: func(obj any) { c.enqueue("DELETE", obj) },
	}
}

// enqueue adds obj's key: namespace/name, all a worker needs to find
// the object in the lister. DeletionHandlingObjectToName unwraps a
// tombstone, where ObjectToName would fail.
func (c *Controller) enqueue(event string, obj any) {
	if key, err := cache.DeletionHandlingObjectToName(obj); err != nil {
		utilruntime.HandleError(err)
	} else {
		c.logger.V(4).Info("Enqueuing", "event", event, "key", key)
		c.workqueue.Add(key)
	}
}

// !-newController

// !+run
// Run waits for the handler's first list, starts the workers, and once
// ctx ends shuts the queue down and waits for them.
func (c *Controller) Run(ctx context.Context, workers int) error {
	// Whatever happens, no key is taken any more once Run returns.
	defer c.workqueue.ShutDown()
	logger := klog.FromContext(ctx)
	logger.Info("Starting summary controller")

	// A worker that ran before the first list would find objects
	// missing from the lister and act on that: wait for the handler's
	// registration to have had the first list.
	logger.Info("Waiting for informer caches to sync")
	if !cache.WaitFor(ctx, "", c.deploymentsSynced) {
		return fmt.Errorf("failed to wait for caches to sync: %w", context.Cause(ctx))
	}

	logger.Info("Starting workers", "count", workers)
	var wg wait.Group
	for range workers {
		wg.StartWithContext(ctx, c.runWorker)
	}
	logger.Info("Started workers")
	<-ctx.Done()

	// Get hands out what is still queued, then reports shutdown: each
	// worker returns once the queue is empty. Wait for them, so that
	// no sync outlives Run.
	logger.Info("Shutting down workers")
	c.workqueue.ShutDown()
	wg.Wait()
	return nil
}

// runWorker processes keys until the queue shuts down.
func (c *Controller) runWorker(ctx context.Context) {
	for c.processNextWorkItem(ctx) {
	}
}

// processNextWorkItem is one turn of a worker: Get a key, sync it,
// Forget it or AddRateLimited, and always Done.
func (c *Controller) processNextWorkItem(ctx context.Context) bool {
	logger := klog.FromContext(ctx)
	key, shutdown := c.workqueue.Get()
	if shutdown {
		return false
	}
	// Until Done the key is "processing": no other worker can Get it,
	// and an Add only marks it dirty; Done queues a dirty key again.
	defer c.workqueue.Done(key)

	err := c.syncHandler(ctx, key)
	if err == nil {
		// Forget its failures: the next starts at the shortest backoff.
		c.workqueue.Forget(key)
		logger.Info("Successfully synced", "key", key)
		return true
	}
	// Add the key again after a delay that grows with each failure.
	c.workqueue.AddRateLimited(key)
	logger.Error(err, "Error syncing; requeuing for later retry", "key", key,
		"requeues", c.workqueue.NumRequeues(key))
	return true
}

// !-run

// !+syncHandler
// syncHandler makes configmap/<name>-summary match the Deployment key
// names: the key says which, the lister (cache) what it is now.
func (c *Controller) syncHandler(ctx context.Context, key cache.ObjectName) error {
	logger := klog.FromContext(ctx)
	cms := c.client.CoreV1().ConfigMaps(key.Namespace)
	cmName := key.Name + "-summary"
	d, err := c.deploymentsLister.Deployments(key.Namespace).Get(key.Name)
	if apierrors.IsNotFound(err) {
		// A real cluster's garbage collector may be first: done too.
		logger.Info("Deleting summary", "key", key, "configmap", cmName)
		err := cms.Delete(ctx, cmName, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return err
		}
		return nil
	}
	if err != nil {
		return err
	}
	// d belongs to the cache, shared by all readers: never modify it.
	want := summaryOf(d)

	cm, err := cms.Get(ctx, cmName, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		logger.Info("Creating summary", "key", key, "release", d.Labels["release"], "configmap", cmName)
		_, err = cms.Create(ctx, newSummary(d, cmName, want), metav1.CreateOptions{})
		return err
	case err != nil:
		return err
	case maps.Equal(cm.Data, want):
		logger.Info("Summary in sync", "key", key, "release", d.Labels["release"], "configmap", cmName)
		return nil
	}
	// cm is ours to change. Update sends its resourceVersion: if
	// someone wrote in between, 409 Conflict.
	logger.Info("Updating summary", "key", key, "release", d.Labels["release"], "configmap", cmName)
	cm.Data = want
	_, err = cms.Update(ctx, cm, metav1.UpdateOptions{})
	return err
}

// !-syncHandler

// summaryOf is d's summary: replicas and labels, not the course's own.
func summaryOf(d *appsv1.Deployment) map[string]string {
	l := labels.Set(maps.Clone(d.Labels))
	delete(l, cluster.ManagedByLabel)
	return map[string]string{
		"replicas": strconv.Itoa(int(ptr.Deref(d.Spec.Replicas, 1))),
		"labels":   l.String(),
	}
}

// newSummary is the ConfigMap for d, which a real cluster's garbage
// collector deletes with d. (No BlockOwnerDeletion: it can need RBAC.)
func newSummary(d *appsv1.Deployment, name string, data map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{
			Name:   name,
			Labels: cluster.Labels("summary-of", d.Name),
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "apps/v1", Kind: "Deployment",
				Name: d.Name, UID: d.UID, Controller: ptr.To(true),
			}},
		},
		Data: data,
	}
}
