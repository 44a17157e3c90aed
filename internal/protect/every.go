package protect

import (
	"context"
	"time"
)

// Every calls fn(ctx) every d until ctx ends, the first time d after it is
// called; it returns when ctx ends. A call that overruns d delays the next
// one and the ticks it missed are dropped (time.Ticker), so calls never
// overlap.
func Every(ctx context.Context, d time.Duration, fn func(context.Context)) {
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			fn(ctx)
		}
	}
}
