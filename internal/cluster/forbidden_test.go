package cluster

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/cache"

	"github.com/informer-walkthrough/informer-walkthrough/check/leakcheck"
	"github.com/informer-walkthrough/informer-walkthrough/internal/apiserver"
)

// TestForbiddenEndsRun: an informer whose watch is refused would retry
// forever, and WaitForCacheSync would wait without a word. Under Main the
// first 403 ends the run, and the 403 is the one line on stderr.
func TestForbiddenEndsRun(t *testing.T) {
	leakcheck.Verify(t)
	srv, err := apiserver.Start(apiserver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	srv.InjectFault(apiserver.Fault{Verb: "watch", Resource: "pods",
		Err: apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "",
			errors.New(`User "learner" cannot watch resource "pods" in API group ""`))})
	run := func(ctx context.Context, out io.Writer, c *Cluster) error {
		factory := informers.NewSharedInformerFactory(c.Client, 0)
		defer factory.Shutdown()
		pods := factory.Core().V1().Pods().Informer()
		factory.Start(ctx.Done())
		if !cache.WaitForCacheSync(ctx.Done(), pods.HasSynced) {
			return errors.New("pods did not sync")
		}
		return nil
	}
	var stdout, stderr bytes.Buffer
	start := time.Now()
	code := mainExit("01-test", Extras{}, []string{"--kubeconfig", writeKubeconfig(t, srv.URL())}, &stdout, &stderr, run)
	if code != 1 {
		t.Errorf("exit status %d, want 1", code)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("took %v", d)
	}
	last := lastLine(stderr.String())
	want := `01-test: pods is forbidden: User "learner" cannot watch resource "pods" in API group "" (grant the RBAC Role in the course README)`
	if last != want {
		t.Errorf("stderr ends %q\nwant         %q", last, want)
	}
}

// TestForbiddenError reads the Status of a 403 in either encoding
// client-go asks for, and makes do with a body that is not one.
func TestForbiddenError(t *testing.T) {
	st := apierrors.NewForbidden(schema.GroupResource{Group: "apps", Resource: "deployments"}, "web",
		errors.New(`User "learner" cannot delete resource "deployments"`)).Status()
	st.Kind, st.APIVersion = "Status", "v1"
	encode := func(mediaType string) []byte {
		info, ok := runtime.SerializerInfoForMediaType(scheme.Codecs.SupportedMediaTypes(), mediaType)
		if !ok {
			t.Fatalf("no serializer for %s", mediaType)
		}
		var b bytes.Buffer
		if err := info.Serializer.Encode(&st, &b); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	req := httptest.NewRequest("DELETE", "/apis/apps/v1/namespaces/ns/deployments/web", nil)
	for _, tt := range []struct {
		name string
		body []byte
		want string
	}{
		{"json", encode(runtime.ContentTypeJSON), st.Message},
		{"protobuf", encode(runtime.ContentTypeProtobuf), st.Message},
		{"html from a proxy", []byte("<html>\n  Forbidden\n</html>"), "<html> Forbidden </html>"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := forbiddenError(req, tt.body)
			if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v, want a Forbidden error saying %q", err, tt.want)
			}
			if s := err.Error(); strings.Contains(s, "\n") {
				t.Errorf("%q is more than one line", s)
			}
		})
	}
}

func lastLine(s string) string {
	l := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return l[len(l)-1]
}
