package testenv

import (
	"fmt"
	"net/http"
	"testing"
	"time"
)

// Poll calls cond at once and then every tick until it reports true, or until
// timeout has passed since the call; it reports whether cond held. The tick
// is the pace of the polling, not a timeout: a slow cond only makes it later.
func Poll(timeout, tick time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	ticker := time.NewTicker(tick)
	defer ticker.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		<-ticker.C
	}
	return true
}

// Eventually polls cond (see Poll) until it reports true and returns how long
// that took; it fails t, naming what it waited for, when timeout passes
// first. It polls every hundredth of the timeout, between 2 ms and 100 ms. A
// timeout of 0 waits as long as the test binary's -timeout allows: it gives
// up 5 s before the deadline, so that the failure names the condition.
func Eventually(t testing.TB, timeout time.Duration, cond func() bool, what string) time.Duration {
	t.Helper()
	start := time.Now()
	if timeout <= 0 {
		timeout = time.Hour
		if d, ok := t.(interface{ Deadline() (time.Time, bool) }); ok {
			if deadline, bounded := d.Deadline(); bounded {
				timeout = time.Until(deadline) - 5*time.Second
			}
		}
		if !Poll(timeout, 20*time.Millisecond, cond) {
			t.Fatalf("gave up waiting for %s (the test's deadline is near)", what)
		}
		return time.Since(start)
	}
	if !Poll(timeout, PollTick(timeout), cond) {
		t.Fatalf("not within %v: %s", timeout, what)
	}
	return time.Since(start)
}

// EventuallyNil is Eventually for a check that says why it does not hold yet:
// it polls until check returns nil, and the failure names the last error.
func EventuallyNil(t testing.TB, timeout time.Duration, check func() error, what string) {
	t.Helper()
	var last error
	if !Poll(timeout, PollTick(timeout), func() bool { last = check(); return last == nil }) {
		t.Fatalf("not within %v: %s: %v", timeout, what, last)
	}
}

// PollTick is the pace Eventually polls at for a timeout: a hundredth of it,
// between 2 ms and 100 ms.
func PollTick(timeout time.Duration) time.Duration {
	return min(max(timeout/100, 2*time.Millisecond), 100*time.Millisecond)
}

// GetOK is a check for EventuallyNil: nil once GET url answers 200, else the
// error or the status it answered.
func GetOK(url string) func() error {
	return func() error {
		resp, err := http.Get(url)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("GET %s = %d", url, resp.StatusCode)
		}
		return nil
	}
}
