package ratelimit

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stagedoor/stagedoor/internal/testenv"
)

// fallbackLimiter is a limiter whose Redis never answers, so every Fallback limit
// is decided by its in-process bucket on clock.
func fallbackLimiter(t *testing.T, clock *testenv.Clock, opts Options) *Limiter {
	opts.Clock = clock.Now
	opts.BreakerCooldown = time.Hour
	opts.Timeout = 50 * time.Millisecond
	l, _ := newTestLimiter(newClient(t, testenv.DeadRedisURL(t), 2), opts)
	return l
}

// The in-process bucket: a full burst, then one token an interval, a true
// RetryAfter, and all or nothing across a request's buckets.
func TestLocalBucket(t *testing.T) {
	t.Parallel()
	clock := newFakeClock()
	l := fallbackLimiter(t, clock, Options{Limits: []Definition{
		def(t, "addr", "10/1m", Enforce, Fallback), def(t, "email", "2/1m burst 3", Enforce, Fallback)}})
	ctx := context.Background()
	allow := func(checks ...Check) Decision { return l.Allow(ctx, checks...) }
	for i := range 10 {
		r := allow(Check{Limit: "addr", Key: "a"}).Results[0]
		want := Result{Limit: "addr", Key: "a", Setting: r.Setting, Outcome: OutcomeFallbackAllowed, Allowed: true,
			Remaining: 9 - i, ResetAfter: time.Duration(i+1) * 6 * time.Second}
		if r != want {
			t.Fatalf("request %d: %+v, want %+v", i+1, r, want)
		}
	}
	clock.Add(2 * time.Second)
	d := allow(Check{Limit: "addr", Key: "a"})
	if d.Allowed || d.RetryAfter != 4*time.Second || d.Results[0].ResetAfter != 58*time.Second {
		t.Fatalf("11th: %+v", d)
	}
	clock.Add(d.RetryAfter - time.Microsecond)
	if allow(Check{Limit: "addr", Key: "a"}).Allowed {
		t.Fatal("allowed a microsecond before RetryAfter")
	}
	clock.Add(time.Microsecond)
	if d := allow(Check{Limit: "addr", Key: "a"}); !d.Allowed || d.Results[0].Remaining != 0 {
		t.Fatalf("after exactly RetryAfter: %+v", d)
	}

	// All or nothing: email (3 tokens) refuses the 4th request and addr, which
	// would allow it, keeps its token.
	both := []Check{{Limit: "addr", Key: "b"}, {Limit: "email", Key: "b"}}
	for i := range 3 {
		if d := allow(both...); !d.Allowed || d.Results[0].Remaining != 9-i {
			t.Fatalf("request %d: %+v", i+1, d)
		}
	}
	for range 3 {
		d := allow(both...)
		if d.Allowed || !d.Results[0].Allowed || d.Results[0].Remaining != 7 || d.Results[1].Outcome != OutcomeFallbackDenied {
			t.Fatalf("refused by email: %+v", d)
		}
	}
	if d := allow(both[0]); d.Results[0].Remaining != 6 {
		t.Fatalf("addr alone: %+v, want 6 left", d)
	}
}

// A clock that steps back never drives remaining negative; the bucket it leaves
// owing more than a full bucket passes one request, then refills at its rate.
func TestLocalClockStepsBack(t *testing.T) {
	t.Parallel()
	clock := newFakeClock()
	l := fallbackLimiter(t, clock, Options{Limits: []Definition{def(t, "addr", "10/1m", Enforce, Fallback)}})
	check := Check{Limit: "addr", Key: "a"}
	allowed := 0
	for range 10 {
		if l.Allow(context.Background(), check).Allowed {
			allowed++
		}
	}
	if allowed != 10 {
		t.Fatalf("%d of a full bucket's 10 allowed", allowed)
	}
	clock.Add(30 * time.Second) // 5 tokens earned
	if d := l.Allow(context.Background(), check); !d.Allowed || d.Results[0].Remaining != 4 {
		t.Fatalf("30 s later: %+v", d)
	}
	clock.Add(-time.Hour) // the clock steps back an hour
	if d := l.Allow(context.Background(), check); !d.Allowed || d.Results[0].Remaining != 0 {
		t.Fatalf("after the step back: %+v, want the one token of a clamped bucket", d.Results[0])
	}
	for range 3 {
		d := l.Allow(context.Background(), check)
		if r := d.Results[0]; d.Allowed || r.Remaining != 0 || r.RetryAfter != 6*time.Second {
			t.Fatalf("after the step back: %+v, want refused for one interval", r)
		}
	}
}

// 50 goroutines race for the 100 tokens of one bucket: exactly 100 win.
func TestLocalBucketRace(t *testing.T) {
	t.Parallel()
	l := fallbackLimiter(t, newFakeClock(), Options{Limits: []Definition{def(t, "addr", "100/1h", Enforce, Fallback)}})
	var won atomic.Int64
	var wg sync.WaitGroup
	for range 50 {
		wg.Go(func() {
			for range 10 {
				if l.Allow(context.Background(), Check{Limit: "addr", Key: "one"}).Allowed {
					won.Add(1)
				}
			}
		})
	}
	wg.Wait()
	if won.Load() != 100 {
		t.Fatalf("%d allowed, want 100", won.Load())
	}
}

// The in-process buckets stay within their bound; full ones go first.
func TestLocalBucketsBounded(t *testing.T) {
	t.Parallel()
	b := newLocalBuckets(100)
	iv, tau := PerMinute(10).gcra()
	now := int64(0)
	for i := range 1000 {
		b.take([]bucket{{key: strconv.Itoa(i), interval: iv, tau: tau, enforce: true}}, now, false)
		if b.len() > 100 {
			t.Fatalf("%d buckets, bound 100", b.len())
		}
	}
	// Spend a key hard, let the others fill up, and add new keys: the busy bucket
	// stays, the full ones go.
	busy := []bucket{{key: "busy", interval: iv, tau: tau, enforce: true}}
	for range 10 {
		b.take(busy, now, false)
	}
	now += 5 * iv // every one-token bucket is full again; busy has 5 tokens
	for i := range 50 {
		b.take([]bucket{{key: "new" + strconv.Itoa(i), interval: iv, tau: tau, enforce: true}}, now, false)
	}
	if v := b.take(busy, now, false)[0]; v.remaining != 4 {
		t.Fatalf("the busy bucket was evicted: %+v", v)
	}
}

func TestDenialsBounded(t *testing.T) {
	t.Parallel()
	c := newDenials(160)
	for i := range 10_000 {
		c.put(strconv.Itoa(i), denial{until: 100, reset: 200}, 0)
	}
	if n := c.len(); n > 160 {
		t.Fatalf("%d denials held, bound 160", n)
	}
	if _, ok := c.get("9999", 0); !ok {
		t.Fatal("the latest denial is missing")
	}
	if _, ok := c.get("9999", 100); ok {
		t.Fatal("a denial outlived its time")
	}
}
