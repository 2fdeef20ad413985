package crd

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"

	"github.com/informer-walkthrough/informer-walkthrough/internal/apiserver"

	"github.com/informer-walkthrough/informer-walkthrough/internal/apiserver/transcripttest"
)

// The probe of transcripts 135-136c: a CRD of two versions, v1 (stored,
// spec.size) and v2 (spec.replicas), whose conversion webhook is a
// server on loopback with a self-signed certificate that moves the one
// field to the other. What it is sent for a read of v2, and what the
// read answers; then, the webhook refusing every ConversionReview, what
// a get, a list and a create through v2 answer. The same scenario runs
// on the workshop cluster (TestConversionProbe) and on a real one
// (TestRecordConversionProbe, which writes the transcripts).

const (
	probeNS    = "convprobe"
	probeGroup = "convprobe.example.com"
	probeCRD   = "convprobes." + probeGroup
	// probeTranscripts is where the transcripts are.
	probeTranscripts = "../testdata/transcripts/"
)

// TestRecordConversionProbe records the probe's transcripts from the
// real cluster that RECORD_KUBECONFIG names (hack/realk8s: a
// kube-apiserver on this machine, which reaches the probe's webhook on
// 127.0.0.1):
//
//	RECORD_KUBECONFIG=/work/realk8s/kubeconfig go test -count=1 -run TestRecordConversionProbe ./internal/apiserver/crd
//
// It creates namespace convprobe and the CRD convprobes, and deletes
// them when it ends.
func TestRecordConversionProbe(t *testing.T) {
	path := os.Getenv("RECORD_KUBECONFIG")
	if path == "" {
		t.Skip("RECORD_KUBECONFIG names no cluster to record from")
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		t.Fatal(err)
	}
	cleanProbe(t, cfg)
	t.Cleanup(func() { cleanProbe(t, cfg) })
	for _, d := range conversionScenario(t, cfg, newConvWebhook(t)) {
		if err := os.WriteFile(probeTranscripts+d.name+".txt", append([]byte(d.heading+"\n"), append(d.json, '\n')...), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestConversionProbe runs the probe on the workshop cluster and
// compares what it sends and answers with what kube-apiserver v1.37.2
// did.
func TestConversionProbe(t *testing.T) {
	s, err := apiserver.Start(apiserver.Options{Extend: Serve})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	for _, d := range conversionScenario(t, s.Config(), newConvWebhook(t)) {
		if d.name == "136b-conversion-refused-list" {
			// kube-apiserver answered the list from its watch cache,
			// which holds each object as it converted it when it was
			// written; the workshop cluster keeps no such cache, and
			// answers its conversion's error as a write's (500, the
			// error as the message).
			want := `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"conversion webhook for convprobe.example.com/v1, Kind=ConvProbe failed: probe webhook refuses","code":500}`
			if diff := cmp.Diff(probeComparable(t, []byte(want)), probeComparable(t, d.json)); diff != "" {
				t.Errorf("%s (-want +workshop):\n%s", d.name, diff)
			}
			continue
		}
		data, err := os.ReadFile(probeTranscripts + d.name + ".txt")
		if err != nil {
			t.Fatal(err)
		}
		heading, want, _ := strings.Cut(string(data), "\n")
		if heading != d.heading {
			t.Errorf("%s: heading %q, want %q", d.name, d.heading, heading)
		}
		if diff := cmp.Diff(probeComparable(t, []byte(want)), probeComparable(t, d.json)); diff != "" {
			t.Errorf("%s (-kube-apiserver +workshop):\n%s", d.name, diff)
		}
	}
}

// cleanProbe deletes what the probe makes, and waits until it is gone.
func cleanProbe(t *testing.T, cfg *rest.Config) {
	ctx := context.Background()
	ext := apiextensionsclient.NewForConfigOrDie(cfg)
	dyn := dynamic.NewForConfigOrDie(cfg)
	ns := schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	for _, err := range []error{
		ext.ApiextensionsV1().CustomResourceDefinitions().Delete(ctx, probeCRD, metav1.DeleteOptions{}),
		dyn.Resource(ns).Delete(ctx, probeNS, metav1.DeleteOptions{}),
	} {
		if err != nil && !apierrors.IsNotFound(err) {
			t.Error(err)
		}
	}
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		_, err1 := dyn.Resource(ns).Get(ctx, probeNS, metav1.GetOptions{})
		_, err2 := ext.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, probeCRD, metav1.GetOptions{})
		return apierrors.IsNotFound(err1) && apierrors.IsNotFound(err2), nil
	})
	if err != nil {
		t.Errorf("the probe's namespace and CRD are not gone: %v", err)
	}
}

// convWebhook is the probe's conversion webhook: it records the
// ConversionReviews it is sent (with the path and query they were sent
// to) and converts, or refuses once refuse is set.
type convWebhook struct {
	*httptest.Server
	refuse atomic.Bool
	mu     sync.Mutex
	sent   []sent
}

type sent struct {
	uri  string
	body []byte
}

func newConvWebhook(t *testing.T) *convWebhook {
	t.Helper()
	w := &convWebhook{}
	w.Server = httptest.NewTLSServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var review apiextensionsv1.ConversionReview
		if err := json.Unmarshal(body, &review); err != nil || review.Request == nil {
			http.Error(rw, "not a ConversionReview", http.StatusBadRequest)
			return
		}
		w.mu.Lock()
		w.sent = append(w.sent, sent{r.URL.RequestURI(), body})
		w.mu.Unlock()
		resp := &apiextensionsv1.ConversionResponse{UID: review.Request.UID, Result: metav1.Status{Status: metav1.StatusSuccess}}
		if w.refuse.Load() {
			resp.Result = metav1.Status{Status: metav1.StatusFailure, Message: "probe webhook refuses"}
		} else {
			for _, raw := range review.Request.Objects {
				out, err := probeConvert(raw.Raw, review.Request.DesiredAPIVersion)
				if err != nil {
					http.Error(rw, err.Error(), http.StatusBadRequest)
					return
				}
				resp.ConvertedObjects = append(resp.ConvertedObjects, out)
			}
		}
		review.Response, review.Request = resp, nil
		_ = json.NewEncoder(rw).Encode(&review)
	}))
	t.Cleanup(w.Close)
	return w
}

// probeConvert is the probe's conversion: spec.size in v1 is
// spec.replicas in v2.
func probeConvert(raw []byte, to string) (runtime.RawExtension, error) {
	var u unstructured.Unstructured
	if err := u.UnmarshalJSON(raw); err != nil {
		return runtime.RawExtension{}, err
	}
	from, into := "replicas", "size"
	if to == probeGroup+"/v2" {
		from, into = "size", "replicas"
	}
	if v, ok, _ := unstructured.NestedFieldCopy(u.Object, "spec", from); ok {
		unstructured.RemoveNestedField(u.Object, "spec", from)
		_ = unstructured.SetNestedField(u.Object, v, "spec", into)
	}
	u.SetAPIVersion(to)
	b, err := u.MarshalJSON()
	return runtime.RawExtension{Raw: b}, err
}

// received returns the last ConversionReview the webhook was sent.
func (w *convWebhook) received(t *testing.T) sent {
	t.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.sent) == 0 {
		t.Fatal("the conversion webhook was sent nothing")
	}
	return w.sent[len(w.sent)-1]
}

func probeCRDObject(w *convWebhook) *apiextensionsv1.CustomResourceDefinition {
	version := func(name string, storage bool, field string) apiextensionsv1.CustomResourceDefinitionVersion {
		return apiextensionsv1.CustomResourceDefinitionVersion{Name: name, Served: true, Storage: storage,
			Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
				Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
					"spec": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{field: {Type: "integer"}}},
				}}}}
	}
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: w.Certificate().Raw})
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: probeCRD},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: probeGroup, Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "convprobes", Singular: "convprobe", Kind: "ConvProbe", ListKind: "ConvProbeList"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{
				version("v1", true, "size"), version("v2", false, "replicas"),
			},
			Conversion: &apiextensionsv1.CustomResourceConversion{
				Strategy: apiextensionsv1.WebhookConverter,
				Webhook: &apiextensionsv1.WebhookConversion{
					ConversionReviewVersions: []string{"v1"},
					ClientConfig: &apiextensionsv1.WebhookClientConfig{
						URL:      ptr.To(w.URL + "/convert"),
						CABundle: ca,
					},
				},
			},
		},
	}
}

// document is one recorded document of the scenario: a transcript's
// name, its heading line and its JSON.
type document struct {
	name, heading string
	json          []byte
}

// conversionScenario makes the requests the transcripts record, and
// returns what the webhook was sent and what the client was answered.
func conversionScenario(t *testing.T, cfg *rest.Config, w *convWebhook) []document {
	t.Helper()
	ctx := t.Context()
	dyn := dynamic.NewForConfigOrDie(cfg)
	ext := apiextensionsclient.NewForConfigOrDie(cfg)
	ns := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": probeNS}}}
	if _, err := dyn.Resource(schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}).Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := ext.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, probeCRDObject(w), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	v1 := dyn.Resource(schema.GroupVersionResource{Group: probeGroup, Version: "v1", Resource: "convprobes"}).Namespace(probeNS)
	v2 := dyn.Resource(schema.GroupVersionResource{Group: probeGroup, Version: "v2", Resource: "convprobes"}).Namespace(probeNS)
	// Both versions served (at once on the workshop cluster, a moment
	// later on kube-apiserver).
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err1 := v1.List(ctx, metav1.ListOptions{})
		_, err2 := v2.List(ctx, metav1.ListOptions{})
		return err1 == nil && err2 == nil, nil
	})
	if err != nil {
		t.Fatalf("waiting for both versions to be served: %v", err)
	}

	var docs []document
	add := func(name, heading string, v any) {
		b, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, document{name, heading, b})
	}
	status := func(name, heading string, err error) {
		var st apierrors.APIStatus
		if !errors.As(err, &st) {
			t.Fatalf("%s: got %v, want a Status", name, err)
		}
		add(name, heading, st.Status())
	}

	p1 := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": probeGroup + "/v1", "kind": "ConvProbe",
		"metadata": map[string]any{"name": "p1", "labels": map[string]any{"probe": "conversion"}},
		"spec":     map[string]any{"size": int64(3)},
	}}
	if _, err := v1.Create(ctx, p1, metav1.CreateOptions{FieldManager: "probe"}); err != nil {
		t.Fatal(err)
	}
	got, err := v2.Get(ctx, "p1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	last := w.received(t)
	var review any
	if err := json.Unmarshal(last.body, &review); err != nil {
		t.Fatal(err)
	}
	add("135-conversion-review", fmt.Sprintf("### POST %s (sent by the API server to the conversion webhook: a read of v2)", last.uri), review)
	add("135b-conversion-get-other-version", "### GET /apis/"+probeGroup+"/v2/namespaces/"+probeNS+"/convprobes/p1 (stored as v1, converted by the webhook)", got.Object)

	w.refuse.Store(true)
	_, err = v2.Get(ctx, "p1", metav1.GetOptions{})
	status("136-conversion-refused-get", "### the Status a client gets for a get of v2 when the conversion webhook refuses", err)
	list, err := v2.List(ctx, metav1.ListOptions{})
	if err == nil {
		// kube-apiserver answers a list from its watch cache, which
		// holds each object as it converted it when it saw it written.
		add("136b-conversion-refused-list", "### GET /apis/"+probeGroup+"/v2/namespaces/"+probeNS+"/convprobes when the conversion webhook refuses: answered from the watch cache", list.UnstructuredContent())
	} else {
		status("136b-conversion-refused-list", "### the Status a client gets for a list of v2 when the conversion webhook refuses", err)
	}
	p2 := p1.DeepCopy()
	p2.SetAPIVersion(probeGroup + "/v2")
	p2.SetName("p2")
	p2.Object["spec"] = map[string]any{"replicas": int64(2)}
	_, err = v2.Create(ctx, p2, metav1.CreateOptions{FieldManager: "probe"})
	status("136c-conversion-refused-create", "### the Status a client gets for a create through v2 when the conversion webhook refuses", err)
	return docs
}

// probeComparable decodes a document and replaces what differs between
// two runs by placeholders: what transcripttest.Norm replaces (uids,
// times, resourceVersions), and the revision an error message names.
func probeComparable(t *testing.T, b []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(revision.ReplaceAll(b, []byte("revision=REVISION")), &v); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	return transcripttest.Norm(v)
}

// revision is the resourceVersion an error message names.
var revision = regexp.MustCompile(`revision=[0-9]+`)
