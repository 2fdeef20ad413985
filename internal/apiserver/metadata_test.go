package apiserver

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/tools/cache"
)

// Metadata-only answers (metadata.go), against what kube-apiserver v1.36.3
// answered to the same requests (transcripts 42-51): pods web-1 and db-1
// created in namespace capture-meta (42), then lists, a get, a watch and
// a watch-list asked for as PartialObjectMetadata[List], in JSON and in
// protobuf, and a 406 for a shape the server does not serve.

// metaClient sends requests with the transcripts' Accept headers.
type metaClient struct{ *client }

func (c metaClient) send(method, path, accept, contentType string, body []byte) *http.Response {
	c.t.Helper()
	req := c.newRequest(context.Background(), method, path, body)
	req.Header.Set("Accept", accept)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := c.c.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	return resp
}

// replay sends a recorded exchange and compares the answer: the code,
// the Content-Type and the body (after norm).
func (c metaClient) replay(ex exchange, drop ...string) {
	c.t.Helper()
	resp := c.send(ex.Method, ex.Path, ex.Accept, "", nil)
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	if err != nil {
		c.t.Fatal(err)
	}
	if resp.StatusCode != ex.Code {
		c.t.Errorf("%s %s (Accept %s): HTTP %d, want %d: %s", ex.Method, ex.Path, ex.Accept, resp.StatusCode, ex.Code, got)
	}
	if ct, want := resp.Header.Get("Content-Type"), ex.Header.Get("content-type"); ct != want {
		c.t.Errorf("%s %s: Content-Type %q, want %q", ex.Method, ex.Path, ct, want)
	}
	sameJSON(c.t, ex.Method+" "+ex.Path+" as "+ex.Accept, withoutItems(decode(c.t, got), drop), withoutItems(decode(c.t, ex.Body), drop))
}

// withoutItems drops the list items of the given names: objects that
// kube-controller-manager made in the recording (kube-root-ca.crt).
func withoutItems(obj map[string]any, names []string) map[string]any {
	items, ok := obj["items"].([]any)
	if !ok {
		return obj
	}
	kept := []any{}
	for _, it := range items {
		if !slices.Contains(names, str(it.(map[string]any), "metadata", "name")) {
			kept = append(kept, it)
		}
	}
	if len(kept) == 0 {
		obj["items"] = nil
	} else {
		obj["items"] = kept
	}
	return obj
}

func TestMetadataOnly(t *testing.T) {
	s := startServer(t)
	c := metaClient{newClient(t, s)}
	for _, ns := range []string{"capture-meta", "capture-meta2"} {
		c.mustDo(http.StatusCreated, http.MethodPost, "/api/v1/namespaces",
			map[string]any{"metadata": map[string]any{"name": ns}})
	}
	for _, ex := range transcript(t, "42-create-pods") {
		c.mustDo(ex.Code, ex.Method, ex.Path, ex.Request)
	}

	t.Run("list, get, other resources, 406", func(t *testing.T) {
		c := metaClient{&client{t: t, s: s, c: c.c}}
		for _, name := range []string{
			"43-list-as-partialobjectmetadatalist",
			"44-get-as-partialobjectmetadata",
			"47-list-configmaps-as-partialobjectmetadatalist",
			"48-list-as-unknown-kind-406",
			"50-list-deployments-as-partialobjectmetadatalist",
		} {
			for _, ex := range transcript(t, name) {
				c.replay(ex, "kube-root-ca.crt")
			}
		}
	})

	t.Run("watch and watch-list", func(t *testing.T) {
		c := metaClient{&client{t: t, s: s, c: c.c}}
		w45 := transcript(t, "45-watch-as-partialobjectmetadata")[0]
		w46 := transcript(t, "46-watchlist-as-partialobjectmetadata")[0]
		open := func(ex exchange, path string) *stream {
			ctx, cancel := context.WithCancel(context.Background())
			req := c.newRequest(ctx, http.MethodGet, path, nil)
			req.Header.Set("Accept", ex.Accept)
			resp, err := c.c.Do(req)
			if err != nil {
				cancel()
				t.Fatal(err)
			}
			return c.stream(resp, cancel)
		}
		path45 := strings.Split(w45.Path, "?")[0] + "?watch=true&resourceVersion=" + s.ResourceVersion()
		watch45 := open(w45, path45)
		watch46 := open(w46, w46.Path)
		// The watch-list's initial events come before the changes.
		var got46 []frame
		for range 3 {
			got46 = append(got46, watch46.next())
		}
		// The recorded PATCH was sent as application/json and refused
		// with 415, so it changed nothing: the workshop cluster must
		// refuse it too.
		for _, ex := range transcript(t, "45b-changes-during-watch") {
			resp := c.send(ex.Method, ex.Path, "application/json", "application/json", ex.Request)
			got, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != ex.Code {
				t.Fatalf("%s %s: HTTP %d, want %d", ex.Method, ex.Path, resp.StatusCode, ex.Code)
			}
			if ex.Code == http.StatusUnsupportedMediaType {
				sameJSON(t, "the 415", decode(t, got), decode(t, ex.Body))
			}
		}
		var got45 []frame
		for range w45.Events {
			got45 = append(got45, watch45.next())
		}
		for len(got46) < len(w46.Events) {
			got46 = append(got46, watch46.next())
		}
		sameEvents := func(what string, got, want []frame) {
			if diff := cmp.Diff(shape(want), shape(got)); diff != "" {
				t.Errorf("%s: events differ (-real +workshop):\n%s", what, diff)
				return
			}
			for i := range want {
				sameJSON(t, what+" event "+want[i].Type, got[i].Object, want[i].Object)
			}
		}
		sameEvents("watch", got45, w45.Events)
		sameEvents("watch-list", got46, w46.Events)
	})

	t.Run("v1beta1, after the changes", func(t *testing.T) {
		c := metaClient{&client{t: t, s: s, c: c.c}}
		// Between 45b and 49 the recording labelled web-1 tier=front.
		resp := c.send(http.MethodPatch, "/api/v1/namespaces/capture-meta/pods/web-1", "application/json",
			"application/merge-patch+json", []byte(`{"metadata":{"labels":{"tier":"front"}}}`))
		resp.Body.Close()
		c.replay(transcript(t, "49-list-as-partialobjectmetadatalist-v1beta1")[0])
	})

	t.Run("protobuf, as client-go's metadata client asks", func(t *testing.T) {
		ex := transcript(t, "51-list-configmaps-as-partialobjectmetadatalist-protobuf")[0]
		cm := `{"metadata":{"name":"one","labels":{"app":"web"}},"data":{"k":"v"}}`
		c.mustDo(http.StatusCreated, http.MethodPost, "/api/v1/namespaces/capture-meta2/configmaps", []byte(cm))
		resp := c.send(ex.Method, ex.Path, ex.Accept, "", nil)
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/vnd.kubernetes.protobuf" {
			t.Fatalf("HTTP %d, Content-Type %q, want 200 and protobuf: %q", resp.StatusCode, resp.Header.Get("Content-Type"), body)
		}
		sameJSON(t, "the protobuf answer", protoAsJSON(t, body), protoAsJSON(t, ex.Body))
	})
}

// protoAsJSON decodes a protobuf PartialObjectMetadataList with
// apimachinery's serializer and returns it as decoded JSON, without the
// configmap kube-controller-manager made in the recording.
func protoAsJSON(t *testing.T, body []byte) map[string]any {
	t.Helper()
	info, ok := runtime.SerializerInfoForMediaType(metaCodecs.SupportedMediaTypes(), runtime.ContentTypeProtobuf)
	if !ok {
		t.Fatal("no protobuf serializer")
	}
	list := &metav1.PartialObjectMetadataList{}
	if _, _, err := info.Serializer.Decode(body, nil, list); err != nil {
		t.Fatalf("not a protobuf PartialObjectMetadataList: %v", err)
	}
	b, err := json.Marshal(list)
	if err != nil {
		t.Fatal(err)
	}
	return withoutItems(decode(t, bytes.TrimSpace(b)), []string{"kube-root-ca.crt"})
}

// TestMetadataInformer: client-go's own metadata informer (protobuf,
// watch-list) fills its cache from the workshop cluster with
// PartialObjectMetadata and follows a change, and its requests ask for
// the metadata-only shape.
func TestMetadataInformer(t *testing.T) {
	s := startServer(t)
	c := newClient(t, s)
	c.mustDo(http.StatusCreated, http.MethodPost, "/api/v1/namespaces",
		map[string]any{"metadata": map[string]any{"name": "capture-meta"}})
	for _, ex := range transcript(t, "42-create-pods") {
		c.mustDo(ex.Code, ex.Method, ex.Path, ex.Request)
	}
	mc, err := metadata.NewForConfig(s.Config())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	factory := metadatainformer.NewFilteredSharedInformerFactory(mc, 0, "capture-meta", nil)
	inf := factory.ForResource(corev1.SchemeGroupVersion.WithResource("pods")).Informer()
	added := make(chan string, 10)
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) { added <- obj.(*metav1.PartialObjectMetadata).Name },
	}); err != nil {
		t.Fatal(err)
	}
	factory.Start(ctx.Done())
	defer factory.Shutdown()
	defer cancel()
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		t.Fatal("the metadata informer did not sync")
	}
	var names []string
	for _, obj := range inf.GetStore().List() {
		p, ok := obj.(*metav1.PartialObjectMetadata)
		if !ok {
			t.Fatalf("the store holds a %T, want *PartialObjectMetadata", obj)
		}
		if p.Kind != "PartialObjectMetadata" && p.Kind != "" {
			t.Errorf("kind %q", p.Kind)
		}
		if len(p.ManagedFields) == 0 || p.Labels["app"] == "" {
			t.Errorf("%s: metadata incomplete: %+v", p.Name, p.ObjectMeta)
		}
		names = append(names, p.Name)
	}
	slices.Sort(names)
	if diff := cmp.Diff([]string{"db-1", "web-1"}, names); diff != "" {
		t.Errorf("cached (-want +got):\n%s", diff)
	}
	// A change after the sync arrives as metadata too.
	c.mustDo(http.StatusCreated, http.MethodPost, "/api/v1/namespaces/capture-meta/pods",
		[]byte(`{"metadata":{"name":"web-2"},"spec":{"containers":[{"name":"c","image":"nginx:1.27"}]}}`))
	for {
		select {
		case name := <-added:
			if name != "web-2" {
				continue
			}
		case <-ctx.Done():
			t.Fatal("web-2 never reached the metadata informer")
		}
		break
	}
	for _, r := range s.Requests() {
		if r.Verb == "list" || r.Verb == "watch" {
			if !strings.Contains(r.Accept, "as=PartialObjectMetadata") {
				t.Errorf("%s asked for %q, not metadata", r, r.Accept)
			}
		}
	}
}
