package concurrency

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/redis/go-redis/v9"

	"github.com/stagedoor/stagedoor/internal/ratelimit"
	"github.com/stagedoor/stagedoor/internal/testenv"
)

// newClient returns a client on url that honours context deadlines and does
// not retry (a retry would hide the failure a test is about).
func newClient(t testing.TB, url string, poolSize int) *redis.Client {
	t.Helper()
	return testenv.RedisClient(t, url, poolSize, func(o *redis.Options) {
		o.Protocol = 0 // go-redis's default, as these tests always had
		o.MaxRetries = -1
		o.DialerRetries = 1
	})
}

// sharedRedis returns a client on the shared test Redis and a key prefix of
// this test's own.
func sharedRedis(t testing.TB, poolSize int) (*redis.Client, string) {
	t.Helper()
	prefix := testenv.RedisPrefix(t)
	return newClient(t, testenv.RedisURL(t), poolSize), prefix
}

// newTestLimiter builds a limiter with a registry of its own. Unless the test
// sets one, the deadline is a generous 5 s: under the race detector a 50 ms
// deadline would turn some decisions into fail_open in tests that are not
// about deadlines.
func newTestLimiter(rdb redis.UniversalClient, o Options) (*Limiter, *prometheus.Registry) {
	reg := prometheus.NewRegistry()
	o.Registerer = reg
	if o.Timeout == 0 {
		o.Timeout = 5 * time.Second
	}
	if o.Name == "" {
		o.Name = testBuyer
	}
	return New(rdb, o), reg
}

// decisions reads one decision counter of l.
func decisions(l *Limiter, o Outcome) int {
	for i, x := range outcomes {
		if x == o {
			return int(testutil.ToFloat64(l.counts[i]))
		}
	}
	panic("no outcome " + string(o))
}

// redisCalls is the value of stagedoor_redis_calls_total for l's limit, summed
// over the nodes, for one result (ok, failed, refused).
func redisCalls(t testing.TB, reg *prometheus.Registry, result string) int {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	n := 0.0
	for _, mf := range mfs {
		if mf.GetName() != "stagedoor_redis_calls_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, lp := range m.GetLabel() {
				if lp.GetName() == "result" && lp.GetValue() == result {
					n += m.GetCounter().GetValue()
				}
			}
		}
	}
	return int(n)
}

// nodesCalled lists the node labels of stagedoor_redis_calls_total with a
// count above 0.
func nodesCalled(t testing.TB, reg *prometheus.Registry) map[string]bool {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, mf := range mfs {
		if mf.GetName() != "stagedoor_redis_calls_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, lp := range m.GetLabel() {
				if lp.GetName() == "node" && m.GetCounter().GetValue() > 0 {
					out[lp.GetValue()] = true
				}
			}
		}
	}
	return out
}

// members is the lease ids in key.
func members(t testing.TB, rdb *redis.Client, key string) []string {
	t.Helper()
	m, err := rdb.ZRange(context.Background(), key, 0, -1).Result()
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// The limits the tests use, named as Stagedoor names its own.
const (
	testBuyer     ratelimit.Name = "buyer-concurrency"
	testOrganizer ratelimit.Name = "organizer-concurrency"
)
