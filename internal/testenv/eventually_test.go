package testenv

import (
	"testing"
	"time"
)

func TestPollStopsAtTheConditionOrTheTimeout(t *testing.T) {
	t.Parallel()
	calls := 0
	if !Poll(time.Second, time.Millisecond, func() bool { calls++; return calls == 3 }) || calls != 3 {
		t.Errorf("Poll of a condition true at the third call: %d calls", calls)
	}
	start := time.Now()
	if Poll(30*time.Millisecond, 5*time.Millisecond, func() bool { return false }) {
		t.Error("Poll of a condition never true reported true")
	}
	if waited := time.Since(start); waited < 30*time.Millisecond {
		t.Errorf("Poll gave up after %v, before its timeout of 30ms", waited)
	}
}

func TestPollTick(t *testing.T) {
	t.Parallel()
	for timeout, want := range map[time.Duration]time.Duration{
		100 * time.Millisecond: 2 * time.Millisecond,
		2 * time.Second:        20 * time.Millisecond,
		time.Minute:            100 * time.Millisecond,
	} {
		if got := PollTick(timeout); got != want {
			t.Errorf("PollTick(%v) = %v, want %v", timeout, got, want)
		}
	}
}
