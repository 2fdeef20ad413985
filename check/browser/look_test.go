package browser

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/informer-walkthrough/informer-walkthrough/internal/trace/page"
)

// TestLook is for a person to look at real pages: with TRACE_PAGES set to a
// glob of --trace files (`go run ./07-controller --trace /tmp/07.html`) and
// TRACE_SHOTS to a directory, it saves screenshots of each page at a third,
// a half and two thirds of its run, and fails on console errors and on text
// that overflows its box. Without TRACE_PAGES it is skipped.
func TestLook(t *testing.T) {
	glob := os.Getenv("TRACE_PAGES")
	if glob == "" {
		t.Skip("TRACE_PAGES is not set: nothing to look at")
	}
	files, err := filepath.Glob(glob)
	if err != nil || len(files) == 0 {
		t.Fatalf("TRACE_PAGES=%q matches no file (%v)", glob, err)
	}
	b := Start(t)
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), filepath.Ext(f))
		// The file's trace, on the page as it is now.
		old, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		const open = `<script id="trace-data" type="application/gzip+base64">`
		i := bytes.Index(old, []byte(open))
		j := bytes.Index(old[max(i, 0):], []byte(`</script>`))
		if i < 0 || j < 0 {
			t.Errorf("%s holds no trace", f)
			continue
		}
		path := filepath.Join(t.TempDir(), name+".html")
		if err := os.WriteFile(path, page.HTML(string(old[i:i+j+len(`</script>`)])), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := b.Open("file://"+path, true); err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		var n int
		if err := b.Eval("tracePage.positions()", &n); err != nil {
			t.Fatal(err)
		}
		for _, share := range []int{33, 50, 67} {
			p := n * share / 100
			if err := b.Eval(fmt.Sprintf("tracePage.seek(%d)", p), new(any)); err != nil {
				t.Fatal(err)
			}
			if err := b.Screenshot(shot(t, fmt.Sprintf("%s-%d.png", name, share))); err != nil {
				t.Fatal(err)
			}
			var over []string
			if err := b.Eval(overflowJS, &over); err != nil {
				t.Fatal(err)
			}
			for _, o := range over {
				t.Errorf("%s at %d%%: %s", name, share, o)
			}
		}
		var d struct{ Min, Max, Mean float64 }
		if err := b.Eval(`(() => { let mn = 1e9, mx = 0, sum = 0; const n = tracePage.positions();
		  for (let p = 0; p < n; p++) { const k = tracePage.inView(p); mn = Math.min(mn, k); mx = Math.max(mx, k); sum += k; }
		  return {Min: mn, Max: mx, Mean: sum / n}; })()`, &d); err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %d positions; boxes wholly in view: %.1f on average (%g to %g)", name, n, d.Mean, d.Min, d.Max)
	}
	for _, e := range b.Errors() {
		t.Errorf("the page logged an error: %s", e)
	}
}

// overflowJS lists the elements whose text is wider or taller than they
// are and that do not say so with an ellipsis or a scroll bar, and the
// page itself when it scrolls.
const overflowJS = `(() => {
  const out = [];
  const de = document.documentElement;
  if (de.scrollWidth > de.clientWidth || de.scrollHeight > de.clientHeight) out.push('the page scrolls: ' + de.scrollWidth + 'x' + de.scrollHeight);
  for (const el of document.querySelectorAll('#top *, #lanes *, #controls *, #details .head, #store-panel h2')) {
    const cs = getComputedStyle(el);
    if (cs.display === 'none' || cs.textOverflow === 'ellipsis' || cs.overflow === 'auto') continue;
    if (el.children.length === 0 && el.scrollWidth > el.clientWidth + 1 && el.clientWidth > 0)
      out.push((el.id || el.className || el.tagName) + ' overflows: ' + el.scrollWidth + ' > ' + el.clientWidth + ' ' + JSON.stringify(el.textContent.slice(0, 60)));
  }
  return out;
})()`
