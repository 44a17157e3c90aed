package httpapi_test

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/stagedoor/stagedoor/internal/testenv"
)

// pingCounter is a Redis hook that counts the PING commands sent, and the
// most that were under way at once.
type pingCounter struct {
	sent, now, most atomic.Int64
}

func (p *pingCounter) DialHook(next redis.DialHook) redis.DialHook { return next }

func (p *pingCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

func (p *pingCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if cmd.Name() != "ping" {
			return next(ctx, cmd)
		}
		p.sent.Add(1)
		n := p.now.Add(1)
		defer p.now.Add(-1)
		for m := p.most.Load(); n > m && !p.most.CompareAndSwap(m, n); m = p.most.Load() {
		}
		return next(ctx, cmd)
	}
}

// readinessChecks sums stagedoor_readiness_checks_total over its results.
func readinessChecks(t *testing.T, ts *testServer) int {
	t.Helper()
	n := 0
	for _, line := range strings.Split(metricsText(t, ts), "\n") {
		if strings.HasPrefix(line, "stagedoor_readiness_checks_total{") {
			v, _ := strconv.Atoi(line[strings.LastIndex(line, " ")+1:])
			n += v
		}
	}
	return n
}

// TestReadinessIsCheckedOnceForManyCallers: 200 callers of /readyz at once
// (and again, and again) cost one check of PostgreSQL and Redis at a time,
// at most one each 250 ms, instead of one per caller: every caller gets the
// answer, and Redis sees one PING at a time.
func TestReadinessIsCheckedOnceForManyCallers(t *testing.T) {
	t.Parallel()
	const callers, rounds = 200, 3
	rdb := redisClient(t, testenv.RedisURL(t))
	pings := &pingCounter{}
	rdb.AddHook(pings)
	ts := newTestServer(t, nil, nil, rdb)

	start := time.Now()
	for range rounds {
		var wg sync.WaitGroup
		for range callers {
			wg.Go(func() {
				if a := ts.request(t, "GET", "/readyz", ""); a.StatusCode != 200 || as[health](t, a).Status != "ready" {
					t.Errorf("readyz = %d %s", a.StatusCode, a.raw)
				}
			})
		}
		wg.Wait()
	}
	elapsed := time.Since(start)
	// One check per 250 ms window the callers spanned, and one more for the
	// window they began in.
	most := 2 + int(elapsed/(250*time.Millisecond))
	checks := readinessChecks(t, ts)
	t.Logf("%d calls over %v: %d checks, %d Redis PINGs, at most %d at once", callers*rounds, elapsed.Round(time.Millisecond),
		checks, pings.sent.Load(), pings.most.Load())
	if checks < 1 || checks > most {
		t.Errorf("%d calls over %v made %d readiness checks; want 1 to %d", callers*rounds, elapsed, checks, most)
	}
	if got := pings.sent.Load(); got != int64(checks) {
		t.Errorf("Redis got %d PINGs for %d checks", got, checks)
	}
	if got := pings.most.Load(); got != 1 {
		t.Errorf("%d readiness PINGs were under way at once, want 1 at a time", got)
	}
}

// TestReadinessFollowsRedis: the answer kept for callers is refreshed: once
// Redis stops, /readyz turns degraded.
func TestReadinessFollowsRedis(t *testing.T) {
	t.Parallel()
	private := testenv.StartPrivateRedis(t)
	ts := newTestServer(t, nil, nil, redisClient(t, private.URL))
	state := func() string { return as[health](t, ts.request(t, "GET", "/readyz", "")).Redis }
	// Its first check may be late on a busy machine (250 ms for Redis).
	waitFor(t, 10*time.Second, "readyz to say Redis is ok", func() bool { return state() == "ok" })
	private.Stop()
	waitFor(t, 10*time.Second, "readyz to say Redis is degraded", func() bool { return state() == "degraded" })
}
