package testenv

import (
	"sync/atomic"
	"testing"
	"time"
)

func TestEventuallyReturnsOnceTheConditionHolds(t *testing.T) {
	var asked atomic.Int32
	Eventually(t, 10*time.Second, func() bool { return asked.Add(1) >= 3 }, "the third question")
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

func TestEventuallyFailsAfterItsTimeout(t *testing.T) {
	rec := &failRecorder{TB: t}
	start := time.Now()
	func() {
		defer func() {
			if r := recover(); r != nil && r != rec {
				panic(r)
			}
		}()
		Eventually(rec, 50*time.Millisecond, func() bool { return false }, "never")
	}()
	if !rec.failed.Load() {
		t.Fatal("Eventually returned for a condition that never held")
	}
	if took := time.Since(start); took < 50*time.Millisecond {
		t.Fatalf("gave up after %s, before its timeout (50ms)", took)
	}
}
