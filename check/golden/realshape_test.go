package golden

import (
	"strings"
	"testing"
)

// TestRealShape: numbers may differ on a real cluster; nothing else may,
// and a step that says it is skipped is a problem.
func TestRealShape(t *testing.T) {
	want := []byte("Step 1. Watch\n  ADDED pod/web-1 rv=2\n\nStep 2. Expire\n  ERROR 410 Expired\n")
	same := []byte("Step 1. Watch\n  ADDED pod/web-1 rv=812\n\nStep 2. Expire\n  ERROR 410 Expired\n")
	if p := RealShape(same, want); len(p) != 0 {
		t.Errorf("numbers alone differ, yet: %v", p)
	}
	skipping := []byte("Step 1. Watch\n  ADDED pod/web-1 rv=812\n\nStep 2. Expire\n  skipped on a real cluster: no hook\n")
	if p := RealShape(skipping, want); len(p) != 1 || !strings.Contains(p[0], "says it is skipped") {
		t.Errorf("a skipped step: %v, want one problem that says so", p)
	}
	other := []byte("Step 1. Watch\n  MODIFIED pod/web-1 rv=812\n\nStep 2. Expire\n  ERROR 410 Expired\n")
	if p := RealShape(other, want); len(p) != 1 || !strings.Contains(p[0], "step 1 differs") {
		t.Errorf("a changed line: %v, want one problem for step 1", p)
	}
	if p := RealShape(want[:strings.Index(string(want), "\n\n")], want); len(p) != 1 {
		t.Errorf("a missing step: %v, want one problem", p)
	}
}
