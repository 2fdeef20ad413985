package cluster

import (
	"context"
	"errors"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"

	"github.com/informer-walkthrough/informer-walkthrough/internal/apiserver"
)

// TestUnguardedConfig: a 403 to a client of UnguardedConfig does not end
// the run, as one to a client of Config does; its requests are recorded
// and go through the client-side faults all the same.
func TestUnguardedConfig(t *testing.T) {
	c := connectForFaults(t)
	ctx, deny := context.WithCancelCause(t.Context())
	defer deny(nil)
	c.stopOnForbidden(deny)
	forbidden := apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "",
		errors.New(`User "nobody" cannot list resource "pods"`))
	listsPods := func(r apiserver.Request) bool { return r.Verb == "list" && r.Resource == "pods" }

	unguarded, err := kubernetes.NewForConfig(c.UnguardedConfig())
	if err != nil {
		t.Fatal(err)
	}
	c.ResetRequests()
	c.Faults().Answer(listsPods, forbidden)
	_, err = unguarded.CoreV1().Pods(c.Namespace).List(t.Context(), metav1.ListOptions{})
	if !apierrors.IsForbidden(err) {
		t.Fatalf("the unguarded client's list: %v; want the 403 the client-side fault answers", err)
	}
	if ctx.Err() != nil {
		t.Fatalf("a 403 to the unguarded client ended the run: %v", context.Cause(ctx))
	}
	if reqs := c.Requests(); len(reqs) != 1 || !listsPods(reqs[0]) {
		t.Errorf("request log %v; want the unguarded client's list", reqs)
	}

	c.Faults().Answer(listsPods, forbidden)
	_, _ = c.Client.CoreV1().Pods(c.Namespace).List(t.Context(), metav1.ListOptions{})
	if !apierrors.IsForbidden(context.Cause(ctx)) {
		t.Errorf("a 403 to Config's client left the run going (cause %v); the guard should end it",
			context.Cause(ctx))
	}
}
