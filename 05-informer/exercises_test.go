package main

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/informer-walkthrough/informer-walkthrough/internal/cachecopy"
	"github.com/informer-walkthrough/informer-walkthrough/internal/show"
)

// The checks of the exercises in exercises.go. Each is skipped while
// its function still returns errors.ErrUnsupported.

// notWritten skips t if err says the exercise is not written yet.
func notWritten(t *testing.T, err error, exercise string) {
	t.Helper()
	if errors.Is(err, errors.ErrUnsupported) {
		t.Skipf("%s is not written yet: write it in exercises.go "+
			"(reference answer: go test -tags solution ./05-informer -run Exercise)",
			exercise)
	}
}

// TestExercise1DeletedConfigMap feeds deletedConfigMap everything an
// OnDelete can get, then uses it in step 4's informer-in-memory, where
// a relist that misses an object hands OnDelete a tombstone.
func TestExercise1DeletedConfigMap(t *testing.T) {
	web := demo("web", "7")
	_, _, err := deletedConfigMap(web)
	notWritten(t, err, "deletedConfigMap")

	for _, tc := range []struct {
		name string
		obj  any
		key  string
		last *corev1.ConfigMap
		fail bool
	}{
		{"the object", web, "demo/web", web, false},
		{"a tombstone with the last state",
			cache.DeletedFinalStateUnknown{Key: "demo/web", Obj: web},
			"demo/web", web, false},
		{"a tombstone without it",
			cache.DeletedFinalStateUnknown{Key: "demo/gone"},
			"demo/gone", nil, false},
		{"not a ConfigMap", &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
			Namespace: "demo", Name: "web"}}, "", nil, true},
		{"nil", nil, "", nil, true},
	} {
		key, last, err := deletedConfigMap(tc.obj)
		switch {
		case tc.fail && err == nil:
			t.Errorf("%s: no error, want one", tc.name)
		case !tc.fail && (err != nil || key != tc.key || last != tc.last):
			t.Errorf("%s: got %q, %s, %v; want %q, %s, nil", tc.name,
				key, showCM(last), err, tc.key, showCM(tc.last))
		}
	}

	// Step 4's machine: a RealFIFO and processDeltas. The relist to []
	// misses b, deleted meanwhile: OnDelete gets a tombstone.
	store := cache.NewStore(cache.DeletionHandlingMetaNamespaceKeyFunc)
	fifo := cache.NewRealFIFOWithOptions(cachecopy.QueueOptions(&corev1.ConfigMap{}, cache.MetaNamespaceKeyFunc, store))
	var got []string
	h := cache.ResourceEventHandlerFuncs{DeleteFunc: func(obj any) {
		key, last, err := deletedConfigMap(obj)
		got = append(got, fmt.Sprintf("%s %s %v", key, showCM(last), err))
	}}
	for _, call := range []func() error{
		func() error { return fifo.Replace([]any{demo("a", "10"), demo("b", "11")}, "11") },
		func() error { return fifo.Delete(demo("a", "12")) },
		func() error { return fifo.Replace(nil, "14") },
	} {
		if err := call(); err != nil {
			t.Fatal(err)
		}
		if _, err := fifo.Pop(func(obj any, initial bool) error {
			return cachecopy.ProcessDeltas(h, store, obj.(cache.Deltas), initial, cache.DeletionHandlingMetaNamespaceKeyFunc)
		}); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{
		"demo/a configmap/a rv=12 <nil>", // seen deleted: the final state
		"demo/b configmap/b rv=11 <nil>", // missed: the last state cached
	}
	if !slices.Equal(got, want) {
		t.Errorf("OnDelete saw\n %q\nwant\n %q", got, want)
	}
}

// showCM is show.Describe for a ConfigMap that may be nil.
func showCM(cm *corev1.ConfigMap) string {
	if cm == nil {
		return "nil"
	}
	return show.Describe(cm)
}
