package heap

import "testing"

// TestScale125: a ratio falls in its interval of the 1-2-5 series; 1 is
// "1"; beyond the series, "over".
func TestScale125(t *testing.T) {
	for r, want := range map[float64]string{1: "1", 0.3: "0.2-0.5×", 3.19: "2-5×", 1.5: "1-2×", 500: "over 100×"} {
		if got := Scale125(r); got != want {
			t.Errorf("Scale125(%g) = %q, want %q", r, got, want)
		}
	}
}

// TestReleasePerObject: each cache is released (set to nil) and measured.
func TestReleasePerObject(t *testing.T) {
	got := ReleasePerObject(nil, 1)
	if len(got) != 0 {
		t.Errorf("no caches: %v", got)
	}
	if Live() == 0 {
		t.Error("the live heap is never 0")
	}
}
