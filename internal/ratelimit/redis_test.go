package ratelimit

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/stagedoor/stagedoor/internal/testenv"
)

// Three instances, each with its own Redis client and 20 goroutines, race for one
// key limited to 500/1s for 5 s. The bucket starts full, so over an elapsed time E
// it can allow at most burst + rate·E; with every token contended, it should allow
// all of them (within 1%).
func TestRaceThreeInstances(t *testing.T) {
	t.Parallel()
	const instances, workers, run = 3, 20, 5 * time.Second
	prefix := testenv.RedisPrefix(t)
	lims, counters := countedInstances(t, instances, workers, func() Options {
		// A generous deadline: this test is about atomicity, and a fail_open under
		// the race detector's load would spoil the count.
		return Options{Prefix: prefix, Timeout: 5 * time.Second,
			Limits: []Definition{def(t, "race", "500/1s", Enforce, FailOpen)}}
	})
	// Warm up: every connection dialled and the script loaded before the clock
	// starts, so that the first timed call is an ordinary one.
	var warm sync.WaitGroup
	for i, lim := range lims {
		for range workers {
			warm.Go(func() { lim.Allow(context.Background(), Check{Limit: "race", Key: "warm" + strconv.Itoa(i)}) })
		}
	}
	warm.Wait()
	h := hammer(lims, "race", "one", workers, run)
	for _, lim := range lims {
		if n := count(lim, "race", OutcomeFailOpen); n != 0 {
			t.Fatalf("%d decisions failed open; the count means nothing", n)
		}
	}
	var redisCalls int64
	for _, c := range counters {
		redisCalls += c.Calls()
	}
	bound := 500 + 500*h.elapsed.Seconds()
	got := float64(h.allowed)
	t.Logf("3 instances × 20 goroutines, 500/1s for %v: %d decisions (%d reached Redis, the rest refused from the denial cache), %.0f allowed, bound burst+rate·elapsed = %.1f (%.2f%%)",
		h.elapsed, h.decisions, redisCalls, got, bound, 100*got/bound)
	if got > bound {
		t.Fatalf("allowed %.0f > bound %.1f", got, bound)
	}
	if got < 0.99*bound {
		t.Fatalf("allowed %.0f < 99%% of bound %.1f", got, bound)
	}
}

// hammered is what hammer saw: the decisions made, those allowed, and the span
// from the start of the first call to the end of the last allowed one, which
// contains every allowed decision as Redis timed it.
type hammered struct {
	decisions, allowed int64
	elapsed            time.Duration
}

// hammer has workers goroutines a limiter decide on one key of limit for run,
// all starting at once.
func hammer(lims []*Limiter, limit Name, key string, workers int, run time.Duration) hammered {
	base := time.Now()
	var allowed, calls atomic.Int64
	first, lastAllowed := atomic.Int64{}, atomic.Int64{}
	first.Store(int64(time.Hour))
	gate := make(chan struct{})
	var wg sync.WaitGroup
	for _, lim := range lims {
		for range workers {
			wg.Go(func() {
				<-gate
				for time.Since(base) < run {
					start := int64(time.Since(base))
					d := lim.Allow(context.Background(), Check{Limit: limit, Key: key})
					end := int64(time.Since(base))
					calls.Add(1)
					casMin(&first, start)
					if d.Allowed {
						allowed.Add(1)
						casMax(&lastAllowed, end)
					}
				}
			})
		}
	}
	close(gate)
	wg.Wait()
	return hammered{decisions: calls.Load(), allowed: allowed.Load(), elapsed: time.Duration(lastAllowed.Load() - first.Load())}
}

func casMin(a *atomic.Int64, v int64) {
	for old := a.Load(); v < old && !a.CompareAndSwap(old, v); old = a.Load() {
	}
}

func casMax(a *atomic.Int64, v int64) {
	for old := a.Load(); v > old && !a.CompareAndSwap(old, v); old = a.Load() {
	}
}

// The most requests allowed in any sliding one-second window, timed by Redis's
// clock (the script returns it), stays at most burst + rate.
func TestBoundarySlidingWindow(t *testing.T) {
	t.Parallel()
	rdb, prefix := sharedRedis(t, 24)
	lim, _ := ParseLimit("200/1s burst 100")
	iv, tau := lim.gcra()
	b := []bucket{{key: prefix + "rl:{edge:1}", interval: iv, tau: tau, enforce: true}}
	var mu sync.Mutex
	var times []int64
	deadline := time.Now().Add(2200 * time.Millisecond)
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			for time.Now().Before(deadline) {
				now, vs, err := take(context.Background(), rdb, b)
				if err != nil {
					t.Error(err)
					return
				}
				if vs[0].allowed {
					mu.Lock()
					times = append(times, now)
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	slices.Sort(times)
	most, lo := 0, 0
	for hi := range times {
		for times[hi]-times[lo] >= 1_000_000 {
			lo++
		}
		most = max(most, hi-lo+1)
	}
	t.Logf("200/1s burst 100: %d allowed in 2.2 s, most in any 1 s window %d (bound burst+rate = 300)", len(times), most)
	if most > 300 {
		t.Fatalf("%d allowed in one second, bound 300", most)
	}
	if most < 280 {
		t.Fatalf("only %d allowed in the busiest second: the test did not saturate the bucket", most)
	}
}

// allOrNothing checks, on rdb with opts, that a request allowed by bucket wide
// and refused by bucket narrow leaves wide's tokens as they were.
func allOrNothing(t *testing.T, rdb redis.UniversalClient, raw redis.Cmdable, opts Options) {
	ctx := context.Background()
	opts.Limits = []Definition{def(t, "wide", "10/1m", Enforce, FailOpen), def(t, "narrow", "1/1m", Enforce, FailOpen)}
	opts.Timeout = 5 * time.Second // not a test of deadlines: no fail_open under the race detector
	counter := testenv.CountScripts(rdb)
	l, _ := newTestLimiter(counter, opts)
	// Identities whose two keys are in different hash slots, so that a cluster
	// needs one script per slot.
	id := ""
	for i := 0; id == ""; i++ {
		if c := strconv.Itoa(i); hashSlot(l.key("wide", c)) != hashSlot(l.key("narrow", c)) {
			id = c
		}
	}
	both := []Check{{Limit: "wide", Key: id}, {Limit: "narrow", Key: id}}
	d := l.Allow(ctx, both...)
	if !d.Allowed || d.Results[0].Remaining != 9 || d.Results[1].Remaining != 0 {
		t.Fatalf("first request: %+v", d)
	}
	wideKey := l.key("wide", id)
	before := raw.Get(ctx, wideKey).Val()

	d = l.Allow(ctx, both...)
	if d.Allowed || !slices.Equal(d.Violated(), []Name{"narrow"}) {
		t.Fatalf("second request: %+v", d)
	}
	if r := d.Results[0]; !r.Allowed || r.Outcome != OutcomeAllowed || r.Remaining != 9 {
		t.Fatalf("wide, which allowed a refused request: %+v", r)
	}
	if after := raw.Get(ctx, wideKey).Val(); after != before {
		t.Fatalf("a refused request changed wide's bucket from %s to %s", before, after)
	}
	if ttl := raw.PTTL(ctx, wideKey).Val(); ttl <= 0 {
		t.Fatalf("wide's key has PTTL %v", ttl)
	}

	// Refused first by narrow (from Redis, after the cache is cleared), the wide
	// limit is not asked at all.
	if err := l.SetSetting("narrow", l.limits["narrow"].cfg.Load().setting); err != nil {
		t.Fatal(err)
	}
	d = l.Allow(ctx, Check{Limit: "narrow", Key: id}, Check{Limit: "wide", Key: id})
	if d.Allowed || raw.Get(ctx, wideKey).Val() != before {
		t.Fatalf("narrow first: %+v, wide now %s", d, raw.Get(ctx, wideKey).Val())
	}
	// And now from the denial cache: no call at all.
	calls := counter.Calls()
	d = l.Allow(ctx, both...)
	if d.Allowed || !d.Results[1].Cached || d.Results[0].Outcome != OutcomeSkipped || counter.Calls() != calls {
		t.Fatalf("cached refusal: %+v (%d calls)", d, counter.Calls()-calls)
	}

	d = l.Allow(ctx, Check{Limit: "wide", Key: id})
	if !d.Allowed || d.Results[0].Remaining != 8 {
		t.Fatalf("wide alone: %+v; want 8 left, one token spent in all", d)
	}
}

func TestAllOrNothingOneScript(t *testing.T) {
	t.Parallel()
	rdb, prefix := sharedRedis(t, 4)
	allOrNothing(t, rdb, rdb, Options{Prefix: prefix})
}

// The per-slot path with its refund, on a plain Redis.
func TestAllOrNothingPerSlot(t *testing.T) {
	t.Parallel()
	rdb, prefix := sharedRedis(t, 4)
	allOrNothing(t, rdb, rdb, Options{Prefix: prefix, SplitBySlot: true})
}

// The per-slot path on a real (one-node) Redis Cluster, which refuses one script
// across two slots.
func TestAllOrNothingCluster(t *testing.T) {
	t.Parallel()
	cluster := startCluster(t)
	iv, tau := PerMinute(1).gcra()
	_, _, err := take(context.Background(), cluster, []bucket{
		{key: "rl:{a:1}", interval: iv, tau: tau}, {key: "rl:{b:1}", interval: iv, tau: tau}})
	if err == nil || !strings.Contains(err.Error(), "CROSSSLOT") {
		t.Fatalf("one script across slots on a cluster: %v, want CROSSSLOT", err)
	}
	// allOrNothing wraps the client to count calls, which hides that it is a
	// *redis.ClusterClient: SplitBySlot says so.
	allOrNothing(t, cluster, cluster, Options{SplitBySlot: true})
}
