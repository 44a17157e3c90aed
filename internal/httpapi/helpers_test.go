package httpapi_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/labstack/echo/v4"
	"github.com/redis/go-redis/v9"

	"github.com/stagedoor/stagedoor/internal/app"
	"github.com/stagedoor/stagedoor/internal/auth"
	"github.com/stagedoor/stagedoor/internal/config"
	"github.com/stagedoor/stagedoor/internal/conn"
	"github.com/stagedoor/stagedoor/internal/testenv"
)

// testServer is an instance built by app.New, as serve builds it, on real
// services, served by an httptest server.
type testServer struct {
	*app.App
	// checked is the App's handler behind the contract check (contract_test.go);
	// http serves it.
	checked http.Handler
	http    *httptest.Server
	// metrics serves the metrics listener's handler (GET /metrics), apart
	// from the API, as serve does on STAGEDOOR_METRICS_ADDR.
	metrics *httptest.Server
}

// instance says what a test server runs on. Zero fields get the test's own
// database, the shared Redis and a key prefix of their own; two servers given
// the same fields behave as two instances of one deployment.
type instance struct {
	env         map[string]string
	db          *pgxpool.Pool
	rdb         redis.UniversalClient
	redisPrefix string
	admission   time.Duration    // how long a waiting-room admission lasts; zero: 15 minutes
	roomClock   func() time.Time // the clock that ages the waiting room's progress; nil: time.Now
	logs        io.Writer        // where the server logs, as JSON at debug level; nil discards
	routes      func(*echo.Echo) // routes added behind the API's rings
	// ownPools: app.New opens DATABASE_URL (and STAGEDOOR_DIRECT_DATABASE_URL)
	// of env itself, as serve does, instead of being given db.
	ownPools bool
	// loops are the background loops the instance runs; zero: the settings
	// and credential watchers.
	loops app.Loops
}

func newTestServer(t *testing.T, env map[string]string, db *pgxpool.Pool, rdb redis.UniversalClient) *testServer {
	t.Helper()
	return startInstance(t, instance{env: env, db: db, rdb: rdb})
}

// startInstance builds an instance with app.New and runs its limit-settings
// and credential watchers, as serve does (the sweeper and recovery are left to the tests that
// want them, which call them directly or ask for them in in.loops).
func startInstance(t testing.TB, in instance) *testServer {
	t.Helper()
	if in.db == nil && !in.ownPools {
		in.db = testenv.Postgres(t)
	}
	if in.rdb == nil {
		in.rdb = redisClient(t, testenv.RedisURL(t))
	}
	if in.redisPrefix == "" {
		in.redisPrefix = testenv.RedisPrefix(t)
	}
	env := map[string]string{"STAGEDOOR_BCRYPT_COST": "4", "STAGEDOOR_REDIS_PREFIX": in.redisPrefix,
		// A Redis deadline long enough that a loaded test machine never makes a
		// limit fail open or fall back to its in-process bucket (the default
		// 50ms is a production choice); the tests of a slow Redis set their own.
		"STAGEDOOR_REDIS_TIMEOUT": "2s",
		// Likewise a payment deadline that a charge on a loaded test machine
		// does not outlast (the default 5 s answered a plain checkout 202 in
		// CI); the tests of a slow or silent Payrail set their own.
		"STAGEDOOR_PAYMENT_TIMEOUT": "20s",
		// Every test signs its accounts up from 127.0.0.1; the tests of
		// signup-address set it themselves.
		"STAGEDOOR_LIMIT_SIGNUP_ADDRESS": "1000/1s",
		// Many tests hold, release and hold the same seats again as one
		// buyer; the tests of the cooldown set it themselves.
		"STAGEDOOR_REHOLD_COOLDOWN": "0",
		// The worker-utilization shedder measures this machine's scheduler,
		// which the other tests (and other packages' tests) load: left to
		// enforce, it refuses a test's requests that have nothing to do with
		// it. In shadow it still runs and counts; its own tests set it.
		"STAGEDOOR_WORKER_UTILIZATION": "shadow"}
	for k, v := range in.env {
		env[k] = v
	}
	cfg, err := config.Load(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	level := slog.LevelDebug
	if in.logs == nil { // nobody reads them: the production level, so no debug line costs the benchmarks
		in.logs, level = io.Discard, slog.LevelInfo
	}
	logger := slog.New(slog.NewJSONHandler(in.logs, &slog.HandlerOptions{Level: level}))
	opts := []app.Option{app.WithRedis(in.rdb), app.WithAdmission(in.admission), app.WithRoutes(in.routes), app.WithRoomClock(in.roomClock)}
	if !in.ownPools {
		opts = append(opts, app.WithDB(in.db))
	}
	a, err := app.New(context.Background(), cfg, logger, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	if in.loops == 0 {
		in.loops = app.SettingsWatcher | app.CredentialWatcher
	}
	t.Cleanup(a.Start(context.Background(), in.loops))
	waitFor(t, 5*time.Second, "the credential watcher listening", a.Auth.Watching)
	ts := &testServer{App: a, checked: checkContract(t, a.Handler)}
	ts.http = httptest.NewServer(ts.checked)
	t.Cleanup(ts.http.Close)
	ts.metrics = httptest.NewServer(a.Handler.Metrics())
	t.Cleanup(ts.metrics.Close)
	return ts
}

// redisClient is a client on the Redis at url (such as a testenv.PrivateRedis
// that the test stops), closed when the test ends.
func redisClient(t testing.TB, url string) redis.UniversalClient {
	t.Helper()
	rdb, err := conn.Redis(context.Background(), url, nil)
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

// refusedSoon polls ask until it answers 401, for up to half the credential
// cache's bound (auth.CredentialTTL/2): a revocation on one instance reaches
// the others by its notification, not by their caches' expiry.
func refusedSoon(t *testing.T, what string, ask func() answer) {
	t.Helper()
	testenv.EventuallyNil(t, auth.CredentialTTL/2, func() error {
		if a := ask(); a.StatusCode != 401 {
			return fmt.Errorf("%d %s", a.StatusCode, a.raw)
		}
		return nil
	}, what)
}

// waitFor polls cond for up to limit (testenv.Eventually).
func waitFor(t testing.TB, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	testenv.Eventually(t, limit, cond, what)
}

// atOnce runs fn(0) … fn(n-1) at once (testenv.AtOnce).
func atOnce(n int, fn func(i int)) { testenv.AtOnce(n, fn) }
