package admission

import (
	"context"
	"reflect"
	"slices"
	"sync"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/informers/admissionregistration"
	"k8s.io/client-go/informers/core"
	"k8s.io/client-go/informers/internalinterfaces"
	"k8s.io/client-go/tools/cache"
)

// kube-apiserver's admission plugins read their configurations (webhook
// configurations, policies and their bindings) and the namespaces their
// selectors match through a SharedInformerFactory of the server's own
// loopback client: a configuration takes effect a moment after it is
// written (transcripts 110-113's README says to retry). Here the
// factory's informers for those kinds are fed by the store itself, at
// each commit (Observe): a configuration is in force for the very next
// request, which makes a test's answers the same at every run. Every
// other informer the plugins ask for (a policy's paramKind) is a real
// one, over loopback, as in kube-apiserver.

// watched are the resources fed by the store, and the typed object of
// each informer.
var watched = map[schema.GroupVersionResource]runtime.Object{
	corev1.SchemeGroupVersion.WithResource("namespaces"):                                         &corev1.Namespace{},
	admissionregistrationv1.SchemeGroupVersion.WithResource("mutatingwebhookconfigurations"):     &admissionregistrationv1.MutatingWebhookConfiguration{},
	admissionregistrationv1.SchemeGroupVersion.WithResource("validatingwebhookconfigurations"):   &admissionregistrationv1.ValidatingWebhookConfiguration{},
	admissionregistrationv1.SchemeGroupVersion.WithResource("validatingadmissionpolicies"):       &admissionregistrationv1.ValidatingAdmissionPolicy{},
	admissionregistrationv1.SchemeGroupVersion.WithResource("validatingadmissionpolicybindings"): &admissionregistrationv1.ValidatingAdmissionPolicyBinding{},
	admissionregistrationv1.SchemeGroupVersion.WithResource("mutatingadmissionpolicies"):         &admissionregistrationv1.MutatingAdmissionPolicy{},
	admissionregistrationv1.SchemeGroupVersion.WithResource("mutatingadmissionpolicybindings"):   &admissionregistrationv1.MutatingAdmissionPolicyBinding{},
}

// storeInformer is a cache.SharedIndexInformer whose indexer the store
// keeps (apply), calling its handlers as it does: synchronously, in the
// order of the changes.
type storeInformer struct {
	mu       sync.Mutex
	indexer  cache.Indexer
	handlers []*registration
	rv       string
}

type registration struct{ h cache.ResourceEventHandler }

func (*registration) HasSynced() bool                     { return true }
func (*registration) HasSyncedChecker() cache.DoneChecker { return synced{} }

// synced is a DoneChecker that is done: a storeInformer starts with the
// store's objects.
type synced struct{}

func (synced) Name() string { return "workshop store" }
func (synced) Done() <-chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}

func newStoreInformer(objs []runtime.Object) *storeInformer {
	inf := &storeInformer{indexer: cache.NewIndexer(cache.DeletionHandlingMetaNamespaceKeyFunc,
		cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})}
	for _, o := range objs {
		_ = inf.indexer.Add(o)
	}
	return inf
}

// apply records one committed change and tells the handlers.
func (inf *storeInformer) apply(typ watch.EventType, obj runtime.Object) {
	inf.mu.Lock()
	defer inf.mu.Unlock()
	if m, err := meta.Accessor(obj); err == nil {
		inf.rv = m.GetResourceVersion()
	}
	old, exists, _ := inf.indexer.Get(obj)
	switch {
	case typ == watch.Deleted:
		_ = inf.indexer.Delete(obj)
		for _, r := range inf.handlers {
			r.h.OnDelete(obj)
		}
	case exists:
		_ = inf.indexer.Update(obj)
		for _, r := range inf.handlers {
			r.h.OnUpdate(old, obj)
		}
	default:
		_ = inf.indexer.Add(obj)
		for _, r := range inf.handlers {
			r.h.OnAdd(obj, false)
		}
	}
}

func (inf *storeInformer) AddEventHandler(h cache.ResourceEventHandler) (cache.ResourceEventHandlerRegistration, error) {
	inf.mu.Lock()
	defer inf.mu.Unlock()
	r := &registration{h: h}
	inf.handlers = append(inf.handlers, r)
	for _, o := range inf.indexer.List() {
		h.OnAdd(o, true)
	}
	return r, nil
}

func (inf *storeInformer) AddEventHandlerWithResyncPeriod(h cache.ResourceEventHandler, _ time.Duration) (cache.ResourceEventHandlerRegistration, error) {
	return inf.AddEventHandler(h) // nothing is resynced: the store's objects are the truth
}

func (inf *storeInformer) AddEventHandlerWithOptions(h cache.ResourceEventHandler, _ cache.HandlerOptions) (cache.ResourceEventHandlerRegistration, error) {
	return inf.AddEventHandler(h)
}

func (inf *storeInformer) RemoveEventHandler(handle cache.ResourceEventHandlerRegistration) error {
	inf.mu.Lock()
	defer inf.mu.Unlock()
	inf.handlers = slices.DeleteFunc(inf.handlers, func(r *registration) bool { return r == handle })
	return nil
}

func (inf *storeInformer) GetStore() cache.Store     { return inf.indexer }
func (inf *storeInformer) GetIndexer() cache.Indexer { return inf.indexer }

// GetController: there is none; the store feeds the informer.
func (inf *storeInformer) GetController() cache.Controller { return nil }

// Run and RunWithContext wait: the store feeds the informer.
func (inf *storeInformer) Run(stopCh <-chan struct{})         { <-stopCh }
func (inf *storeInformer) RunWithContext(ctx context.Context) { <-ctx.Done() }
func (inf *storeInformer) HasSynced() bool                    { return true }
func (inf *storeInformer) HasSyncedChecker() cache.DoneChecker {
	return synced{}
}

func (inf *storeInformer) LastSyncResourceVersion() string {
	inf.mu.Lock()
	defer inf.mu.Unlock()
	return inf.rv
}

// There is no watch to fail, and no transform is needed.
func (inf *storeInformer) SetWatchErrorHandler(cache.WatchErrorHandler) error { return nil }
func (inf *storeInformer) SetWatchErrorHandlerWithContext(cache.WatchErrorHandlerWithContext) error {
	return nil
}
func (inf *storeInformer) SetTransform(cache.TransformFunc) error { return nil }
func (inf *storeInformer) IsStopped() bool                        { return false }
func (inf *storeInformer) AddIndexers(indexers cache.Indexers) error {
	return inf.indexer.AddIndexers(indexers)
}

// factory is the SharedInformerFactory the plugins are given: the
// informers of the watched kinds are storeInformers, every other is the
// real factory's, over loopback.
type factory struct {
	informers.SharedInformerFactory
	byType map[reflect.Type]*storeInformer
}

var _ internalinterfaces.SharedInformerFactory = (*factory)(nil)

func (f *factory) InformerFor(obj runtime.Object, newFunc internalinterfaces.NewInformerFunc) cache.SharedIndexInformer {
	if inf, ok := f.byType[reflect.TypeOf(obj)]; ok {
		return inf
	}
	return f.SharedInformerFactory.InformerFor(obj, newFunc)
}

// Core and Admissionregistration reach their informers through f's
// InformerFor; the other groups, which admission does not read, are the
// real factory's.
func (f *factory) Core() core.Interface { return core.New(f, "", nil) }
func (f *factory) Admissionregistration() admissionregistration.Interface {
	return admissionregistration.New(f, "", nil)
}
