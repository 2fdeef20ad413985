package show

import (
	"context"
	"errors"
	"slices"
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
