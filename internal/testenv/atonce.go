package testenv

import "sync"

// AtOnce runs fn(0) … fn(n-1), each in a goroutine of its own, released
// together once all have started, and returns when every one has returned:
// the start of a race.
func AtOnce(n int, fn func(i int)) {
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			fn(i)
		})
	}
	close(start)
	wg.Wait()
}
