package show

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
)

// TestNames: objects, a tombstone and a list's items by value are named,
// sorted; what has no metadata is left out.
func TestNames(t *testing.T) {
	pod := func(name string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}}
	}
	objs := []any{pod("b"), cache.DeletedFinalStateUnknown{Key: "ns/c", Obj: pod("c")}, pod("a"), "not an object"}
	if got, want := Names(objs), []string{"a", "b", "c"}; !slices.Equal(got, want) {
		t.Errorf("Names(objects) = %q, want %q", got, want)
	}
	items := []corev1.Pod{*pod("y"), *pod("x")}
	if got, want := Names(items), []string{"x", "y"}; !slices.Equal(got, want) {
		t.Errorf("Names(items) = %q, want %q", got, want)
	}
	if got := Names([]any{}); got == nil || len(got) != 0 {
		t.Errorf("Names(none) = %#v, want an empty, non-nil slice", got)
	}
}
