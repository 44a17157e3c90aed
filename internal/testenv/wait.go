package testenv

import (
	"testing"
	"time"
)

// WaitUntil waits for cond to hold, looking every few milliseconds, and fails
// the test, naming what it waited for, when it still does not after within.
// A test waits on the condition it needs rather than sleeping for a time a
// loaded machine may not honour.
func WaitUntil(t testing.TB, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited %v for %s", within, what)
		}
		<-tick.C
	}
}
