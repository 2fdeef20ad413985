package crtap

import (
	"context"
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/informer-walkthrough/informer-walkthrough/internal/tap"
)

// TestReconciler: each call is recorded as it begins, with what the
// reader held, and as it returns; a held return keeps the caller inside
// Reconcile until the step releases it; FailNext fails one call only.
func TestReconciler(t *testing.T) {
	ctx := t.Context()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web"}}
	reader := fake.NewClientBuilder().WithObjects(cm).Build()
	rec := tap.NewRecorder(ctx)
	gate := rec.Hold(1, func(e tap.Event) bool { _, ok := e.(Reconciled); return ok })
	defer gate.Open()
	r := &Reconciler{Rec: rec, Reader: reader, New: func() client.Object { return &corev1.ConfigMap{} },
		Next: reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) {
			return reconcile.Result{}, nil
		})}
	req := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "web"}}

	returned := make(chan error, 1)
	go func() { _, err := r.Reconcile(ctx, req); returned <- err }()
	events, err := rec.Await(ctx, 3)
	if err != nil {
		t.Fatal(err)
	}
	call, ok := events[0].(ReconcileCall)
	if !ok || call.N != 1 || call.Obj == nil || call.Obj.GetName() != "web" {
		t.Fatalf("first event %#v, want ReconcileCall 1 with configmap web", events[0])
	}
	if res, ok := events[1].(Reconciled); !ok || res.N != 1 || res.Err != nil {
		t.Fatalf("second event %#v, want Reconciled 1", events[1])
	}
	if _, ok := events[2].(tap.Held); !ok {
		t.Fatalf("third event %#v, want Held", events[2])
	}
	select {
	case <-returned:
		t.Fatal("Reconcile returned while its return was held")
	default:
	}
	gate.Release()
	if err := <-returned; err != nil {
		t.Fatalf("call 1 returned %v", err)
	}

	flaky := errors.New("flaky")
	r.FailNext(flaky)
	if _, err := r.Reconcile(ctx, req); !errors.Is(err, flaky) {
		t.Errorf("call 2 returned %v, want flaky", err)
	}
	gone := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "gone"}}
	if _, err := r.Reconcile(ctx, gone); err != nil {
		t.Errorf("call 3 returned %v, want nil (FailNext fails one call)", err)
	}
	events, err = rec.Await(ctx, 4)
	if err != nil {
		t.Fatal(err)
	}
	if res := events[1].(Reconciled); res.Err != flaky {
		t.Errorf("call 2 recorded %v, want flaky", res.Err)
	}
	if call := events[2].(ReconcileCall); call.N != 3 || call.Obj != nil {
		t.Errorf("call 3 recorded %#v, want N=3 and nothing read", call)
	}
	if te, _ := events[3].Trace(); te.Text != "gone (call 3) returns" {
		t.Errorf("call 3's trace %q", te.Text)
	}
}
