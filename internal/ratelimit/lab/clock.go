package lab

import (
	"context"
	"fmt"
	"math"
	"time"
)

// redisClock maps this process's clock to Redis's, whose TIME every script
// reads, and measures instants relative to a boundary of it.
type redisClock struct {
	offset   time.Duration // Redis's clock minus this process's
	boundary time.Time     // on Redis's clock
}

// newRedisClock estimates the offset from the fastest of five TIME calls.
func newRedisClock(ctx context.Context, env Env) (*redisClock, error) {
	best := time.Duration(math.MaxInt64)
	c := &redisClock{}
	for range 5 {
		t0 := time.Now()
		rt, err := env.RDB.Time(ctx).Result()
		t1 := time.Now()
		if err != nil {
			return nil, fmt.Errorf("redis TIME: %w", err)
		}
		if rtt := t1.Sub(t0); rtt < best {
			best = rtt
			c.offset = rt.Sub(t0.Add(rtt / 2).Round(0))
		}
	}
	return c, nil
}

// now is the time on Redis's clock.
func (c *redisClock) now() time.Time { return time.Now().Round(0).Add(c.offset) }

// rel is now relative to the boundary.
func (c *redisClock) rel() time.Duration { return c.now().Sub(c.boundary) }

// sleepUntil sleeps until rel() reaches at.
func (c *redisClock) sleepUntil(ctx context.Context, at time.Duration) error {
	d := at - c.rel()
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
