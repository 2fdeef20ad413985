package v1

import (
	"errors"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	examplev1 "github.com/informer-walkthrough/informer-walkthrough/examples/widget-controller/api/v1"
	examplev2 "github.com/informer-walkthrough/informer-walkthrough/examples/widget-controller/api/v2"
)

// TestWidgetConversion: the CRD stores v1 and serves v2 too, its
// conversion strategy Webhook (set by envtest's InstallCRDs); the
// workshop cluster converts through kube-apiserver's webhook converter,
// which POSTs a ConversionReview to the manager's /convert, where
// controller-runtime converts through the hub (api/v2/widget_conversion.go).
// A v2 Widget's entries are v1's data map, read and written through
// either version; the v1 defaulting webhook (matchPolicy Equivalent) is
// sent a v2 create converted to v1. Then the webhook server stops: a
// read of v2 fails with the converter's error, a read of v1 (the stored
// version, nothing to convert) still works, and a v2 watch ends with an
// ERROR event.
func TestWidgetConversion(t *testing.T) {
	t.Parallel() // its own cluster, manager and port (startWebhooksStoppable)
	cfg, stopWebhooks := startWebhooksStoppable(t)
	c, err := client.NewWithWatch(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "widget-conversion-"}}
	if err := c.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}

	// Written as v2: stored as v1, through the conversion webhook, and
	// defaulted by the v1 webhook on the way.
	w2 := &examplev2.Widget{ObjectMeta: metav1.ObjectMeta{Name: "listed", Namespace: ns.Name},
		Spec: examplev2.WidgetSpec{Entries: []examplev2.Entry{{Key: "size", Value: "3"}, {Key: "color", Value: "blue"}}}}
	if err := c.Create(ctx, w2); err != nil {
		t.Fatal(err)
	}
	wantEntries := []examplev2.Entry{{Key: "color", Value: "blue"}, {Key: "greeting", Value: DefaultGreeting}, {Key: "size", Value: "3"}}
	if !slices.Equal(w2.Spec.Entries, wantEntries) {
		t.Errorf("created as v2: spec.entries = %v, want %v (v1's data, defaulted by the v1 webhook, sorted)", w2.Spec.Entries, wantEntries)
	}
	key := client.ObjectKeyFromObject(w2)
	w1 := &examplev1.Widget{}
	if err := c.Get(ctx, key, w1); err != nil {
		t.Fatal(err)
	}
	if want := map[string]string{"color": "blue", "greeting": DefaultGreeting, "size": "3"}; !maps.Equal(w1.Spec.Data, want) {
		t.Fatalf("read as v1: spec.data = %v, want %v", w1.Spec.Data, want)
	}
	if w1.ResourceVersion != w2.ResourceVersion || w1.UID != w2.UID {
		t.Errorf("v1 and v2 differ in metadata: rv %s/%s uid %s/%s", w1.ResourceVersion, w2.ResourceVersion, w1.UID, w2.UID)
	}

	// Written as v1, read as v2 (a get and a list).
	w1.Spec.Data["shape"] = "round"
	if err := c.Update(ctx, w1); err != nil {
		t.Fatal(err)
	}
	var list examplev2.WidgetList
	if err := c.List(ctx, &list, client.InNamespace(ns.Name)); err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 1 || !slices.Contains(list.Items[0].Spec.Entries, examplev2.Entry{Key: "shape", Value: "round"}) ||
		list.Items[0].ResourceVersion != w1.ResourceVersion {
		t.Errorf("v2 list after a v1 update: %+v, want the shape entry at resourceVersion %s", list.Items, w1.ResourceVersion)
	}

	// The webhook server goes: what needs converting fails, what is
	// read in the stored version does not.
	watcher, err := c.Watch(ctx, &examplev2.WidgetList{}, client.InNamespace(ns.Name), &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: w1.ResourceVersion}})
	if err != nil {
		t.Fatal(err)
	}
	defer watcher.Stop()
	stopWebhooks()
	err = c.Get(ctx, key, &examplev2.Widget{})
	var status apierrors.APIStatus
	// kube-apiserver's etcd store's answer for an object it cannot
	// decode: a corrupt object, whose reason is the converter's error.
	if !errors.As(err, &status) || status.Status().Code != http.StatusInternalServerError || status.Status().Reason != metav1.StatusReasonInternalError ||
		!strings.HasPrefix(status.Status().Message, "Internal error occurred: StorageError: corrupt object, Code: 7, Key: /example.com/widgets/"+ns.Name+"/listed, ") ||
		!strings.Contains(status.Status().Message, ": conversion webhook for example.com/v1, Kind=Widget failed: Post ") {
		t.Errorf("v2 get, webhook down: %v, want 500 InternalError: StorageError: corrupt object, ...: conversion webhook for example.com/v1, Kind=Widget failed: Post ...", err)
	}
	if err := c.Get(ctx, key, w1); err != nil {
		t.Errorf("v1 get, webhook down: %v, want the stored object", err)
	}
	w1.Spec.Data["shape"] = "square"
	if err := c.Update(ctx, w1); err == nil || !strings.Contains(err.Error(), "failed calling webhook") {
		// The v1 admission webhooks are down too: failurePolicy Fail.
		t.Errorf("v1 update, webhooks down: %v, want the admission webhook's failure", err)
	}
	// A write that no webhook admits (the status subresource), in v1:
	// stored, and the v2 watch cannot convert it.
	w1.Status.ConfigMap = "listed-data"
	if err := c.Status().Update(ctx, w1); err != nil {
		t.Fatal(err)
	}
	ev, ok := <-watcher.ResultChan()
	if !ok || ev.Type != watch.Error {
		t.Fatalf("v2 watch, webhook down: %v %v, want an ERROR event", ev.Type, ev.Object)
	}
	// kube-apiserver's etcd watcher's ERROR event: the converter's error
	// as an InternalError.
	if st, _ := ev.Object.(*metav1.Status); st == nil || st.Code != http.StatusInternalServerError || st.Reason != metav1.StatusReasonInternalError ||
		!strings.HasPrefix(st.Message, "Internal error occurred: conversion webhook for example.com/v1, Kind=Widget failed: ") {
		t.Errorf("v2 watch's ERROR event: %+v", ev.Object)
	}
	if _, ok := <-watcher.ResultChan(); ok {
		t.Error("v2 watch goes on after its ERROR event")
	}
}
