package concurrency

import (
	"context"
	"runtime"
	"strconv"
	"sync/atomic"
	"testing"
	"time"
)

// Run with:
//
//	STAGEDOOR_TEST_REDIS_URL=redis://127.0.0.1:6379/0 \
//	go test -run '^$' -bench . -benchtime 3s ./internal/concurrency/

// BenchmarkEnterRelease is one request's cost: Enter (the acquire script) and
// release (ZREM), two round trips to the shared Redis. "ping2" is two PINGs,
// the round trips alone, for comparison. "parallel50" runs 50 goroutines over
// 1,000 buyers, with Max high enough that nothing is refused.
func BenchmarkEnterRelease(b *testing.B) {
	rdb, prefix := sharedRedis(b, 100)
	l, _ := newTestLimiter(rdb, Options{Max: 1000, Prefix: prefix})
	ctx := context.Background()

	b.Run("serial", func(b *testing.B) {
		for b.Loop() {
			d, rel := l.Enter(ctx, "8812")
			if !d.Allowed || d.Outcome != OutcomeAllowed {
				b.Fatalf("%+v", d)
			}
			rel()
		}
	})
	b.Run("ping2", func(b *testing.B) {
		for b.Loop() {
			rdb.Ping(ctx)
			rdb.Ping(ctx)
		}
	})
	b.Run("parallel50", func(b *testing.B) {
		p := runtime.GOMAXPROCS(0)
		b.SetParallelism((50 + p - 1) / p)
		ids := make([]string, 1000)
		for i := range ids {
			ids[i] = strconv.Itoa(i)
		}
		var seq atomic.Int64
		start := time.Now()
		b.RunParallel(func(pb *testing.PB) {
			i := int(seq.Add(7919))
			for pb.Next() {
				i++
				d, rel := l.Enter(ctx, ids[i%len(ids)])
				if d.Outcome != OutcomeAllowed {
					b.Errorf("%+v", d)
				}
				rel()
			}
		})
		b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "requests/s")
	})
}

// BenchmarkRegistry is the in-process part of Enter and release (the map of
// live leases, under its mutex) from every CPU at once: what sharding it would
// save.
func BenchmarkRegistry(b *testing.B) {
	var r registry
	r.init()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			ls := &lease{key: "k", id: "i"}
			r.add(ls)
			r.remove(ls)
		}
	})
}
