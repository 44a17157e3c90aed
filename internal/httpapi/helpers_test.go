package httpapi

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/stagedoor/stagedoor/internal/auth"
	"github.com/stagedoor/stagedoor/internal/checkout"
	"github.com/stagedoor/stagedoor/internal/config"
	"github.com/stagedoor/stagedoor/internal/conn"
	"github.com/stagedoor/stagedoor/internal/event"
	"github.com/stagedoor/stagedoor/internal/hold"
	"github.com/stagedoor/stagedoor/internal/ratelimit"
	"github.com/stagedoor/stagedoor/internal/scan"
	"github.com/stagedoor/stagedoor/internal/testenv"
	"github.com/stagedoor/stagedoor/internal/waitroom"
)

// testServer is a Server on real services, served by an httptest server.
type testServer struct {
	*Server
	http *httptest.Server
}

// instance says what a test server runs on. Zero fields get the test's own
// database, the shared Redis and a key prefix of their own; two servers given
// the same fields behave as two instances of one deployment.
type instance struct {
	env         map[string]string
	db          *pgxpool.Pool
	rdb         redis.UniversalClient
	redisPrefix string
	admission   time.Duration // how long a waiting-room admission lasts; zero: 15 minutes
	logs        io.Writer     // where the server logs, as JSON at debug level; nil discards
}

func newTestServer(t *testing.T, env map[string]string, db *pgxpool.Pool, rdb redis.UniversalClient) *testServer {
	t.Helper()
	return startInstance(t, instance{env: env, db: db, rdb: rdb})
}

func startInstance(t testing.TB, in instance) *testServer {
	t.Helper()
	env := map[string]string{"STAGEDOOR_BCRYPT_COST": "4"}
	for k, v := range in.env {
		env[k] = v
	}
	cfg, err := config.Load(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if in.db == nil {
		in.db = testenv.Postgres(t)
	}
	if in.rdb == nil {
		in.rdb, err = conn.Redis(testenv.RedisURL(t))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { in.rdb.Close() })
	}
	if in.redisPrefix == "" {
		in.redisPrefix = testenv.RedisPrefix(t)
	}
	registry := prometheus.NewRegistry()
	events := event.NewService(in.db)
	if in.logs == nil {
		in.logs = io.Discard
	}
	logger := slog.New(slog.NewJSONHandler(in.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	s := New(Deps{
		Config:   cfg,
		Logger:   logger,
		DB:       in.db,
		Redis:    in.rdb,
		Registry: registry,
		Limiter: ratelimit.New(in.rdb, ratelimit.Options{
			Prefix:     in.redisPrefix,
			Timeout:    cfg.RedisTimeout,
			Registerer: registry,
			Limits:     cfg.LimitDefinitions(),
		}),
		Auth:   auth.NewService(in.db, cfg.BcryptCost),
		Events: events,
		Holds:  hold.NewService(in.db, events, cfg.HoldTTL), // no sweeper: tests start one where needed
		Checkout: checkout.NewService(in.db,
			checkout.NewPayments(checkout.PaymentsOptions{BaseURL: cfg.PayrailURL, Timeout: cfg.PaymentTimeout}),
			checkout.Options{RecoverAfter: cfg.RecoveryAfter, Logger: logger, Registerer: registry}),
		Scans: scan.NewService(in.db),
		WaitRoom: waitroom.New(in.rdb, waitroom.Options{Prefix: in.redisPrefix, Timeout: cfg.RedisTimeout,
			Admission: in.admission}),
	})
	s.settings = runLimitSettings(t, cfg, in.db, s.limiter, registry) // as serve does, before serving
	ts := &testServer{Server: s}
	ts.http = httptest.NewServer(s)
	t.Cleanup(ts.http.Close)
	return ts
}

// do sends one request; header holds name, value pairs. The body is decoded
// as a JSON object when it is one.
func (ts *testServer) do(t *testing.T, method, path, body string, header ...string) (*http.Response, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(method, ts.http.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var decoded map[string]any
	_ = json.Unmarshal(raw, &decoded)
	return resp, decoded
}

// redisClient is a client on the Redis at url (such as a testenv.PrivateRedis
// that the test stops), closed when the test ends.
func redisClient(t testing.TB, url string) redis.UniversalClient {
	t.Helper()
	rdb, err := conn.Redis(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rdb.Close() })
	return rdb
}

// postgresPool is a pool of size connections on a fresh database of the test's
// own, for tests and benchmarks that need more connections than the default.
func postgresPool(t testing.TB, size int) *pgxpool.Pool {
	t.Helper()
	db, err := conn.Postgres(context.Background(), testenv.DatabaseURL(t), size)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	return db
}
