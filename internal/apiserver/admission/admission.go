// Package admission runs kube-apiserver's admission plugins on a
// workshop cluster's writes: MutatingAdmissionWebhook and
// ValidatingAdmissionWebhook (k8s.io/apiserver
// pkg/admission/plugin/webhook/{mutating,validating}), and the
// admission policies' (pkg/admission/plugin/policy/{validating,mutating}),
// chained and initialized as kube-apiserver's AdmissionOptions.ApplyTo
// does (k8s.io/apiserver pkg/server/options/admission.go), in its
// order: MutatingAdmissionPolicy, MutatingAdmissionWebhook,
// ValidatingAdmissionPolicy, ValidatingAdmissionWebhook, mutating ones
// reinvoked as their reinvocationPolicy asks. Rules, namespace and
// object selectors, matchConditions, failurePolicy, timeoutSeconds, the
// AdmissionReview a webhook is sent, its answer's patch, status and
// warnings are the plugins' own.
//
// A server started with [Enabled] as its Options.Admission links this
// package; the chapters do not. Nothing of it runs until the first
// webhook configuration or policy is created: the plugins (and the CEL
// environments they compile matchConditions and policies with) are made
// then, so a cluster with none starts and writes as fast as one without
// this package.
//
// What a workshop cluster cannot do as kube-apiserver does:
//
//   - A webhook is reached at its clientConfig.url. A clientConfig.service
//     is resolved as kube-apiserver's default resolver does, to
//     https://NAME.NAMESPACE.svc:PORT/PATH, which only a machine whose DNS
//     knows that name reaches: the workshop cluster runs no pods and no
//     Services' proxies. envtest has the same limit; a test's webhook
//     server listens on loopback and its configuration names its url.
//   - The user a webhook is told of (userInfo) is always the cluster's
//     one user, "workshop-admin" in system:masters (tls.go): the
//     cluster authenticates no one. Audit annotations are dropped: there
//     is no audit log.
//   - A configuration is in force at once (the store feeds the plugins'
//     informers, informers.go), where kube-apiserver's take a moment.
package admission

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/admission/initializer"
	mutatingpolicy "k8s.io/apiserver/pkg/admission/plugin/policy/mutating"
	validatingpolicy "k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	webhookinit "k8s.io/apiserver/pkg/admission/plugin/webhook/initializer"
	mutatingwebhook "k8s.io/apiserver/pkg/admission/plugin/webhook/mutating"
	validatingwebhook "k8s.io/apiserver/pkg/admission/plugin/webhook/validating"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizerfactory"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/apiserver/pkg/util/webhook"
	"k8s.io/apiserver/pkg/warning"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/restmapper"
	"k8s.io/component-base/compatibility"

	"github.com/informer-walkthrough/informer-walkthrough/internal/apiserver"
)

// Enabled is an Options.Admission: the server's writes go through
// kube-apiserver's admission plugins, from its first webhook
// configuration or policy on.
func Enabled(s *apiserver.Server) (apiserver.Admission, error) {
	return &chain{server: s, stop: make(chan struct{})}, nil
}

// pluginOrder is kube-apiserver's RecommendedPluginOrder (k8s.io/apiserver
// pkg/server/options/admission.go) less NamespaceLifecycle, which the
// store does itself.
var pluginOrder = []string{mutatingpolicy.PluginName, mutatingwebhook.PluginName, validatingpolicy.PluginName, validatingwebhook.PluginName}

// workshopUser is who every request comes from.
var workshopUser = &user.DefaultInfo{Name: "workshop-admin", Groups: []string{"system:masters", user.AllAuthenticated}}

// chain is the server's admission.
type chain struct {
	server *apiserver.Server
	stop   chan struct{} // closed by Close: the plugins' goroutines end

	active atomic.Bool // the plugins are made
	// Under the store's lock (Observe), then read-only:
	informers map[schema.GroupVersionResource]*storeInformer
	plugins   admission.Interface
	err       error // making the plugins failed; every write is refused with it
	policies  []*policyPlugin
}

// Close ends the plugins' goroutines (a policy source's refresh, a
// policy's param informers).
func (c *chain) Close() {
	close(c.stop)
	for _, p := range c.policies {
		p.close()
	}
}

// configurations are the kinds whose first object starts admission.
func configuration(gvr schema.GroupVersionResource) bool {
	return gvr.Group == "admissionregistration.k8s.io" && watched[gvr] != nil
}

func (c *chain) Observe(tx apiserver.Tx, typ watch.EventType, res *apiserver.Resource, obj runtime.Object) {
	if _, ok := watched[res.GVR]; !ok {
		return
	}
	if !c.active.Load() {
		if typ != watch.Added || !configuration(res.GVR) {
			return
		}
		c.start(tx) // with obj among the objects it starts with
		return
	}
	c.informers[res.GVR].apply(typ, obj)
	for _, p := range c.policies {
		if slices.Contains(policyKinds[p.name], res.GVR.Resource) {
			p.stale.Store(true)
		}
	}
}

func (c *chain) Active() bool { return c.active.Load() }

// start makes the plugins, their informers filled with the store's
// objects.
func (c *chain) start(tx apiserver.Tx) {
	c.informers = map[schema.GroupVersionResource]*storeInformer{}
	byType := map[reflect.Type]*storeInformer{}
	for gvr, obj := range watched {
		var objs []runtime.Object
		if res := tx.Lookup(gvr); res != nil {
			objs = tx.Objects(res)
		}
		inf := newStoreInformer(objs)
		c.informers[gvr] = inf
		byType[reflect.TypeOf(obj)] = inf
	}
	c.plugins, c.err = c.newPlugins(byType)
	c.active.Store(true)
}

// newPlugins is kube-apiserver's AdmissionOptions.ApplyTo: the plugins
// registered, initialized with the server's clients and informers, and
// chained.
func (c *chain) newPlugins(byType map[reflect.Type]*storeInformer) (admission.Interface, error) {
	cfg := c.server.Config()
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	f := &factory{SharedInformerFactory: informers.NewSharedInformerFactory(client, 0), byType: byType}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(client.Discovery()))

	plugins := admission.NewPlugins()
	validatingwebhook.Register(plugins)
	mutatingwebhook.Register(plugins)
	validatingpolicy.Register(plugins)
	mutatingpolicy.Register(plugins)
	config, err := admission.ReadAdmissionConfiguration(pluginOrder, "", runtime.NewScheme())
	if err != nil {
		return nil, err
	}
	initializers := func(stop chan struct{}) admission.PluginInitializers {
		generic := initializer.New(client, dyn, f, authorizerfactory.NewAlwaysAllowAuthorizer(), utilfeature.DefaultFeatureGate,
			compatibility.NewEffectiveVersionFromString("1.37", "", ""), stop, mapper)
		return admission.PluginInitializers{generic, webhookinit.NewPluginInitializer(nil, webhook.NewDefaultServiceResolver())}
	}
	// The policy plugins, behind a policyPlugin (policies.go).
	decorate := admission.DecoratorFunc(func(plugin admission.Interface, name string) admission.Interface {
		if _, ok := policyKinds[name]; !ok {
			return plugin
		}
		p := &policyPlugin{name: name, plugin: plugin, remake: func(stop chan struct{}) (admission.Interface, error) {
			pc, err := config.ConfigFor(name)
			if err != nil {
				return nil, err
			}
			return plugins.InitPlugin(name, pc, initializers(stop))
		}}
		c.policies = append(c.policies, p)
		return p
	})
	return plugins.NewFromPlugins(pluginOrder, config, initializers(c.stop), decorate)
}

func (c *chain) Admit(ctx context.Context, a *apiserver.AdmissionAttributes) ([]string, error) {
	return c.run(ctx, a, func(ctx context.Context, attrs admission.Attributes) error {
		m, ok := c.plugins.(admission.MutationInterface)
		if !ok || !m.Handles(attrs.GetOperation()) {
			return nil
		}
		return m.Admit(ctx, attrs, objects{c.server})
	})
}

func (c *chain) Validate(ctx context.Context, a *apiserver.AdmissionAttributes) ([]string, error) {
	return c.run(ctx, a, func(ctx context.Context, attrs admission.Attributes) error {
		v, ok := c.plugins.(admission.ValidationInterface)
		if !ok || !v.Handles(attrs.GetOperation()) {
			return nil
		}
		return v.Validate(ctx, attrs, objects{c.server})
	})
}

// run runs one phase with a's attributes, and returns the warnings it
// added.
func (c *chain) run(ctx context.Context, a *apiserver.AdmissionAttributes, phase func(context.Context, admission.Attributes) error) ([]string, error) {
	if c.err != nil {
		return nil, fmt.Errorf("admission: %w", c.err)
	}
	var w warnings
	ctx = warning.WithWarningRecorder(ctx, &w)
	attrs := admission.NewAttributesRecord(a.Object, a.OldObject, a.ObjectKind(), a.Namespace, a.Name,
		a.Resource.GVR, a.Subresource, admission.Operation(a.Operation), a.Options, a.DryRun, workshopUser)
	err := phase(ctx, attrs)
	return w.texts, err
}

// warnings records what admission adds to the answer's Warning headers.
type warnings struct {
	mu    sync.Mutex
	texts []string
}

func (w *warnings) AddWarning(_, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.texts = append(w.texts, text)
}
