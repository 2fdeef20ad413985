package show

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestLines: lines arrive in order, sorted on request, and drain; a wait
// that ends with its context says what it was waiting for, and a Send
// after the end never blocks.
func TestLines(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	l := NewLines(ctx)
	l.Send("b")
	l.Sendf("a%d", 1)
	got, err := l.Await(ctx, 2)
	if err != nil || !slices.Equal(got, []string{"b", "a1"}) {
		t.Fatalf("Await = %q, %v", got, err)
	}
	l.Send("z")
	l.Send("y")
	if got, _ := l.AwaitSorted(ctx, 2); !slices.Equal(got, []string{"y", "z"}) {
		t.Errorf("AwaitSorted = %q", got)
	}
	l.Send("left")
	if got := l.Drain(); !slices.Equal(got, []string{"left"}) {
		t.Errorf("Drain = %q", got)
	}

	short, stop := context.WithTimeoutCause(ctx, 10*time.Millisecond, errors.New("stuck"))
	defer stop()
	l.Send("one")
	got, err = l.Await(short, 2)
	if err == nil || err.Error() != `waiting for line 2 of 2 (got ["one"]): stuck` {
		t.Errorf("Await past the deadline = %q, %v", got, err)
	}

	cancel()
	sent := make(chan struct{})
	go func() {
		for range 2000 { // more than the buffer holds
			l.Send("after the end")
		}
		close(sent)
	}()
	select {
	case <-sent:
	case <-time.After(5 * time.Second):
		t.Fatal("Send blocked after the context ended")
	}
}

// TestNextSortedUnder: Next keeps the order the lines came in, Sorted
// sorts them, both print what came before ctx ended and return why;
// Under indents its lines two spaces deeper than its heading.
func TestNextSortedUnder(t *testing.T) {
	ctx := t.Context()
	l := NewLines(ctx)
	var out strings.Builder
	l.Send("b")
	l.Send("a")
	if err := Next(ctx, &out, "", "  ", l, 2); err != nil {
		t.Fatal(err)
	}
	l.Send("d")
	l.Send("c")
	if err := Sorted(ctx, &out, "  sorted:", "    ", l, 2); err != nil {
		t.Fatal(err)
	}
	Under(&out, "  requests:", []string{"GET /x"})
	short, stop := context.WithTimeoutCause(ctx, 10*time.Millisecond, errors.New("stuck"))
	defer stop()
	l.Send("e")
	if err := Next(short, &out, "", "  ", l, 2); err == nil {
		t.Error("Next past the deadline: no error")
	}
	want := "  b\n  a\n  sorted:\n    c\n    d\n  requests:\n    GET /x\n  e\n"
	if out.String() != want {
		t.Errorf("printed %q, want %q", out.String(), want)
	}
}

// TestFrame: the uid masked, the frame cut after the object's
// resourceVersion, each object it leaves closed with … where members
// were dropped; a bookmark (no uid) whole.
func TestFrame(t *testing.T) {
	for _, tc := range []struct{ frame, want string }{{
		`{"type":"ADDED","object":{"kind":"Pod","metadata":{"name":"web-1","uid":"1-2","resourceVersion":"4","labels":{"a":"}"}},"spec":{}}}`,
		`{"type":"ADDED","object":{"kind":"Pod","metadata":{"name":"web-1","uid":…,"resourceVersion":"4",…},…}}`,
	}, {
		`{"type":"ADDED","object":{"kind":"PartialObjectMetadata","metadata":{"name":"web-1","uid":"1-2","resourceVersion":"4","labels":{}}}}`,
		`{"type":"ADDED","object":{"kind":"PartialObjectMetadata","metadata":{"name":"web-1","uid":…,"resourceVersion":"4",…}}}`,
	}, {
		`{"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"4"}}}`,
		`{"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"4"}}}`,
	}} {
		if got := Frame(tc.frame); got != tc.want {
			t.Errorf("Frame(%s)\n = %s\nwant %s", tc.frame, got, tc.want)
		}
	}
}
