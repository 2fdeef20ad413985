package cluster

import (
	"net/http"

	"k8s.io/client-go/rest"
)

// UnguardedConfig is a copy of Config without the guard that ends the
// run at the first 403 (see stopOnForbidden): for a client that a
// chapter means to be refused, as 10-lifecycle's step 1, whose lesson is
// what a 403 does to an informer. In every other way it is Config: its
// clients' requests are recorded (Requests) and go through the
// client-side faults (Faults).
func (c *Cluster) UnguardedConfig() *rest.Config {
	cfg := rest.CopyConfig(c.Config)
	cfg.WrapTransport = c.base
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return clientTransport{next: rt, reqLog: &c.reqLog, faults: &c.faults, allow403: true}
	})
	return cfg
}
