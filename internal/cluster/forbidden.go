package cluster

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/informer-walkthrough/informer-walkthrough/internal/apiserver"
)

// A chapter run without the RBAC grant it needs must not hang. But
// client-go's reflectors retry a Forbidden list or watch forever (with
// backoff), and WaitForCacheSync waits for them without a word. So Main
// ends the run at the first 403 any client of the chapter receives, and
// reports that 403 as the chapter's error.

// stopOnForbidden makes the first 403 answer cancel the run with the
// Forbidden error as the cause (context.Cause).
func (c *Cluster) stopOnForbidden(cancel context.CancelCauseFunc) {
	c.reqLog.mu.Lock()
	defer c.reqLog.mu.Unlock()
	c.reqLog.deny = cancel
}

// forbidden reads the Status of a 403 answer (JSON or protobuf, as the
// client asked) and cancels the run with it. It puts the body back for
// client-go, which decodes it again.
func (l *requestLog) forbidden(r *http.Request, resp *http.Response) {
	l.mu.Lock()
	cancel := l.deny
	l.mu.Unlock()
	if cancel == nil {
		return
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(body))
	cancel(forbiddenError(r, body))
}

// forbiddenError is the API error a 403 answer carries, or one made up
// from the request when the body is no Status (an authenticating proxy).
func forbiddenError(r *http.Request, body []byte) error {
	obj, _, err := scheme.Codecs.UniversalDeserializer().Decode(body, nil, nil)
	if st, ok := obj.(*metav1.Status); err == nil && ok {
		if err := apierrors.FromObject(st); apierrors.IsForbidden(err) {
			return err
		}
	}
	req := apiserver.NewRequest(r)
	msg := strings.Join(strings.Fields(string(body)), " ")
	return apierrors.NewGenericServerResponse(http.StatusForbidden, req.Verb,
		schema.ParseGroupResource(req.Resource), "", msg, 0, true)
}

// quietAfterEnd keeps client-go from reporting errors that only say the
// run has ended: an informer stopped in the middle of a LIST reports
// "Failed to watch ... context canceled" through utilruntime.HandleError.
// Errors that arrive while the run's context is live are still printed.
var quietAfterEnd = sync.OnceFunc(func() {
	for i, h := range utilruntime.ErrorHandlers {
		utilruntime.ErrorHandlers[i] = func(ctx context.Context, err error, msg string, kv ...any) {
			if ctx.Err() == nil {
				h(ctx, err, msg, kv...)
			}
		}
	}
})
