package onsale_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"

	"github.com/stagedoor/stagedoor/internal/apiclient"
	"github.com/stagedoor/stagedoor/internal/apiclient/apitest"
	"github.com/stagedoor/stagedoor/internal/app"
	"github.com/stagedoor/stagedoor/internal/config"
	"github.com/stagedoor/stagedoor/internal/conn"
	"github.com/stagedoor/stagedoor/internal/payrail"
	"github.com/stagedoor/stagedoor/internal/ratelimit"
	"github.com/stagedoor/stagedoor/internal/testenv"
)

// adminToken is the instances' STAGEDOOR_ADMIN_TOKEN.
const adminToken = "onsale-test-admin-token"

// stack is a deployment of the test's own: three instances built by app.New
// as serve builds them, on one database and a private Redis Cluster (each with
// its own cluster client and pool), a Payrail stub whose ledger is in the same
// database, and HAProxy in front with make cluster's configuration.
type stack struct {
	cluster   *testenv.Cluster
	db        *pgxpool.Pool // for the simulator and the test
	instances []*instance
	edge      string // the URL of HAProxy
}

// instance is one of the three.
type instance struct {
	*app.App
	url string
}

// startStack starts the deployment.
func startStack(t *testing.T) *stack {
	t.Helper()
	ctx := context.Background()
	// go-redis logs every failed dial to stderr; serve sends them to its log.
	redis.SetLogger(conn.RedisLogger(slog.New(slog.NewJSONHandler(io.Discard, nil))))
	s := &stack{cluster: testenv.StartCluster(t)}
	dbURL := testenv.DatabaseURL(t)
	pool := func(size int) *pgxpool.Pool {
		db, err := conn.Postgres(ctx, dbURL, size)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(db.Close)
		return db
	}
	// PostgreSQL is shared with every other test (max_connections 100 in CI):
	// the stack takes about 30 connections at most, each instance 6 of its
	// pool and 2 of its listeners (credentials, limit settings), the
	// simulator 3 and Payrail 3.
	s.db = pool(3)
	pay, err := payrail.Open(ctx, pool(3), payrail.Config{Latency: 20 * time.Millisecond, LatencyJitter: 30 * time.Millisecond}, nil)
	if err != nil {
		t.Fatal(err)
	}
	payServer := httptest.NewServer(pay)
	t.Cleanup(payServer.Close)

	env := map[string]string{
		"REDIS_URL":                      s.cluster.URL,
		"STAGEDOOR_REDIS_PREFIX":         "sd:",
		"STAGEDOOR_REDIS_TIMEOUT":        "1s", // the race detector and a busy machine slow every call
		"PAYRAIL_URL":                    payServer.URL,
		"STAGEDOOR_BCRYPT_COST":          "4",
		"STAGEDOOR_TRUSTED_PROXIES":      edgeSource + "/32", // HAProxy alone; the clients dial from 127/8
		"STAGEDOOR_ADMIN_TOKEN":          adminToken,
		"STAGEDOOR_LIMIT_SIGNUP_ADDRESS": "1000/1s",
		"STAGEDOOR_DB_POOL":              "6",
		"STAGEDOOR_CHECKOUT_SLOTS":       "4",
		"STAGEDOOR_PAYMENT_TIMEOUT":      "2s",
		"STAGEDOOR_RECOVERY_AFTER":       "6s",
	}
	cfg, err := config.Load(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	var backends []backend
	for i := range 3 {
		rdb, err := conn.Redis(ctx, s.cluster.URL, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := rdb.(*conn.ClusterClient); !ok {
			t.Fatalf("REDIS_URL %s made a %T, not a cluster client", s.cluster.URL, rdb)
		}
		t.Cleanup(func() { rdb.Close() })
		logs := &testenv.LogBuffer{} // its warnings and errors, shown when the test fails
		logger := slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelWarn}))
		t.Cleanup(func() {
			if t.Failed() {
				t.Logf("instance %d's errors:\n%s", i+1, errorLines(logs.String(), 20))
			}
			if dir := os.Getenv("STAGEDOOR_ONSALE_REPORTS"); dir != "" { // with the reports: every warning
				_ = os.MkdirAll(dir, 0o755)
				_ = os.WriteFile(filepath.Join(dir, fmt.Sprintf("instance-%d.log", i+1)), []byte(logs.String()), 0o644)
			}
		})
		a, err := app.New(ctx, cfg, logger, app.WithDB(pool(cfg.DBPool)), app.WithRedis(rdb))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(a.Close)
		t.Cleanup(a.Start(ctx, app.All))
		server := httptest.NewServer(a.Handler)
		t.Cleanup(server.Close)
		s.instances = append(s.instances, &instance{App: a, url: server.URL})
		backends = append(backends, backend{Name: "i" + string(rune('1'+i)), Addr: strings.TrimPrefix(server.URL, "http://")})
	}
	s.edge = startEdge(t, backends)
	s.shadowWorkerUtilization(t)
	return s
}

// shadowWorkerUtilization puts the worker utilization shedder in shadow mode
// on every instance (through the admin API of the first): it measures the
// Go scheduler's latency, and here the three instances, the simulator's
// clients and the race detector share one process on a small machine, so
// its signal is the test binary's, not an instance's. In shadow it still
// decides and counts, and refuses nothing.
func (s *stack) shadowWorkerUtilization(t *testing.T) {
	t.Helper()
	a, err := api(t, s.instances[0].url, adminToken).PutLimitWithResponse(context.Background(),
		apiclient.LimitNameWorkerUtilization, apiclient.LimitChange{Mode: apiclient.LimitChangeModeShadow})
	apitest.Expect(t, a, err, http.StatusOK)
	set := time.Now()
	for i, in := range s.instances {
		if !testenv.Poll(time.Until(set.Add(5*time.Second)), 20*time.Millisecond, func() bool { return in.Utilization.Mode() == ratelimit.Shadow }) {
			t.Fatalf("instance %d: worker-utilization is %s 5 s after it was put in shadow", i+1, in.Utilization.Mode())
		}
	}
}

// errorLines are the last n ERROR lines of a JSON log.
func errorLines(log string, n int) string {
	var out []string
	for _, line := range strings.Split(log, "\n") {
		if strings.Contains(line, `"level":"ERROR"`) {
			out = append(out, line)
		}
	}
	return strings.Join(out[max(0, len(out)-n):], "\n")
}

// api is the generated client of an instance, straight (not through the
// edge), with token as its bearer (none when empty).
func api(t *testing.T, url, token string) *apiclient.ClientWithResponses {
	t.Helper()
	if token == "" {
		return apitest.Client(t, url)
	}
	return apitest.Client(t, url, apiclient.WithRequestEditorFn(apiclient.Bearer(token)))
}
