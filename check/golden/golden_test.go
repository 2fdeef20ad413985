package golden

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRegions: a region is the lines between its markers, without nested
// markers, dedented; unbalanced markers are errors, not silently empty.
func TestRegions(t *testing.T) {
	dir := t.TempDir()
	src := "package x\n\nfunc f() {\n\t// !+outer\n\ta := 1\n\t// !+inner\n\tif a > 0 {\n\t\ta++\n\t}\n\t// !-inner\n\n\t_ = a\n\t// !-outer\n}\n"
	if err := os.WriteFile(filepath.Join(dir, "x.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := Regions(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"outer": "a := 1\nif a > 0 {\n\ta++\n}\n\n_ = a\n",
		"inner": "if a > 0 {\n\ta++\n}\n",
	}
	for name, w := range want {
		if got[name] != w {
			t.Errorf("region %s = %q, want %q", name, got[name], w)
		}
	}
	for _, bad := range []string{"// !+a\nx\n", "// !-a\n", "// !+a\n// !-a\n// !+a\n// !-a\n"} {
		if err := os.WriteFile(filepath.Join(dir, "x.go"), []byte(bad), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := Regions(dir); err == nil || !strings.Contains(err.Error(), "region") {
			t.Errorf("Regions(%q) error = %v, want one about the region", bad, err)
		}
	}
}
