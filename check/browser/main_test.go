package browser

import (
	"os"
	"testing"
)

// TestMain runs the tests with one Chromium for all of them (see Main).
func TestMain(m *testing.M) {
	os.Exit(Main(m))
}
