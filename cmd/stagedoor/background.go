package main

import "context"

// runInBackground runs work until the returned stop is called; stop waits for
// it to return. The work outlives ctx (SIGTERM), so that it goes on while the
// requests in flight finish: serve stops it after the last one.
func runInBackground(ctx context.Context, work func(context.Context)) (stop func()) {
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	go func() {
		defer close(done)
		work(ctx)
	}()
	return func() {
		cancel()
		<-done
	}
}
