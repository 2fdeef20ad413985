package apiserver

import (
	"errors"
	"net/http"
	"sync/atomic"
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

// TestConversionHookFailure: a kind kept in another version converts
// every object it stores (ToStorage) and reads (FromStorage); when the
// conversion fails (a CRD's conversion webhook that is down), a write is
// refused before it takes a resourceVersion, a read is answered the
// error as kube-apiserver answers its storage codec's (500, the error as
// the message, no reason; a get, the etcd store's corrupt object), an open watch ends with an ERROR event (its
// etcd watcher's: an InternalError), and a watch opened then sends its
// initial events up to the ERROR event and ends.
func TestConversionHookFailure(t *testing.T) {
	var failing atomic.Bool
	convert := func(obj runtime.Object) (runtime.Object, error) {
		if failing.Load() {
			return nil, errors.New("conversion webhook for v1, Kind=ConfigMap failed: down")
		}
		return obj.DeepCopyObject(), nil
	}
	// Two resources, one storage: plain is the stored version,
	// converted another one.
	converted := *builtinRegistry().lookup(corev1.SchemeGroupVersion.WithResource("configmaps"))
	plain := converted
	converted.GVR.Resource = "convertedconfigmaps"
	converted.Hooks = &Hooks{Storage: "shared", ToStorage: convert, FromStorage: convert}
	plain.GVR.Resource = "plainconfigmaps"
	plain.Hooks = &Hooks{Storage: "shared"}
	s := startServerWith(t, Options{Extend: func(s *Server) error {
		if err := s.Serve(&converted); err != nil {
			return err
		}
		return s.Serve(&plain)
	}})
	c := newClient(t, s)
	c.mustDo(http.StatusCreated, http.MethodPost, "/api/v1/namespaces", map[string]any{"metadata": map[string]any{"name": "ns"}})
	const path = "/api/v1/namespaces/ns/convertedconfigmaps"
	a := c.mustDo(http.StatusCreated, http.MethodPost, path, map[string]any{"metadata": map[string]any{"name": "a"}})
	w := c.watch(path + "?watch=true&resourceVersion=" + str(a, "metadata", "resourceVersion"))

	failing.Store(true)
	want := map[string]any{"kind": "Status", "apiVersion": "v1", "metadata": map[string]any{}, "status": "Failure",
		"message": "conversion webhook for v1, Kind=ConfigMap failed: down", "code": float64(500)}
	for _, req := range []struct{ method, path string }{
		{http.MethodPost, path}, {http.MethodGet, path}, {http.MethodDelete, path + "/a"},
	} {
		code, got := c.do(req.method, req.path, map[string]any{"metadata": map[string]any{"name": "b"}})
		if code != http.StatusInternalServerError {
			t.Errorf("%s %s, conversion failing: HTTP %d, want 500", req.method, req.path, code)
		}
		sameJSON(t, req.method+" "+req.path, got, want)
	}
	// A get: the etcd store's corrupt object (transcript 136).
	code, got := c.do(http.MethodGet, path+"/a", nil)
	msg := "StorageError: corrupt object, Code: 7, Key: /convertedconfigmaps/ns/a, ResourceVersion: 0, AdditionalErrorMsg: object not decodable revision=" +
		str(a, "metadata", "resourceVersion") + ": conversion webhook for v1, Kind=ConfigMap failed: down"
	if code != http.StatusInternalServerError {
		t.Errorf("GET, conversion failing: HTTP %d, want 500", code)
	}
	sameJSON(t, "GET", got, map[string]any{"kind": "Status", "apiVersion": "v1", "metadata": map[string]any{}, "status": "Failure",
		"reason": "InternalError", "message": "Internal error occurred: " + msg, "code": float64(500),
		"details": map[string]any{"causes": []any{map[string]any{"message": msg}}}})
	// Opened while it fails: its initial state cannot be read.
	fails := c.watch(path + "?watch=true")
	if got := fails.rest(); len(got) != 1 || got[0].Type != "ERROR" || str(got[0].Object, "reason") != "InternalError" {
		t.Errorf("watch opened while conversion fails: %v, want one ERROR event", got)
	}

	failing.Store(false)
	// The failed writes took no resourceVersion.
	b := c.mustDo(http.StatusCreated, http.MethodPost, path, map[string]any{"metadata": map[string]any{"name": "b"}})
	if got, want := rvOfJSON(t, b), rvOfJSON(t, a)+1; got != want {
		t.Errorf("create after refused writes: resourceVersion %d, want %d", got, want)
	}
	failing.Store(true)
	// Written in the stored version, nothing to convert: stored, and
	// the watch of the other version cannot read it.
	c.mustDo(http.StatusCreated, http.MethodPost, "/api/v1/namespaces/ns/plainconfigmaps", map[string]any{"metadata": map[string]any{"name": "c"}})
	c.mustDo(http.StatusOK, http.MethodGet, "/api/v1/namespaces/ns/plainconfigmaps/a", nil)
	frames := w.rest()
	if len(frames) != 2 || frames[0].Type != "ADDED" || frames[1].Type != "ERROR" {
		t.Fatalf("watch: %v, want ADDED b then ERROR", shape(frames))
	}
	sameJSON(t, "the watch's ERROR event", frames[1].Object, map[string]any{"kind": "Status", "apiVersion": "v1", "metadata": map[string]any{},
		"status": "Failure", "reason": "InternalError", "code": float64(500),
		"message": "Internal error occurred: conversion webhook for v1, Kind=ConfigMap failed: down",
		"details": map[string]any{"causes": []any{map[string]any{"message": "conversion webhook for v1, Kind=ConfigMap failed: down"}}}})
}
