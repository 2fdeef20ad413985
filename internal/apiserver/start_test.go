package apiserver

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestFirstStartTime measures Start and a first write as the first ones of
// a process: run it alone (go test -count=1 -run TestFirstStartTime -v)
// for a cold figure. The budget is 300 ms for the first start in
// a process; later starts take a millisecond or two. The first write pays
// for the schemas its field manager reads, once per process.
func TestFirstStartTime(t *testing.T) {
	for i := range 3 {
		t0 := time.Now()
		s, err := Start(Options{})
		if err != nil {
			t.Fatal(err)
		}
		started := time.Since(t0)
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "default"}}
		if _, err := s.store.create(context.Background(), namespacesResource(), "", "test", ns, false); err != nil {
			t.Fatal(err)
		}
		written := time.Since(t0)
		_ = s.Close()
		t.Logf("start %d: %v, with a first write %v", i, started, written)
		if i == 0 && written > 300*time.Millisecond && !raceEnabled {
			t.Errorf("the first start and write took %v, over the 300 ms budget", written)
		}
	}
}
