package tap

import (
	"testing"

	"github.com/informer-walkthrough/informer-walkthrough/check/leakcheck"
)

// TestHoldReporting: a held handler call records Held, then Released
// once the step lets it go, before the informer's call returns; a plain
// Hold records no Released.
func TestHoldReporting(t *testing.T) {
	leakcheck.Verify(t)
	rec := NewRecorder(t.Context())
	isAdd := func(e Event) bool { c, ok := e.(HandlerCall); return ok && c.Method == "OnAdd" }
	g := rec.HoldReporting(1, isAdd)
	h := Handler{Rec: rec, Name: "h"}
	returned := make(chan struct{})
	go func() { defer close(returned); h.OnAdd(cm("a", "1"), false) }()
	got, err := rec.Await(t.Context(), 2)
	if err != nil {
		t.Fatal(err)
	}
	if _, held := got[1].(Held); !held {
		t.Fatalf("recorded %q, want the call, then Held", strs(got))
	}
	select {
	case <-returned:
		t.Fatal("the held call returned before Release")
	default:
	}
	g.Release()
	<-returned
	if got := rec.Drain(); len(got) != 1 {
		t.Fatalf("after Release: %q, want Released", strs(got))
	} else if r, ok := got[0].(Released); !ok || r.Event.(HandlerCall).Handler != "h" {
		t.Errorf("after Release: %#v, want Released of h's call", got[0])
	}

	plain := rec.Hold(1, isAdd)
	go plain.Release()
	h.OnAdd(cm("b", "1"), false)
	for _, e := range rec.Drain() {
		if _, ok := e.(Released); ok {
			t.Errorf("a plain Hold recorded %v", e)
		}
	}
}
