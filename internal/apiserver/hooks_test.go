package apiserver

import (
	"errors"
	"net/http"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

// TestPrepareHookFailureStoresNothing: a kind's Prepare hook runs before
// the change is stored; when it fails, the request fails, nothing is
// stored and no watch sees an event. When
// it succeeds, what it returns runs after the change is stored, with the
// stored object, and cannot fail the request.
func TestPrepareHookFailureStoresNothing(t *testing.T) {
	refuse := map[watch.EventType]bool{}
	var settled []string
	res := *builtinRegistry().lookup(corev1.SchemeGroupVersion.WithResource("configmaps"))
	res.GVR.Resource = "hookedconfigmaps"
	res.Hooks = &Hooks{Prepare: func(tx Tx, typ watch.EventType, obj runtime.Object) (func(Tx, runtime.Object), error) {
		if refuse[typ] {
			return nil, errors.New("the hook refuses")
		}
		return func(tx Tx, obj runtime.Object) {
			settled = append(settled, string(typ)+" "+metaOf(obj).GetName()+" rv "+metaOf(obj).GetResourceVersion())
		}, nil
	}}
	s := startServerWith(t, Options{Extend: func(s *Server) error { return s.Serve(&res) }})
	c := newClient(t, s)
	c.mustDo(http.StatusCreated, http.MethodPost, "/api/v1/namespaces", map[string]any{"metadata": map[string]any{"name": "ns"}})
	const path = "/api/v1/namespaces/ns/hookedconfigmaps"
	w := c.watch(path + "?watch=true&resourceVersion=0")

	refuse[watch.Added] = true
	if code, obj := c.do(http.MethodPost, path, map[string]any{"metadata": map[string]any{"name": "refused"}}); code != http.StatusInternalServerError {
		t.Fatalf("create with a failing hook: HTTP %d %v, want 500", code, obj)
	}
	c.mustDo(http.StatusNotFound, http.MethodGet, path+"/refused", nil)

	refuse[watch.Added] = false
	created := c.mustDo(http.StatusCreated, http.MethodPost, path, map[string]any{"metadata": map[string]any{"name": "kept"}, "data": map[string]any{"a": "1"}})
	refuse[watch.Modified] = true
	created["data"] = map[string]any{"a": "2"}
	if code, obj := c.do(http.MethodPut, path+"/kept", created); code != http.StatusInternalServerError {
		t.Fatalf("update with a failing hook: HTTP %d %v, want 500", code, obj)
	}
	got := c.mustDo(http.StatusOK, http.MethodGet, path+"/kept", nil)
	if str(got, "data", "a") != "1" || str(got, "metadata", "resourceVersion") != str(created, "metadata", "resourceVersion") {
		t.Errorf("after a refused update: %v", got)
	}

	// The first event the watch sees is the create that succeeded.
	ev := w.next()
	if ev.Type != "ADDED" || str(ev.Object, "metadata", "name") != "kept" {
		t.Errorf("first event %s %s, want ADDED kept", ev.Type, str(ev.Object, "metadata", "name"))
	}
	if rv := str(created, "metadata", "resourceVersion"); len(settled) != 1 || settled[0] != "ADDED kept rv "+rv {
		t.Errorf("settled %q, want [ADDED kept rv %s]", settled, rv)
	}
	refuse[watch.Modified] = false
	c.mustDo(http.StatusOK, http.MethodPut, path+"/kept", created)
	if ev := w.next(); ev.Type != "MODIFIED" || str(ev.Object, "data", "a") != "2" {
		t.Errorf("next event %s %v, want MODIFIED with a=2 (nothing from the refused update)", ev.Type, ev.Object)
	}
}
