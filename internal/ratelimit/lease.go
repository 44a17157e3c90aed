package ratelimit

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// Token leasing, for a limit whose keys are hot (Policy Leased).
//
// hold-organizer on a big on-sale is one key that every buyer's hold passes: one
// bucket in Redis, one Cluster shard, thousands of decisions a second. A leased
// limit takes that key's tokens from Redis a batch at a time (leaseScript: the
// same GCRA bucket, its TAT moved on by one interval a token) and spends them in
// process, so that the key sees one Redis call per batch instead of one per
// request.
//
// What it costs, and why it stays within the limit:
//   - No token is ever spent that the bucket in Redis did not give: leasing
//     cannot let through more than the limit over any window longer than the
//     lease's hold. Within one, a token leased at t may be spent up to leaseHold
//     later, so the busiest instant can see up to one batch an instance more
//     than a bucket decided request by request would.
//   - A token leased and not spent is given back to Redis (refundScript) when
//     its lease runs out unused or the limit's setting changes; until then the
//     other instances see it as spent. With a batch of a few tens of
//     milliseconds' tokens, the global rate over a second stays within 1 % of
//     the limit's (TestLeasedLimitHoldsTheGlobalRate).
//   - A lease that gets no token refuses, and the denial cache remembers it
//     until a batch has accrued (leaseWindow at most): so a drained hot key
//     costs a Redis call a batch, not one a token, and a refused client is told
//     to come back up to leaseWindow later than the next token would let it.
//   - The limit is decided before the request's other limits; if one of those
//     refuses, the leased token goes back to this instance's lease, without a
//     Redis call, so a refused request still costs no token.
const (
	// leaseWindow is how much of the limit's rate one lease takes: a batch is
	// the tokens that accrue in leaseWindow, at most a tenth of the burst.
	leaseWindow = 20 * time.Millisecond
	// leaseHold is how long leased tokens may be spent; what is left after it
	// is given back.
	leaseHold = 500 * time.Millisecond
)

// leases is one leased limit's tokens on this instance, per key, under one
// setting (SetSetting makes new ones and closes the old). Safe for concurrent use.
type leases struct {
	l                    *Limiter
	name                 Name
	interval, tau, batch int64 // µs, µs, tokens a lease asks for
	max                  int   // keys kept at most

	mu     sync.Mutex // guards keys; taken before a lease's own mu, never after
	keys   map[string]*lease
	closed atomic.Bool
}

// lease is the tokens this instance holds of one key. mu is held while a batch
// is fetched, so that one fetch serves the requests that queue behind it.
type lease struct {
	mu      sync.Mutex
	tokens  int64 // leased and not yet spent
	expires int64 // µs on the limiter's clock; the tokens are given back after it
	left    int64 // tokens the bucket in Redis held after the last lease
	full    int64 // µs on the limiter's clock when that bucket is full again
	refused int64 // µs on the limiter's clock until which a lease is not asked for again
}

// newLeases returns the leases of a limit under lim, or nil when a batch would
// be a single token (a slow limit, such as 10/1m, is never hot enough to need it).
func newLeases(l *Limiter, name Name, lim Limit, max int) *leases {
	iv, tau := lim.gcra()
	batch := min(int64(leaseWindow/time.Microsecond)/iv, tau/iv/10)
	if batch < 2 {
		return nil
	}
	return &leases{l: l, name: name, interval: iv, tau: tau, batch: batch, max: max, keys: make(map[string]*lease)}
}

// leaseVerdict is what a lease says about one request.
type leaseVerdict struct {
	allowed   bool
	failed    bool  // Redis could not answer: the limit's policy decides
	remaining int64 // tokens left: this lease's and, when it was taken, Redis's
	retry     int64 // µs until a token can exist, when refused
	reset     int64 // µs until the bucket is full
}

// take spends one token of key's lease, leasing a batch from Redis (the bucket
// at redisKey) when the lease is empty or has run out. now is the limiter's clock.
func (ls *leases) take(ctx context.Context, key, redisKey string, now int64) leaseVerdict {
	e := ls.entry(key, now)
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.tokens > 0 && e.expires > now {
		e.tokens--
		return leaseVerdict{allowed: true, remaining: e.left + e.tokens, reset: max(0, e.full-now)}
	}
	if now < e.refused { // the requests that queued behind a fetch that got nothing
		return leaseVerdict{retry: e.refused - now, reset: max(0, e.full-now)}
	}
	if e.tokens > 0 { // ran out unused: give them back before asking for more
		ls.giveBack(redisKey, e.tokens)
		e.tokens = 0
	}
	want := ls.batch
	if ls.closed.Load() {
		want = 1 // a setting has replaced this one: keep nothing back
	}
	var rnow, stored, got int64
	err := ls.l.nodes.For(ctx, redisKey).Do(ctx, func(rctx context.Context) error {
		var err error
		rnow, stored, got, err = leaseTake(rctx, ls.l.rdb, redisKey, ls.interval, ls.tau, want)
		return err
	})
	if err != nil {
		return leaseVerdict{failed: true}
	}
	base := max(stored, rnow)
	if base > rnow+ls.tau {
		base = rnow + ls.tau - ls.interval
	}
	if got == 0 {
		// Refused until a batch has accrued, not one token: on a drained hot key,
		// asking for every token as it appears would cost a Redis call each.
		retry := max(0, base+ls.batch*ls.interval-ls.tau-rnow)
		e.refused, e.full = now+retry, now+base-rnow
		return leaseVerdict{retry: retry, reset: max(0, base-rnow)}
	}
	tat := base + got*ls.interval // the bucket's TAT after the lease
	e.tokens, e.expires = got-1, now+int64(leaseHold/time.Microsecond)
	e.left, e.full = (rnow+ls.tau-tat)/ls.interval, now+tat-rnow
	return leaseVerdict{allowed: true, remaining: e.left + e.tokens, reset: tat - rnow}
}

// putBack returns a token that take gave to a request that another limit then
// refused. It goes back to the lease, not to Redis.
func (ls *leases) putBack(key string) {
	ls.mu.Lock()
	e := ls.keys[key]
	ls.mu.Unlock()
	if e == nil {
		return
	}
	e.mu.Lock()
	e.tokens++
	e.mu.Unlock()
}

// entry returns key's lease, making it; when the map is full it first drops the
// leases that have run out, giving their tokens back.
func (ls *leases) entry(key string, now int64) *lease {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if e := ls.keys[key]; e != nil {
		return e
	}
	if len(ls.keys) >= ls.max {
		for k, e := range ls.keys {
			if e.mu.TryLock() {
				if e.expires <= now {
					ls.giveBack(ls.l.key(ls.name, k), e.tokens)
					e.tokens = 0
					delete(ls.keys, k)
				}
				e.mu.Unlock()
			}
		}
	}
	e := &lease{}
	if len(ls.keys) < ls.max {
		ls.keys[key] = e
	}
	return e
}

// close gives every unspent token back to Redis; the leases are then no longer
// kept (a request that still holds them leases one token at a time).
func (ls *leases) close() {
	ls.closed.Store(true)
	ls.mu.Lock()
	defer ls.mu.Unlock()
	for k, e := range ls.keys {
		e.mu.Lock()
		ls.giveBack(ls.l.key(ls.name, k), e.tokens)
		e.tokens = 0
		e.mu.Unlock()
	}
	clear(ls.keys)
}

// giveBack returns n tokens to the bucket at redisKey, in the background.
func (ls *leases) giveBack(redisKey string, n int64) {
	if n <= 0 {
		return
	}
	l := ls.l
	l.background.Go(func() {
		ctx := context.Background()
		_ = l.nodes.For(ctx, redisKey).Do(ctx, func(rctx context.Context) error {
			return giveBack(rctx, l.rdb, redisKey, n, ls.interval)
		})
	})
}

// Wait waits for the tokens being given back to Redis (a leased limit's, after a
// setting change) to be given back.
func (l *Limiter) Wait() { l.background.Wait() }
