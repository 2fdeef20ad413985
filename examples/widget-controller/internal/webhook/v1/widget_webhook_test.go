package v1

import (
	"slices"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	examplev1 "github.com/informer-walkthrough/informer-walkthrough/examples/widget-controller/api/v1"
)

// warnings records the Warning headers a client is sent.
type warnings struct {
	mu    sync.Mutex
	texts []string
}

func (w *warnings) HandleWarningHeader(_ int, _ string, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.texts = append(w.texts, text)
}

func TestWidgetWebhooks(t *testing.T) {
	t.Parallel() // its own cluster, manager and port (startWebhooksStoppable)
	cfg := rest.CopyConfig(startWebhooks(t))
	var warned warnings
	cfg.WarningHandler = &warned
	c := newClient(t, cfg)
	ctx := t.Context()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "widget-webhook-"}}
	if err := c.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}

	t.Run("defaulting", func(t *testing.T) {
		w := &examplev1.Widget{ObjectMeta: metav1.ObjectMeta{Name: "plain", Namespace: ns.Name},
			Spec: examplev1.WidgetSpec{Data: map[string]string{"color": "blue"}}}
		if err := c.Create(ctx, w); err != nil {
			t.Fatal(err)
		}
		if got := w.Spec.Data["greeting"]; got != DefaultGreeting {
			t.Errorf("created: spec.data.greeting = %q, want %q from the defaulting webhook", got, DefaultGreeting)
		}
		// An update that drops it gets it again.
		w.Spec.Data = map[string]string{"color": "red"}
		if err := c.Update(ctx, w); err != nil {
			t.Fatal(err)
		}
		stored := &examplev1.Widget{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(w), stored); err != nil {
			t.Fatal(err)
		}
		if got := stored.Spec.Data; got["greeting"] != DefaultGreeting || got["color"] != "red" {
			t.Errorf("updated: spec.data = %v, want color red and the default greeting", got)
		}
	})

	t.Run("validation", func(t *testing.T) {
		w := &examplev1.Widget{ObjectMeta: metav1.ObjectMeta{Name: "bad", Namespace: ns.Name},
			Spec: examplev1.WidgetSpec{Data: map[string]string{"not a key!": "x"}}}
		err := c.Create(ctx, w)
		if !apierrors.IsInvalid(err) {
			t.Fatalf("create with a bad key: got %v, want 422 Invalid from the validating webhook", err)
		}
		const want = `admission webhook "vwidget-v1.kb.io" denied the request: Widget.example.com "bad" is invalid: spec.data[not a key!]: Invalid value: "not a key!": a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')`
		if err.Error() != want {
			t.Errorf("error:\n got %s\nwant %s", err, want)
		}
		if err := c.Get(ctx, client.ObjectKeyFromObject(w), &examplev1.Widget{}); !apierrors.IsNotFound(err) {
			t.Errorf("the refused Widget: got %v, want NotFound", err)
		}
		// An update to a bad key is refused too, and the stored
		// Widget stays as it was.
		ok := &examplev1.Widget{ObjectMeta: metav1.ObjectMeta{Name: "good", Namespace: ns.Name}}
		if err := c.Create(ctx, ok); err != nil {
			t.Fatal(err)
		}
		ok.Spec.Data["bad key"] = "x"
		if err := c.Update(ctx, ok); !apierrors.IsInvalid(err) {
			t.Errorf("update with a bad key: got %v, want 422 Invalid", err)
		}
	})

	t.Run("warnings", func(t *testing.T) {
		w := &examplev1.Widget{ObjectMeta: metav1.ObjectMeta{Name: "empty", Namespace: ns.Name},
			Spec: examplev1.WidgetSpec{Data: map[string]string{"blank": ""}}}
		if err := c.Create(ctx, w); err != nil {
			t.Fatal(err)
		}
		warned.mu.Lock()
		defer warned.mu.Unlock()
		if !slices.ContainsFunc(warned.texts, func(s string) bool { return strings.Contains(s, "spec.data[blank] is empty") }) {
			t.Errorf("warnings %q: want the validating webhook's", warned.texts)
		}
	})
}
