// Package cluster gives every chapter its Kubernetes API server the same
// way: an embedded workshop cluster by default, or a real cluster named by
// --kubeconfig, --context or KUBECONFIG.
//
// In a real cluster a chapter works in its own namespace (--namespace,
// default "informer-walkthrough"), creates it if needed, and only writes
// objects that carry the label ManagedByLabel, which it deletes before it
// starts (leftovers of an earlier run) and when it ends.
package cluster

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"syscall"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/transport"

	"github.com/informer-walkthrough/informer-walkthrough/internal/apiserver"
	"github.com/informer-walkthrough/informer-walkthrough/internal/runner"
)

// DefaultNamespace is where chapters work unless --namespace says otherwise.
const DefaultNamespace = runner.DefaultNamespace

// ManagedByLabel marks the objects a chapter created. Only those are ever
// written or deleted in a real cluster.
const ManagedByLabel = "app.kubernetes.io/managed-by"

// ManagedByValue is ManagedByLabel's value.
const ManagedByValue = "informer-walkthrough"

// OwnSelector selects the objects the course created.
const OwnSelector = ManagedByLabel + "=" + ManagedByValue

// Labels returns the given key/value pairs plus the course's own label.
func Labels(kv ...string) map[string]string {
	l := map[string]string{ManagedByLabel: ManagedByValue}
	for i := 0; i+1 < len(kv); i += 2 {
		l[kv[i]] = kv[i+1]
	}
	return l
}

// Options say which cluster to use.
type Options struct {
	// Real selects a real cluster through the kubeconfig; otherwise an
	// embedded workshop cluster is started.
	Real       bool
	Kubeconfig string // --kubeconfig; else clientcmd's rules ($KUBECONFIG, ~/.kube/config)
	Context    string // --context
	Namespace  string // --namespace
	Step       bool   // --step: wait for Enter between steps
	// Server configures the embedded workshop cluster (unused on a real
	// one): chapter 12 turns its ShardedListAndWatch gate on with it.
	Server apiserver.Options
}

// realRequested reports whether the command line or the environment names
// a real cluster: --kubeconfig, --context or $KUBECONFIG. A kubeconfig at
// ~/.kube/config alone does not, so that `go run` stays zero-setup.
func realRequested(o Options) bool {
	return o.Kubeconfig != "" || o.Context != "" || os.Getenv(clientcmd.RecommendedConfigPathEnvVar) != ""
}

// Cluster is the API server a chapter talks to.
type Cluster struct {
	Config    *rest.Config
	Client    kubernetes.Interface
	Namespace string
	// Server is the embedded workshop cluster, for its request log and
	// fault injection; nil on a real cluster.
	Server *apiserver.Server
	// Description says which cluster this is, for stderr.
	Description string

	reqLog requestLog            // client-side request log
	faults ClientFaults          // what the client's transport does wrong on purpose
	base   transport.WrapperFunc // Config's transport wrapper before the request log
}

// Embedded reports whether this is the embedded workshop cluster.
func (c *Cluster) Embedded() bool { return c.Server != nil }

// Connect starts the embedded workshop cluster, or connects to the real
// cluster the options name, and readies the chapter's namespace. Every
// failure is one line that says what to fix.
func Connect(ctx context.Context, o Options) (*Cluster, error) {
	if o.Namespace == "" {
		o.Namespace = DefaultNamespace
	}
	if errs := validation.IsDNS1123Label(o.Namespace); len(errs) > 0 {
		return nil, fmt.Errorf("--namespace %q is not a valid namespace name: %s", o.Namespace, errs[0])
	}
	c := &Cluster{Namespace: o.Namespace}
	if o.Real {
		cfg, desc, err := loadKubeconfig(o)
		if err != nil {
			return nil, err
		}
		// Chapters make bursts of requests; client-go's default of 5 QPS
		// would make them crawl.
		cfg.QPS, cfg.Burst = 50, 100
		c.Config, c.Description = cfg, desc
	} else {
		srv, err := apiserver.Start(o.Server)
		if err != nil {
			return nil, err
		}
		c.Server, c.Config = srv, srv.Config()
		c.Description = "embedded workshop cluster at " + srv.URL()
	}
	// Every client built from c.Config records its requests (Requests).
	c.base = c.Config.WrapTransport
	c.Config.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return clientTransport{next: rt, reqLog: &c.reqLog, faults: &c.faults}
	})
	client, err := kubernetes.NewForConfig(c.Config)
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("cannot build a client: %w", err)
	}
	c.Client = client
	if err := c.prepare(ctx, answerWithin); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// loadKubeconfig uses clientcmd's loading rules (--kubeconfig, else
// $KUBECONFIG, else ~/.kube/config) and --context.
func loadKubeconfig(o Options) (*rest.Config, string, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if o.Kubeconfig != "" {
		if _, err := os.Stat(o.Kubeconfig); err != nil {
			return nil, "", fmt.Errorf("--kubeconfig %s: %w", o.Kubeconfig, unwrapPathError(err))
		}
		rules.ExplicitPath = o.Kubeconfig
	}
	overrides := &clientcmd.ConfigOverrides{CurrentContext: o.Context}
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, overrides)
	raw, err := cc.RawConfig()
	if err != nil {
		return nil, "", fmt.Errorf("cannot read kubeconfig: %v", err)
	}
	cfg, err := cc.ClientConfig()
	if err != nil {
		if clientcmd.IsEmptyConfig(err) {
			return nil, "", errors.New("the kubeconfig names no cluster: give --kubeconfig PATH or --context NAME, or unset KUBECONFIG to use the embedded workshop cluster")
		}
		return nil, "", fmt.Errorf("kubeconfig: %v", err)
	}
	name := o.Context
	if name == "" {
		name = raw.CurrentContext
	}
	host := cfg.Host
	if u, err := url.Parse(cfg.Host); err == nil {
		host = u.Scheme + "://" + u.Host // never print credentials or paths
	}
	return cfg, fmt.Sprintf("context %q at %s", name, host), nil
}

func unwrapPathError(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// answerWithin bounds Connect's checks of the server: a server that
// accepted the connection and said nothing by then is not going to.
const answerWithin = 10 * time.Second

// prepare checks the server answers, makes sure the namespace exists and
// removes what an earlier run left behind, all within the given time.
func (c *Cluster) prepare(ctx context.Context, within time.Duration) error {
	pctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	// GET /version, bounded by the timeout (ServerVersion() takes no
	// context, and an unroutable address would hang it).
	if err := c.Client.Discovery().RESTClient().Get().AbsPath("/version").Do(pctx).Error(); err != nil {
		return fmt.Errorf("cannot reach the API server (%s): %s", c.Description, describeConnect(err))
	}
	_, err := c.Client.CoreV1().Namespaces().Get(pctx, c.Namespace, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: c.Namespace, Labels: Labels()}}
		_, err = c.Client.CoreV1().Namespaces().Create(pctx, ns, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			err = nil
		}
	}
	if err != nil {
		return fmt.Errorf("namespace %s: %v", c.Namespace, describeConnect(err))
	}
	if c.Embedded() {
		return nil
	}
	return c.cleanup(pctx)
}

// cleanup deletes every object of the course's in the namespace and waits
// until they are gone.
func (c *Cluster) cleanup(ctx context.Context) error {
	own := metav1.ListOptions{LabelSelector: OwnSelector}
	apps, core, ns := c.Client.AppsV1(), c.Client.CoreV1(), c.Namespace
	now := metav1.DeleteOptions{GracePeriodSeconds: new(int64)}
	kinds := []struct {
		name   string
		list   func() ([]string, error)
		delete func(name string) error
	}{
		{"deployments", func() ([]string, error) {
			l, err := apps.Deployments(ns).List(ctx, own)
			if err != nil {
				return nil, err
			}
			return namesOf(l.Items, func(d appsv1.Deployment) string { return d.Name }), nil
		}, func(n string) error { return apps.Deployments(ns).Delete(ctx, n, metav1.DeleteOptions{}) }},
		{"pods", func() ([]string, error) {
			l, err := core.Pods(ns).List(ctx, own)
			if err != nil {
				return nil, err
			}
			return namesOf(l.Items, func(p corev1.Pod) string { return p.Name }), nil
		}, func(n string) error { return core.Pods(ns).Delete(ctx, n, now) }},
		{"configmaps", func() ([]string, error) {
			l, err := core.ConfigMaps(ns).List(ctx, own)
			if err != nil {
				return nil, err
			}
			return namesOf(l.Items, func(c corev1.ConfigMap) string { return c.Name }), nil
		}, func(n string) error { return core.ConfigMaps(ns).Delete(ctx, n, metav1.DeleteOptions{}) }},
	}
	for _, k := range kinds {
		// Deletion on a real cluster can take a moment (finalizers,
		// garbage collection), so poll until the list is empty.
		err := wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(context.Context) (bool, error) {
			left, err := k.list()
			if err != nil {
				return false, err
			}
			for _, n := range left {
				if err := k.delete(n); err != nil && !apierrors.IsNotFound(err) {
					return false, err
				}
			}
			return len(left) == 0, nil
		})
		if err != nil {
			return fmt.Errorf("cleaning up %s in namespace %s: %v", k.name, ns, describe(err))
		}
	}
	return nil
}

func namesOf[T any](items []T, name func(T) string) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = name(it)
	}
	return out
}

// Close removes the chapter's objects from a real cluster, or stops the
// embedded one. It is safe to call more than once.
func (c *Cluster) Close() error {
	if c == nil {
		return nil
	}
	if c.Server != nil {
		return c.Server.Close()
	}
	if c.Client == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	return c.cleanup(ctx)
}

// describe makes an API error read as one line that names what to fix.
func describe(err error) string {
	switch {
	case apierrors.IsForbidden(err):
		return fmt.Sprintf("%v (grant the RBAC Role in the course README)", err)
	case apierrors.IsUnauthorized(err):
		return fmt.Sprintf("%v (the server refused the kubeconfig's credentials: log in again)", err)
	case errors.Is(err, syscall.ECONNREFUSED):
		return fmt.Sprintf("%v (is the cluster running?)", err)
	case errors.As(err, new(*tls.CertificateVerificationError)):
		return fmt.Sprintf("%v (the kubeconfig's certificate-authority does not match the server)", err)
	}
	return err.Error()
}

// describeConnect is describe for the checks Connect makes under its own
// timeout: there, and only there, a timeout means the server did not
// answer. (A chapter's own wait guard expiring says so itself.) Two
// timeouts race when a server accepts the connection and never answers:
// Connect's deadline (answerWithin) and the TLS handshake timeout of
// client-go's transport (10 s:
// https://github.com/kubernetes/client-go/blob/v0.37.2/transport/cache.go#L149),
// which net/http reports as a net.Error whose Timeout() is true
// ("net/http: TLS handshake timeout"). Either one gets the same line.
func describeConnect(err error) string {
	if errors.Is(err, context.DeadlineExceeded) || isTimeout(err) {
		return "the API server did not answer in time"
	}
	return describe(err)
}

// isTimeout reports whether err is, or wraps, a net.Error that timed out.
func isTimeout(err error) bool {
	var netErr net.Error
	return errors.As(err, &netErr) && netErr.Timeout()
}

// Describe is describe for chapters' own errors.
func Describe(err error) string { return describe(err) }
