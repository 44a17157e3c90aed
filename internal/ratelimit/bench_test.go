package ratelimit

import (
	"context"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/stagedoor/stagedoor/internal/testenv"
)

// Run with:
//
//	STAGEDOOR_TEST_REDIS_URL=redis://127.0.0.1:6379/0 \
//	go test -run '^$' -bench . -benchtime 3s ./internal/ratelimit/

const benchGoroutines, benchKeys = 50, 10_000

// parallel50 makes RunParallel use 50 goroutines whatever GOMAXPROCS is.
func parallel50(b *testing.B) {
	p := runtime.GOMAXPROCS(0)
	b.SetParallelism((benchGoroutines + p - 1) / p)
}

// benchIDs are the identities the throughput benchmarks spread their calls over.
var benchIDs = func() []string {
	ids := make([]string, benchKeys)
	for i := range ids {
		ids[i] = strconv.Itoa(i)
	}
	return ids
}()

// BenchmarkThroughput compares decisions a second with one and two buckets with
// raw INCR on the same Redis, from 50 goroutines over 10,000 keys. The buckets
// are big enough that no decision is refused (a refusal from the denial cache
// would flatter the limiter).
func BenchmarkThroughput(b *testing.B) {
	rdb, prefix := sharedRedis(b, 2*benchGoroutines)
	var seq atomic.Int64
	run := func(b *testing.B, op func(ctx context.Context, id, id2 string)) {
		parallel50(b)
		start := time.Now()
		b.RunParallel(func(pb *testing.PB) {
			i := int(seq.Add(7919)) // a different starting key for each goroutine
			ctx := context.Background()
			for pb.Next() {
				i++
				op(ctx, benchIDs[i%benchKeys], benchIDs[(i*31)%benchKeys])
			}
		})
		b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "ops/s")
	}
	b.Run("incr", func(b *testing.B) {
		run(b, func(ctx context.Context, id, _ string) {
			if err := rdb.Incr(ctx, prefix+"i:{"+id+"}").Err(); err != nil {
				b.Error(err)
			}
		})
	})
	lim, _ := newTestLimiter(rdb, Options{Prefix: prefix, Limits: []Definition{
		def(b, "buyer", "1000/1s", Enforce, FailOpen), def(b, "org", "1000/1s", Enforce, FailOpen)}})
	b.Run("one-bucket", func(b *testing.B) {
		run(b, func(ctx context.Context, id, _ string) {
			lim.Allow(ctx, Check{Limit: "buyer", Key: id})
		})
	})
	b.Run("two-buckets", func(b *testing.B) {
		run(b, func(ctx context.Context, id, id2 string) {
			lim.Allow(ctx, Check{Limit: "buyer", Key: id}, Check{Limit: "org", Key: id2})
		})
	})
	b.Run("bare-script", func(b *testing.B) {
		run(b, func(ctx context.Context, id, _ string) {
			if err := bareScript.Run(ctx, rdb, []string{prefix + "b:{" + id + "}"}).Err(); err != nil {
				b.Error(err)
			}
		})
	})
	for _, name := range []Name{"buyer", "org"} {
		if n := count(lim, name, OutcomeDenied) + count(lim, name, OutcomeFailOpen); n != 0 {
			b.Fatalf("%s: %d decisions refused or failed open; the figures mean nothing", name, n)
		}
	}
}

// bareScript is the least a one-bucket decision must do in Redis: read the clock,
// read the bucket, write it with a time to live, and answer both numbers. BenchmarkThroughputRatio holds a
// one-bucket Allow to at least 0.9 of it.
var bareScript = redis.NewScript(`
local t = redis.call('TIME')
local now = t[1] * 1000000 + t[2]
local v = tonumber(redis.call('GET', KEYS[1])) or 0
redis.call('SET', KEYS[1], now, 'PX', 60000)
return {now, v}
`)

var ratio struct {
	once sync.Once
	rate [5]float64 // incr, one bucket, two buckets, takeScript alone, the bare script: ops/s
}

// BenchmarkThroughputRatio is BenchmarkThroughput made fair to a noisy machine:
// INCR, one bucket, two buckets, the one-bucket takeScript alone (no Limiter
// around it) and the bare TIME+GET+SET PX script (bareScript) take turns of
// 300 ms, 10 turns each, 50 goroutines over 10,000 keys, and it reports the rates
// and their ratios to INCR, and one-bucket/bare: the one-bucket decision's
// throughput as a share of the bare script's. It measures once; ns/op means
// nothing here.
func BenchmarkThroughputRatio(b *testing.B) {
	ratio.once.Do(func() {
		rdb, prefix := sharedRedis(b, 2*benchGoroutines)
		lim, _ := newTestLimiter(rdb, Options{Prefix: prefix, Limits: []Definition{
			def(b, "buyer", "1000/1s", Enforce, FailOpen), def(b, "org", "1000/1s", Enforce, FailOpen)}})
		iv, tau := PerSecond(1000).gcra()
		args := scriptArgs(iv, tau, true)
		ops := [5]func(ctx context.Context, id, id2 string){
			func(ctx context.Context, id, _ string) { rdb.Incr(ctx, prefix+"i:{"+id+"}") },
			func(ctx context.Context, id, _ string) { lim.Allow(ctx, Check{Limit: "buyer", Key: id}) },
			func(ctx context.Context, id, id2 string) {
				lim.Allow(ctx, Check{Limit: "buyer", Key: id}, Check{Limit: "org", Key: id2})
			},
			// The one-bucket script alone, without the Limiter around it.
			func(ctx context.Context, id, _ string) {
				takeScript.Run(ctx, rdb, []string{prefix + "s:{" + id + "}"}, args[:]...)
			},
			func(ctx context.Context, id, _ string) { bareScript.Run(ctx, rdb, []string{prefix + "b:{" + id + "}"}) },
		}
		var done [5]int64
		var spent [5]time.Duration
		for turn := range 10 {
			for k, op := range ops {
				var n atomic.Int64
				start := time.Now()
				deadline := start.Add(300 * time.Millisecond)
				var wg sync.WaitGroup
				for g := range benchGoroutines {
					wg.Go(func() {
						ctx, i := context.Background(), g*7919+turn*131
						for ; time.Now().Before(deadline); i++ {
							op(ctx, benchIDs[i%benchKeys], benchIDs[(i*31)%benchKeys])
							n.Add(1)
						}
					})
				}
				wg.Wait()
				done[k] += n.Load()
				spent[k] += time.Since(start)
			}
		}
		for k := range ops {
			ratio.rate[k] = float64(done[k]) / spent[k].Seconds()
		}
		if n := count(lim, "buyer", OutcomeDenied) + count(lim, "buyer", OutcomeFailOpen); n != 0 {
			b.Fatalf("%d decisions refused or failed open", n)
		}
	})
	for b.Loop() {
	}
	b.ReportMetric(ratio.rate[0], "incr/s")
	b.ReportMetric(ratio.rate[1], "one-bucket/s")
	b.ReportMetric(ratio.rate[2], "two-buckets/s")
	b.ReportMetric(ratio.rate[1]/ratio.rate[0], "one/incr")
	b.ReportMetric(ratio.rate[2]/ratio.rate[0], "two/incr")
	b.ReportMetric(ratio.rate[3]/ratio.rate[0], "take-script/incr")
	b.ReportMetric(ratio.rate[4], "bare-script/s")
	b.ReportMetric(ratio.rate[1]/ratio.rate[4], "one/bare")
}

// BenchmarkDeniedFromCache is a refusal from the denial cache: no Redis call.
func BenchmarkDeniedFromCache(b *testing.B) {
	rdb, prefix := sharedRedis(b, 4)
	counter := testenv.CountScripts(rdb)
	lim, _ := newTestLimiter(counter, Options{Prefix: prefix, Limits: []Definition{def(b, "buyer", "1/1h", Enforce, FailOpen)}})
	check := Check{Limit: "buyer", Key: "8812"}
	lim.Allow(context.Background(), check)
	lim.Allow(context.Background(), check)
	calls := counter.Calls()
	refuse := func() {
		if d := lim.Allow(context.Background(), check); d.Allowed || !d.Results[0].Cached {
			b.Fatalf("not a cached refusal: %+v", d)
		}
	}
	b.Run("serial", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			refuse()
		}
	})
	b.Run("parallel", func(b *testing.B) {
		b.ReportAllocs()
		parallel50(b)
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				refuse()
			}
		})
	})
	if n := counter.Calls() - calls; n != 0 {
		b.Fatalf("%d Redis calls for cached refusals", n)
	}
}

var memory struct {
	once          sync.Once
	perKey, usage float64
	keys          int
}

// BenchmarkRedisMemoryPerBucket writes 100,000 buckets into a private redis-server
// (so that nobody else's keys move used_memory) and reports the growth of
// used_memory per bucket and MEMORY USAGE of one bucket key. It measures once;
// ns/op means nothing here.
func BenchmarkRedisMemoryPerBucket(b *testing.B) {
	memory.once.Do(func() { memory.perKey, memory.usage, memory.keys = measureMemory(b, 100_000) })
	for b.Loop() {
	}
	b.ReportMetric(memory.perKey, "used_memory-B/key")
	b.ReportMetric(memory.usage, "MEMORY-USAGE-B/key")
	b.ReportMetric(float64(memory.keys), "keys")
}

func measureMemory(b *testing.B, n int) (perKey, usage float64, keys int) {
	ctx := context.Background()
	private := testenv.StartPrivateRedis(b)
	rdb := newClient(b, private.URL, benchGoroutines)
	lim, _ := newTestLimiter(rdb, Options{Limits: []Definition{def(b, "m", "10/1h", Enforce, FailOpen)}})
	// Open every connection and load the script first, then delete the key.
	var wg sync.WaitGroup
	for range benchGoroutines {
		wg.Go(func() { lim.Allow(ctx, Check{Limit: "m", Key: "warm"}) })
	}
	wg.Wait()
	rdb.Del(ctx, lim.key("m", "warm"))
	before := usedMemory(b, rdb)
	var next atomic.Int64
	for range benchGoroutines {
		wg.Go(func() {
			for i := next.Add(1) - 1; i < int64(n); i = next.Add(1) - 1 {
				if d := lim.Allow(ctx, Check{Limit: "m", Key: strconv.FormatInt(i, 10)}); d.Results[0].Outcome != OutcomeAllowed {
					b.Errorf("%+v", d)
					return
				}
			}
		})
	}
	wg.Wait()
	after := usedMemory(b, rdb)
	keys = int(rdb.DBSize(ctx).Val())
	sample := lim.key("m", "54321")
	usage = float64(rdb.MemoryUsage(ctx, sample).Val())
	b.Logf("%d keys such as %s = %s (PTTL %v): used_memory %d → %d", keys, sample, rdb.Get(ctx, sample).Val(),
		rdb.PTTL(ctx, sample).Val(), before, after)
	rdb.FlushAll(ctx)
	return float64(after-before) / float64(n), usage, keys
}

func usedMemory(b *testing.B, rdb *redis.Client) int64 {
	info, err := rdb.Info(context.Background(), "memory").Result()
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "used_memory:"); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				b.Fatal(err)
			}
			return n
		}
	}
	b.Fatal("no used_memory in INFO")
	return 0
}
