package page

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"io"
	"regexp"
	"strings"
	"testing"
)

func TestMarkerOnceBeforeTheScript(t *testing.T) {
	if n := bytes.Count(html, []byte(Marker)); n != 1 {
		t.Fatalf("page.html holds the marker %d times, want 1", n)
	}
	m := bytes.Index(html, []byte(Marker))
	s := bytes.Index(html, []byte("<script>"))
	if s < m {
		t.Fatalf("the marker must come before the page's script, so that the data is there when it runs")
	}
	got := HTML(`<script>window.TRACE_LIVE = "/events";</script>`)
	if bytes.Contains(got, []byte(Marker)) || !bytes.Contains(got, []byte(`window.TRACE_LIVE = "/events"`)) {
		t.Fatal("HTML did not put the injection in place of the marker")
	}
}

// TestNothingToFetch: the page works offline, so it names nothing to load.
func TestNothingToFetch(t *testing.T) {
	for _, re := range []string{
		`<script[^>]+src=`, `<link[^>]+href="(?:https?:|//)`, `@import`, `url\(`, `<img`, `<iframe`,
		`fetch\(`, `XMLHttpRequest`, `@font-face`,
	} {
		if loc := regexp.MustCompile(re).FindIndex(html); loc != nil {
			t.Errorf("page.html loads something (%s): %q", re, html[loc[0]:min(len(html), loc[1]+40)])
		}
	}
}

func TestOfflineRoundTrip(t *testing.T) {
	trace := []byte(`{"chapter":"05-informer","text":"</script><b>"}`)
	inj := Offline(trace)
	const open = `<script id="trace-data" type="application/gzip+base64">`
	if !strings.HasPrefix(inj, open) || !strings.HasSuffix(inj, `</script>`) {
		t.Fatalf("Offline gave %q", inj)
	}
	b64 := strings.TrimSuffix(strings.TrimPrefix(inj, open), `</script>`)
	z, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		t.Fatal(err)
	}
	r, err := gzip.NewReader(bytes.NewReader(z))
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(r)
	if err != nil || !bytes.Equal(got, trace) {
		t.Fatalf("decoded %q, %v; want %q", got, err, trace)
	}
}

func TestLiveEscapes(t *testing.T) {
	if got := Live("/events"); got != `<script>window.TRACE_LIVE = "/events";</script>` {
		t.Fatalf("Live(/events) = %q", got)
	}
	if got := Live(`/x"</script>`); strings.Count(got, "</script>") != 1 {
		t.Fatalf("Live let a path close the script: %q", got)
	}
}
