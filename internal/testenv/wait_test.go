package testenv

import (
	"sync/atomic"
	"testing"
	"time"
)

func TestWaitForReturnsOnceTheConditionHolds(t *testing.T) {
	var asked atomic.Int32
	WaitFor(t, 10*time.Second, "the third question", func() bool { return asked.Add(1) >= 3 })
	if n := asked.Load(); n != 3 {
		t.Fatalf("asked %d times, want 3: it should stop at the first yes", n)
	}
}

// failRecorder is a testing.TB that records a Fatalf instead of ending the test.
type failRecorder struct {
	testing.TB
	failed atomic.Bool
}

func (f *failRecorder) Helper() {}
func (f *failRecorder) Fatalf(string, ...any) {
	f.failed.Store(true)
	panic(f)
}

func TestWaitForFailsAfterWithin(t *testing.T) {
	rec := &failRecorder{TB: t}
	start := time.Now()
	func() {
		defer func() {
			if r := recover(); r != nil && r != rec {
				panic(r)
			}
		}()
		WaitFor(rec, 50*time.Millisecond, "never", func() bool { return false })
	}()
	if !rec.failed.Load() {
		t.Fatal("WaitFor returned for a condition that never held")
	}
	if took := time.Since(start); took < 50*time.Millisecond {
		t.Fatalf("gave up after %s, before within (50ms)", took)
	}
}
