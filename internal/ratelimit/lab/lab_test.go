package lab

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/stagedoor/stagedoor/internal/testenv"
)

// The short versions of the lab's experiments, against the real Redis of the
// tests. They run one after another (no t.Parallel): the boundary and the
// global limit are about timing, and each other would disturb it.

// labEnv is a lab environment under the test's own key prefix; every key the
// lab writes for it, redis_rate's included, is deleted when the test ends.
func labEnv(t *testing.T) Env {
	t.Helper()
	rdb, prefix := testenv.Redis(t)
	return labEnvOn(t, rdb, testenv.RedisURL(t), prefix+"lab:")
}

// labEnvOn is the lab's Env on the Redis at url (rdb, a client of it), its keys
// under prefix, removed when the test ends.
func labEnvOn(t *testing.T, rdb redis.UniversalClient, url, prefix string) Env {
	t.Helper()
	env := Env{RDB: rdb, Prefix: prefix, NewClient: func(context.Context) (redis.UniversalClient, error) {
		opts, err := redis.ParseURL(url)
		if err != nil {
			return nil, err
		}
		return redis.NewClient(opts), nil
	}}
	t.Cleanup(func() {
		if _, err := Cleanup(context.Background(), rdb, env.Prefix); err != nil {
			t.Errorf("cleanup: %v", err)
		}
	})
	return env
}

func TestBoundary(t *testing.T) {
	env := labEnv(t)
	// The lab's experiment scaled down five times, 20/1s and bursts of 20:
	// under the race detector, on a machine running other tests, 800 requests
	// at once can take longer than the 140 ms before the boundary.
	cfg := DefaultBoundary()
	cfg.Limit.N, cfg.Requests, cfg.Senders = 20, 20, 4
	res, err := RunBoundary(context.Background(), env, Algorithms(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range res.Rows {
		t.Logf("%-28s aimed=%-5v %3d + %3d → %3d in 1 s (bound %d, burst 2 answered by %.0f ms, span %.0f ms) %s",
			row.ID, row.Aimed, row.Burst1, row.Burst2, row.MaxInWindow, row.Bound, row.LastDecisionMs, row.SpanMs, row.Error)
		if row.Error != "" {
			t.Errorf("%s: %s", row.ID, row.Error)
		}
	}
	if !res.Valid {
		t.Fatalf("after %d attempts a burst still crossed the boundary: the machine is too busy for this test", res.Attempts)
	}
	limit := cfg.Limit.N
	get := func(id string) BoundaryRow {
		row, ok := res.Row(id)
		if !ok {
			t.Fatalf("no row %s", id)
		}
		return row
	}
	if f := get("fixed"); float64(f.MaxInWindow) < 1.8*float64(limit) {
		t.Errorf("fixed window let %d through in one second, want ≥ 1.8× the limit %d", f.MaxInWindow, limit)
	}
	if l := get("log"); l.MaxInWindow != limit {
		t.Errorf("sliding log let %d through in one second, want exactly %d", l.MaxInWindow, limit)
	}
	for _, id := range []string{"counter", "bucket", "stagedoor", "redis_rate"} {
		r := get(id)
		if r.MaxInWindow < limit || r.MaxInWindow > r.Bound {
			t.Errorf("%s let %d through in one second, want between the limit %d and its bound %d", id, r.MaxInWindow, limit, r.Bound)
		}
	}
	// ulule's window opens at the first request: the clock's boundary is
	// nothing to it, but its own reset is.
	if u := get("ulule"); u.MaxInWindow != limit {
		t.Errorf("ulule/limiter let %d through around the clock's boundary, want %d", u.MaxInWindow, limit)
	}
	for _, row := range res.Rows {
		if row.Aimed && float64(row.MaxInWindow) < 1.8*float64(limit) {
			t.Errorf("ulule/limiter aimed at its own reset let %d through, want ≥ 1.8× the limit", row.MaxInWindow)
		}
		sum := 0
		for _, b := range row.Bins {
			sum += b
		}
		if sum != row.Burst1+row.Burst2 {
			t.Errorf("%s: the bins hold %d admissions, the bursts %d", row.ID, sum, row.Burst1+row.Burst2)
		}
	}
	svg := BoundarySVG(res)
	if !strings.HasPrefix(svg, "<svg") || !strings.Contains(svg, "ulule (aimed)") || strings.Count(svg, "<rect") < len(res.Rows)*binCount {
		t.Errorf("the chart lacks bars or labels:\n%.400s", svg)
	}
}

func TestSpeed(t *testing.T) {
	env := labEnv(t)
	cfg := SpeedConfig{Limit: Limit{N: 100, Window: time.Second}, Calls: 200, Rounds: 2, Goroutines: 10,
		Duration: 100 * time.Millisecond, Users: 1000}
	res, err := RunSpeed(context.Background(), env, Algorithms(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != len(Algorithms())+1 || res.Rows[0].ID != "incr" {
		t.Fatalf("rows %+v: want the raw INCR then every algorithm", res.Rows)
	}
	for _, row := range res.Rows {
		t.Logf("%-12s p50 %.3f ms p99 %.3f ms, %.0f/s (%.2f× INCR), %.0f%% allowed", row.ID, row.P50Ms, row.P99Ms, row.PerSecond, row.RateRatio, row.AllowedPct)
		if row.Errors > 0 {
			t.Errorf("%s: %d errors: %s", row.ID, row.Errors, row.FirstError)
		}
		if !(row.P50Ms > 0 && row.P99Ms >= row.P50Ms && row.PerSecond > 0) {
			t.Errorf("%s: not measured: %+v", row.ID, row)
		}
		if row.ID != "incr" && row.AllowedPct < 90 {
			t.Errorf("%s allowed %.0f%% of calls spread over %d keys at 100/s: it should allow nearly all", row.ID, row.AllowedPct, cfg.Users)
		}
	}
	if r := res.Rows[0]; r.P50Ratio != 1 || r.RateRatio != 1 {
		t.Errorf("INCR's ratios to itself: %v, %v", r.P50Ratio, r.RateRatio)
	}
}

// TestMemory measures on a redis-server of its own: used_memory is the whole
// server's, and on the shared one the other packages' tests running beside it
// wrote into the figures (once, the fixed window at 1,100 B a user, its key
// 88 B).
func TestMemory(t *testing.T) {
	private := testenv.StartPrivateRedis(t)
	opts, err := redis.ParseURL(private.URL)
	if err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(opts)
	t.Cleanup(func() { _ = rdb.Close() })
	env := labEnvOn(t, rdb, private.URL, "lab:")
	cfg := MemoryConfig{Goroutines: 10, Runs: []MemoryRun{
		{Limit: 100, Users: 1000, LogUsers: 1000, OneByOne: 1000},
		{Limit: 1000, Users: 200, LogUsers: 10, OneByOne: 200},
	}}
	res, err := RunMemory(context.Background(), env, Algorithms(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range res.Rows {
		t.Logf("%-10s at %5d: %8.0f B/user (used_memory), %8.0f B/key (MEMORY USAGE), %d of %d filled by %s",
			row.ID, row.Limit, row.BytesPerUser, row.KeyUsage, row.Filled, row.Users, row.Method)
		if row.Error != "" || row.Filled != row.Users {
			t.Errorf("%s at %d: filled %d of %d: %s", row.ID, row.Limit, row.Filled, row.Users, row.Error)
		}
	}
	row := func(id string, limit int) MemoryRow {
		r, ok := res.Row(id, limit)
		if !ok {
			t.Fatalf("no row %s at %d", id, limit)
		}
		return r
	}
	log100, fixed100 := row("log", 100), row("fixed", 100)
	if log100.KeyUsage < 10*fixed100.KeyUsage {
		t.Errorf("the log's key at limit 100 takes %.0f B, the fixed window's %.0f B: want ≥ 10×", log100.KeyUsage, fixed100.KeyUsage)
	}
	if log100.BytesPerUser < 5*fixed100.BytesPerUser || log100.BytesPerUser < 1000 {
		t.Errorf("used_memory per user: the log %.0f B, the fixed window %.0f B: want the log ≥ 5× and ≥ 1,000 B", log100.BytesPerUser, fixed100.BytesPerUser)
	}
	// Past 128 entries the log's sorted set leaves its compact encoding: 10× the
	// limit costs more than 10× the memory.
	if log1000 := row("log", 1000); log1000.KeyUsage < 10*log100.KeyUsage {
		t.Errorf("the log's key at limit 1,000 takes %.0f B, at 100 %.0f B: want more than 10×", log1000.KeyUsage, log100.KeyUsage)
	}
	// The others keep the same state whatever the limit.
	for _, id := range []string{"fixed", "counter", "bucket", "stagedoor", "redis_rate", "ulule"} {
		a, b := row(id, 100), row(id, 1000)
		if math.Abs(a.KeyUsage-b.KeyUsage) > 16 || a.KeyUsage > 400 {
			t.Errorf("%s: a key takes %.0f B at limit 100 and %.0f B at 1,000: want the same few hundred bytes", id, a.KeyUsage, b.KeyUsage)
		}
	}
}

func TestAtomicity(t *testing.T) {
	env := labEnv(t)
	res, err := RunAtomicity(context.Background(), env, DefaultAtomicity())
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 3 {
		t.Fatalf("rows %+v: want two commands, the script and ulule's store", res.Rows)
	}
	two := res.Rows[0]
	if two.Keys != LabAtomicityUsers || two.WithoutTTL != LabNoTTLTwoCommands || two.Crashes != LabNoTTLTwoCommands {
		t.Errorf("two commands: %+v, want %d keys, %d crashes and %d without a TTL", two, LabAtomicityUsers, LabNoTTLTwoCommands, LabNoTTLTwoCommands)
	}
	for _, r := range res.Rows[1:] {
		if r.Keys != LabAtomicityUsers || r.WithoutTTL != 0 {
			t.Errorf("%s: %+v, want %d keys, none without a TTL", r.Mode, r, LabAtomicityUsers)
		}
	}
}

func TestGlobal(t *testing.T) {
	env := labEnv(t)
	var algs []Algorithm
	for _, id := range []string{"bucket", "stagedoor"} {
		a, _ := AlgorithmByID(id)
		algs = append(algs, a)
	}
	cfg := QuickGlobal()
	// A fifth of the lab's rate: twenty callers on a loaded machine under the
	// race detector still ask several times what the limit allows, so that
	// every algorithm must refuse (at the lab's 500/s a busy CI machine's
	// callers once asked for less than the limit, and nothing was refused).
	cfg.Rate = 100
	res, err := RunGlobal(context.Background(), env, algs, cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range res.Rows {
		t.Logf("%-10s %.2f s: %d allowed of %.0f expected (%+.2f%%), by replica %v; %d refused (%d from cache)",
			row.ID, row.Seconds, row.Allowed, row.Expected, row.ErrorPct, row.AllowedByReplica, row.Refused, row.Cached)
		if row.Errors > 0 {
			t.Errorf("%s: %d errors: %s", row.ID, row.Errors, row.FirstError)
		}
		// Three replicas on one key hold one limit: not three.
		if math.Abs(row.ErrorPct) > 5 {
			t.Errorf("%s allowed %d, expected %.0f: off by %.1f%%, want within 5%%", row.ID, row.Allowed, row.Expected, row.ErrorPct)
		}
		if row.Refused == 0 {
			t.Errorf("%s refused nothing from %d connections", row.ID, cfg.Connections)
		}
		for i, n := range row.AllowedByReplica {
			if n == 0 {
				t.Errorf("%s: replica %d was allowed nothing", row.ID, i)
			}
		}
	}
}

func TestRunWritesItsFilesAndCleansUp(t *testing.T) {
	env := labEnv(t)
	dir := t.TempDir()
	var out strings.Builder
	if err := Run(context.Background(), env, Config{Out: dir, Quick: true, Experiments: []int{4}, Stdout: &out}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"4. Atomicity", "users refused FOREVER", "atomicity.json", "Cleaned up"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the output lacks %q:\n%s", want, out.String())
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "atomicity.json")); err != nil {
		t.Error(err)
	}
	if n := countKeys(t, env); n != 0 {
		t.Errorf("%d keys left under %s", n, env.Prefix)
	}
}

func TestCleanupDeletesEveryKeyOfThePrefix(t *testing.T) {
	env := labEnv(t)
	ctx := context.Background()
	env.Prefix += "glob*[?]:" // a prefix with glob characters matches only itself
	for _, k := range []string{env.Prefix + "a", env.Prefix + "b:c", RedisRatePrefix + env.Prefix + "d"} {
		env.RDB.Set(ctx, k, 1, 0)
	}
	other := strings.TrimSuffix(env.Prefix, "glob*[?]:") + "globX?:keep"
	env.RDB.Set(ctx, other, 1, time.Minute)
	n, err := Cleanup(ctx, env.RDB, env.Prefix)
	if err != nil || n != 3 {
		t.Fatalf("Cleanup = %d, %v; want 3 keys deleted", n, err)
	}
	if c := countKeys(t, env); c != 0 {
		t.Errorf("%d keys left", c)
	}
	if env.RDB.Exists(ctx, other).Val() != 1 {
		t.Errorf("Cleanup deleted %s, outside its prefix", other)
	}
}

func countKeys(t *testing.T, env Env) int {
	t.Helper()
	n := 0
	ctx := context.Background()
	for _, p := range []string{env.Prefix, RedisRatePrefix + env.Prefix} {
		iter := env.RDB.Scan(ctx, 0, escapeGlob(p+"*"), 1000).Iterator()
		for iter.Next(ctx) {
			n++
		}
		if err := iter.Err(); err != nil {
			t.Fatal(err)
		}
	}
	return n
}

func TestMaxInWindow(t *testing.T) {
	ms := time.Millisecond
	ts := []time.Duration{-980 * ms, -140 * ms, -139 * ms, 50 * ms, 60 * ms, 860 * ms}
	// [−140, 860) holds four; 860 is one window after −140, so outside.
	if got := maxInWindow(ts, time.Second); got != 4 {
		t.Errorf("maxInWindow = %d, want 4", got)
	}
	if got := maxInWindow(nil, time.Second); got != 0 {
		t.Errorf("maxInWindow(nil) = %d", got)
	}
}

func TestParseExperiments(t *testing.T) {
	got, err := parseExperiments("5, 1,1")
	if err != nil || len(got) != 2 || got[0] != 1 || got[1] != 5 {
		t.Errorf("parseExperiments = %v, %v", got, err)
	}
	if _, err := parseExperiments("6"); err == nil {
		t.Error("experiment 6 accepted")
	}
}
