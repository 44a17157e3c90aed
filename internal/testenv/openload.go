package testenv

import (
	"sync"
	"testing"
	"time"
)

// OpenLoad calls send rate times a second, each call in a goroutine of its
// own at its tick whatever the earlier ones take (an open load: on a busy
// machine a client that waits for each answer before the next offers less
// than the rate), until the returned stop is called. stop waits for the calls
// under way; it is called again, doing nothing, at t's cleanup.
func OpenLoad(t testing.TB, rate int, send func()) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(time.Second / time.Duration(rate))
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			wg.Go(send)
		}
	})
	var once sync.Once
	stop = func() { once.Do(func() { close(done); wg.Wait() }) }
	t.Cleanup(stop)
	return stop
}
