package testenv

import (
	"testing"
	"time"
)

// WaitFor polls cond until it holds and returns how long that took: every
// millisecond at first, backing off to every 20 ms, so that a cheap condition
// is seen at once and a costly one (a round trip to a cluster) is not asked
// too often. Once within has passed it fails the test, saying what it waited
// for. A within of 0 waits as long as the test binary's -timeout allows: it
// gives up 5 s before the deadline, so that the failure names the condition.
func WaitFor(t testing.TB, within time.Duration, what string, cond func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	deadline, bounded := start.Add(within), within > 0
	if !bounded {
		if d, ok := t.(interface{ Deadline() (time.Time, bool) }); ok {
			deadline, bounded = d.Deadline()
			deadline = deadline.Add(-5 * time.Second)
		}
	}
	for pause := time.Millisecond; !cond(); pause = min(2*pause, 20*time.Millisecond) {
		if bounded && time.Now().After(deadline) {
			if within > 0 {
				t.Fatalf("waited %s for %s", within, what)
			}
			t.Fatalf("gave up waiting for %s (the test's deadline is near)", what)
		}
		time.Sleep(pause)
	}
	return time.Since(start)
}
