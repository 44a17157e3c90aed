package ratelimit

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/stagedoor/stagedoor/internal/testenv"
)

// After 10,000 distinct keys, allowed, refused and shadowed, every key has a TTL.
func TestEveryKeyHasTTL(t *testing.T) {
	t.Parallel()
	rdb, prefix := sharedRedis(t, 24)
	l, _ := newTestLimiter(rdb, Options{Prefix: prefix, Timeout: 5 * time.Second, Limits: []Definition{
		def(t, "a", "3/1m", Enforce, FailOpen), def(t, "b", "1/1m", Shadow, FailOpen)}})
	var next atomic.Int64
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			for i := next.Add(1); i <= 5000; i = next.Add(1) {
				k := strconv.FormatInt(i, 10)
				for range 1 + i%5 { // up to 5 requests a key: some refused
					l.Allow(context.Background(), Check{Limit: "a", Key: k}, Check{Limit: "b", Key: k})
				}
			}
		})
	}
	wg.Wait()
	if n := count(l, "a", OutcomeFailOpen); n != 0 {
		t.Fatalf("%d decisions failed open", n)
	}
	keys := keysWithPrefix(t, rdb, prefix)
	if len(keys) != 10_000 {
		t.Fatalf("%d keys, want 10000", len(keys))
	}
	cmds := make([]*redis.DurationCmd, len(keys))
	_, err := rdb.Pipelined(context.Background(), func(p redis.Pipeliner) error {
		for i, k := range keys {
			cmds[i] = p.PTTL(context.Background(), k)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range cmds {
		if c.Val() <= 0 {
			t.Fatalf("key %s has PTTL %v", keys[i], c.Val())
		}
	}
	t.Logf("%d keys, every one with a TTL; denied %d, shadow_denied %d", len(keys),
		count(l, "a", OutcomeDenied), count(l, "b", OutcomeShadowDenied))
}

// A TAT beyond now+tau (the clock stepped back since it was written) reads as an
// empty bucket: remaining 0, never negative, and the wait runs to the stored TAT,
// so no token appears sooner; nothing is written by the refusals.
func TestRedisClockStepsBack(t *testing.T) {
	t.Parallel()
	rdb, prefix := sharedRedis(t, 4)
	ctx := context.Background()
	l, _ := newTestLimiter(rdb, Options{Prefix: prefix, Timeout: 5 * time.Second,
		Limits: []Definition{def(t, "back", "10/1m", Enforce, FailOpen)}})
	for _, ahead := range []time.Duration{time.Hour, 65 * time.Second} {
		id := ahead.String()
		key := l.key("back", id)
		tat := redisMicros(t, rdb) + ahead.Microseconds()
		rdb.Set(ctx, key, tat, 2*ahead)
		// The first token is one interval (6 s) past tat − tau (60 s).
		wait := ahead - 60*time.Second + 6*time.Second
		for range 3 {
			d := l.Allow(ctx, Check{Limit: "back", Key: id})
			r := d.Results[0]
			if d.Allowed || r.Remaining != 0 || r.RetryAfter > wait || r.RetryAfter < wait-time.Second {
				t.Fatalf("TAT %v ahead: %+v; want refused, 0 left, retry after ~%v", ahead, r, wait)
			}
			l.SetSetting("back", r.Setting) // clear the denial cache: ask Redis again
		}
		if got := rdb.Get(ctx, key).Val(); got != strconv.FormatInt(tat, 10) {
			t.Fatalf("refusals wrote %s over %d", got, tat)
		}
	}
}

// A client that waits exactly RetryAfter is allowed.
func TestRetryAfterIsTrue(t *testing.T) {
	t.Parallel()
	rdb, prefix := sharedRedis(t, 4)
	l, _ := newTestLimiter(rdb, Options{Prefix: prefix, Timeout: 5 * time.Second,
		Limits: []Definition{def(t, "ra", "10/1s", Enforce, FailOpen)}})
	check := Check{Limit: "ra", Key: "k"}
	for range 10 {
		if d := l.Allow(context.Background(), check); !d.Allowed {
			t.Fatalf("burst refused: %+v", d)
		}
	}
	for round := range 3 {
		d := l.Allow(context.Background(), check)
		if d.Allowed || d.RetryAfter <= 0 || d.RetryAfter > 100*time.Millisecond {
			t.Fatalf("round %d: %+v; want refused, retry within 100ms", round, d)
		}
		time.Sleep(d.RetryAfter)
		if again := l.Allow(context.Background(), check); !again.Allowed {
			t.Fatalf("round %d: waited %v and was refused: %+v", round, d.RetryAfter, again)
		}
	}
}

// A Redis that lost its script cache (a restart, SCRIPT FLUSH) gets the script
// again: EVALSHA answers NOSCRIPT and the script is sent whole.
func TestScriptReloadedAfterFlush(t *testing.T) {
	t.Parallel()
	private := testenv.StartPrivateRedis(t)
	rdb := newClient(t, private.URL, 2)
	l, _ := newTestLimiter(rdb, Options{Limits: []Definition{def(t, "flush", "5/1m", Enforce, FailOpen)}})
	for i := range 3 {
		if err := rdb.ScriptFlush(context.Background()).Err(); err != nil {
			t.Fatal(err)
		}
		d := l.Allow(context.Background(), Check{Limit: "flush", Key: "k"})
		if r := d.Results[0]; r.Outcome != OutcomeAllowed || r.Remaining != 4-i {
			t.Fatalf("after SCRIPT FLUSH: %+v", r)
		}
	}
}
