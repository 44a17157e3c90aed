package ratelimit

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/redis/go-redis/v9"

	"github.com/stagedoor/stagedoor/internal/testenv"
)

// def is a Definition from a spec such as "10/1m", enforced and failing open.
func def(t testing.TB, name Name, spec string, mode Mode, policy Policy) Definition {
	t.Helper()
	l, err := ParseLimit(spec)
	if err != nil {
		t.Fatal(err)
	}
	return Definition{Name: name, Setting: Setting{Limit: l, Mode: mode}, Policy: policy}
}

// newClient returns a client on url that honours context deadlines.
func newClient(t testing.TB, url string, poolSize int) *redis.Client {
	t.Helper()
	return testenv.RedisClient(t, url, poolSize, nil)
}

// sharedRedis returns a client on the shared test Redis and a key prefix of this
// test's own.
func sharedRedis(t testing.TB, poolSize int) (*redis.Client, string) {
	t.Helper()
	prefix := testenv.RedisPrefix(t)
	return newClient(t, testenv.RedisURL(t), poolSize), prefix
}

// count reads one decision counter of l.
func count(l *Limiter, limit Name, o Outcome) int {
	return int(testutil.ToFloat64(l.limits[limit].counts[outcomeIndex(o)]))
}

// newTestLimiter builds a limiter with a registry of its own. Unless the test sets
// one, the deadline is a generous 5 s: under the race detector a 50 ms deadline
// would turn some decisions into fail_open in tests that are not about deadlines.
func newTestLimiter(rdb Scripter, opts Options) (*Limiter, *prometheus.Registry) {
	reg := prometheus.NewRegistry()
	opts.Registerer = reg
	if opts.Timeout == 0 {
		opts.Timeout = 5 * time.Second
	}
	return New(rdb, opts), reg
}

// newFakeClock is a clock a test moves by hand, from a fixed instant.
func newFakeClock() *testenv.Clock { return testenv.NewClock(time.Unix(1_700_000_000, 0)) }

// startCluster starts a one-node Redis Cluster that holds every slot: a real
// cluster, which refuses a script whose keys are in two slots (CROSSSLOT).
func startCluster(t testing.TB) *redis.ClusterClient {
	t.Helper()
	conf := filepath.Join(t.TempDir(), "nodes.conf")
	s := testenv.StartPrivateRedis(t, "--cluster-enabled", "yes", "--cluster-config-file", conf)
	ctx := context.Background()
	node := redis.NewClient(&redis.Options{Addr: s.Addr})
	defer node.Close()
	if err := node.Do(ctx, "CLUSTER", "ADDSLOTSRANGE", 0, slotCount-1).Err(); err != nil {
		t.Fatalf("cluster addslots: %v", err)
	}
	testenv.Eventually(t, 10*time.Second, func() bool {
		info, err := node.ClusterInfo(ctx).Result()
		return err == nil && strings.Contains(info, "cluster_state:ok")
	}, "the one-node cluster's state ok")
	c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{s.Addr}, ContextTimeoutEnabled: true})
	t.Cleanup(func() { c.Close() })
	return c
}

// keysWithPrefix returns every key under prefix.
func keysWithPrefix(t testing.TB, rdb *redis.Client, prefix string) []string {
	t.Helper()
	var keys []string
	iter := rdb.Scan(context.Background(), 0, prefix+"*", 1000).Iterator()
	for iter.Next(context.Background()) {
		keys = append(keys, iter.Val())
	}
	if err := iter.Err(); err != nil {
		t.Fatal(err)
	}
	return keys
}

// redisMicros is Redis's clock in µs.
func redisMicros(t testing.TB, rdb *redis.Client) int64 {
	t.Helper()
	tm, err := rdb.Time(context.Background()).Result()
	if err != nil {
		t.Fatal(err)
	}
	return tm.UnixMicro()
}

// take runs the take script once for bs (keys of one hash slot, on a cluster) and
// returns Redis's clock in µs and a verdict a bucket, replayed from what the
// script read.
func take(ctx context.Context, rdb Scripter, bs []bucket) (int64, []verdict, error) {
	s := getScript(rdb, bs, make([]verdict, len(bs)))
	defer putScript(s)
	err := s.run(ctx)
	return s.now, s.vs, err
}

// countedInstances returns n limiters, as n instances would run them: each with
// its own client on the shared Redis (a pool of workers+2) whose script calls
// it counts, and the options opts returns (one call an instance).
func countedInstances(t testing.TB, n, workers int, opts func() Options) ([]*Limiter, []*testenv.ScriptCalls) {
	t.Helper()
	url := testenv.RedisURL(t)
	lims := make([]*Limiter, n)
	counters := make([]*testenv.ScriptCalls, n)
	for i := range lims {
		counters[i] = testenv.CountScripts(newClient(t, url, workers+2))
		lims[i], _ = newTestLimiter(counters[i], opts())
	}
	return lims, counters
}
