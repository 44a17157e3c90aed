package httpapi_test

import (
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stagedoor/stagedoor/internal/testenv"
)

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
	pings := &testenv.CommandCounter{Names: []string{"ping"}}
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
		checks, pings.Sent(), pings.Most())
	if checks < 1 || checks > most {
		t.Errorf("%d calls over %v made %d readiness checks; want 1 to %d", callers*rounds, elapsed, checks, most)
	}
	if got := pings.Sent(); got != int64(checks) {
		t.Errorf("Redis got %d PINGs for %d checks", got, checks)
	}
	if got := pings.Most(); got != 1 {
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
