package leakcheck

import (
	"testing"

	"go.uber.org/goleak"
)

// fakeT records failures instead of failing, to test the check itself.
type fakeT struct {
	testing.TB
	cleanups []func()
	failed   bool
}

func (f *fakeT) Helper()               {}
func (f *fakeT) Cleanup(fn func())     { f.cleanups = append(f.cleanups, fn) }
func (f *fakeT) Errorf(string, ...any) { f.failed = true }
func (f *fakeT) Error(...any)          { f.failed = true }
func (f *fakeT) Fatalf(string, ...any) { f.failed = true }
func (f *fakeT) Name() string          { return "fake" }
func (f *fakeT) Logf(string, ...any)   {}
func (f *fakeT) runCleanups() {
	for i := len(f.cleanups) - 1; i >= 0; i-- {
		f.cleanups[i]()
	}
}

// TestVerifyCatchesALeak: the check must be able to fail.
func TestVerifyCatchesALeak(t *testing.T) {
	stop := make(chan struct{})
	defer func() {
		close(stop)
		goleak.VerifyNone(t)
	}()
	f := &fakeT{TB: t}
	Verify(f)
	go func() { <-stop }() // the leak
	f.runCleanups()
	if !f.failed {
		t.Fatal("Verify did not report a leaked goroutine")
	}
}

func TestVerifyPassesWithoutLeak(t *testing.T) {
	f := &fakeT{TB: t}
	Verify(f)
	done := make(chan struct{})
	go func() { close(done) }()
	<-done
	f.runCleanups()
	if f.failed {
		t.Fatal("Verify reported a leak where there was none")
	}
}
