// Package webhooks makes a workshop cluster call admission webhooks and
// evaluate admission policies, as kube-apiserver does: start the cluster
// with Served, then install the webhook configurations as a kubebuilder
// suite does on envtest, with envtest's own WebhookInstallOptions (it
// works on any cluster's rest.Config), and run controller-runtime's
// webhook server on the host, port and certificates it chose:
//
//	c := workshop.Start(t, crds.Served(), webhooks.Served())
//	opts := envtest.WebhookInstallOptions{Paths: []string{"config/webhook"}}
//	if err := opts.Install(c.Config()); err != nil {
//		t.Fatal(err)
//	}
//	mgr, _ := ctrl.NewManager(c.Config(), ctrl.Options{WebhookServer: webhook.NewServer(webhook.Options{
//		Host: opts.LocalServingHost, Port: opts.LocalServingPort, CertDir: opts.LocalServingCertDir})})
//
// The cluster runs kube-apiserver's own admission plugins
// (k8s.io/apiserver's MutatingAdmissionWebhook, ValidatingAdmissionWebhook
// and the admission policies', internal/apiserver/admission says how),
// which is why this is a package of its own: a test that does not import
// it does not compile them. They start at the first webhook
// configuration or policy: a cluster with none is as fast as without.
// A webhook is reached at its clientConfig.url (envtest's install
// rewrites a service reference into one); a service reference is not
// resolved, the cluster runs no Services.
package webhooks

import (
	"github.com/informer-walkthrough/informer-walkthrough/internal/apiserver"
	"github.com/informer-walkthrough/informer-walkthrough/internal/apiserver/admission"
	"github.com/informer-walkthrough/informer-walkthrough/workshop"
)

// Served makes the cluster call webhooks and evaluate policies.
func Served() workshop.Option {
	return func(o *apiserver.Options) { o.Admission = admission.Enabled }
}
