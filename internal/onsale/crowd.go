package onsale

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/stagedoor/stagedoor/internal/conn"
)

// crowd plays the pollers beside the sale, in phases whose Redis cost is
// measured apart (with RedisURL):
//
//  1. joins: every poller joins, spread over half the time left before the
//     quiet end (3 spreads before the opening, when the first buyers and the
//     bots may come); nothing else of the run sends meanwhile but the buyers
//     who arrive that early;
//  2. polls: then they poll at the page's cadence, until the quiet end;
//  3. the sale: everything, until the last buyer is done (the pollers still
//     waiting then are cut).
type crowd struct {
	p      *pollers
	rdb    redis.UniversalClient
	rec    *recorder
	cancel context.CancelFunc
	done   chan struct{}

	stats PollerStats // once done
	saleS redisSnapshot
	polls int64 // the pollers' polls when the sale phase began
	total int64 // the recorder's requests then
}

// startCrowd starts the pollers, or returns nil when there are none.
func startCrowd(ctx context.Context, o Options, sale Sale, accts accounts, rec *recorder) *crowd {
	if len(accts.pollers) == 0 {
		return nil
	}
	ctx, cancel := context.WithCancel(ctx)
	c := &crowd{p: newPollers(o, sale, accts.pollers), rec: rec, cancel: cancel, done: make(chan struct{})}
	if o.RedisURL != "" {
		rdb, err := conn.Redis(ctx, o.RedisURL, nil)
		if err != nil {
			c.stats.RedisNote = err.Error()
		} else {
			c.rdb = rdb
		}
	}
	go c.run(ctx, o, sale)
	return c
}

func (c *crowd) snapshot(ctx context.Context) (redisSnapshot, bool) {
	if c.rdb == nil {
		return redisSnapshot{}, false
	}
	s, err := snapshotRedis(context.WithoutCancel(ctx), c.rdb)
	if err != nil {
		c.stats.RedisNote = err.Error()
		return redisSnapshot{}, false
	}
	return s, true
}

func (c *crowd) run(ctx context.Context, o Options, sale Sale) {
	defer close(c.done)
	quiet := sale.OnSaleAt.Add(-3 * o.Spread)
	window := max(0, time.Until(quiet)/2)
	tokens := make([]string, len(c.p.sessions))

	s0, ok0 := c.snapshot(ctx)
	c.p.join(ctx, window, tokens)
	s1, ok1 := c.snapshot(ctx)
	if ok0 && ok1 {
		c.stats.Redis = append(c.stats.Redis, phase("joins", s0, s1, c.p.joins.Load()))
	}

	waited := make(chan struct{})
	go func() {
		c.p.wait(ctx, tokens, o.Seed)
		close(waited)
	}()
	polls0 := c.p.polls.Load()
	switch {
	case time.Until(quiet) <= 0:
		c.stats.RedisNote = fmt.Sprintf("no quiet time left for polls alone: the joins ended %.1f s after 3 spreads before the opening; give a longer -lead",
			-time.Until(quiet).Seconds())
	case sleep(ctx, time.Until(quiet)):
		if s2, ok2 := c.snapshot(ctx); ok1 && ok2 {
			c.stats.Redis = append(c.stats.Redis, phase("polls before the draw", s1, s2, c.p.polls.Load()-polls0))
		}
	}
	c.saleS, _ = c.snapshot(ctx)
	c.polls, c.total = c.p.polls.Load(), c.rec.total.Load()
	<-waited
}

// finish cuts the pollers still waiting, and returns what they did with the
// sale phase's Redis cost (from when the polls alone ended to now).
func (c *crowd) finish(ctx context.Context) PollerStats {
	c.cancel()
	<-c.done
	end, ok := c.snapshot(ctx)
	note, redisPhases := c.stats.RedisNote, c.stats.Redis
	c.stats = c.p.stats()
	c.stats.RedisNote, c.stats.Redis = note, redisPhases
	if ok && !c.saleS.at.IsZero() {
		requests := c.p.polls.Load() - c.polls + c.rec.total.Load() - c.total
		c.stats.Redis = append(c.stats.Redis, phase("the sale (every request)", c.saleS, end, requests))
	}
	if c.rdb != nil {
		_ = c.rdb.Close()
	}
	return c.stats
}
