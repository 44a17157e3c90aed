// Package testenv gives each test real services of its own: a fresh PostgreSQL
// database cloned from a migrated template, and a Redis key space under a prefix
// of its own, both removed when the test ends.
//
// The services come from STAGEDOOR_TEST_DATABASE_URL and STAGEDOOR_TEST_REDIS_URL
// when set (make test sets them when it uses local services). Otherwise, in a
// build with -tags testcontainers (make test adds it when a Docker engine
// answers), PostgreSQL 15 and Redis 7 containers are started once per test binary
// with testcontainers-go. Otherwise the test fails with a message that says what
// to set. Nothing here is a mock.
//
// It is for tests only: no package of the program imports it.
package testenv

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"

	"github.com/stagedoor/stagedoor/migrations"
)

const help = `testenv: no PostgreSQL or Redis for the tests.
Set STAGEDOOR_TEST_DATABASE_URL (such as postgres://postgres:postgres@127.0.0.1:5432/postgres?sslmode=disable)
and STAGEDOOR_TEST_REDIS_URL (such as redis://127.0.0.1:6379/0), or start a Docker engine
and test with -tags testcontainers, or run "make test", which starts (or installs) local
services when no Docker engine answers, and adds the tag when one does`

// DatabaseURL creates a database for this test, cloned from the migrated template,
// and returns its URL. The database is dropped when the test ends.
func DatabaseURL(t testing.TB) string {
	t.Helper()
	server := postgresServerURL(t)
	template := migratedTemplate(t, server)

	name := "sdtest_" + randomHex(8)
	admin := connect(t, server)
	defer admin.Close(context.Background())
	if _, err := admin.Exec(context.Background(), fmt.Sprintf(`CREATE DATABASE %s TEMPLATE %s`, name, template)); err != nil {
		t.Fatalf("testenv: create database %s: %v", name, err)
	}
	t.Cleanup(func() { dropDatabase(t, server, name) })
	return withDatabase(server, name)
}

// EmptyDatabaseURL creates a database with no migrations applied, for tests of
// the migrations themselves. It is dropped when the test ends.
func EmptyDatabaseURL(t testing.TB) string {
	t.Helper()
	server := postgresServerURL(t)
	name := "sdtest_" + randomHex(8)
	admin := connect(t, server)
	defer admin.Close(context.Background())
	if _, err := admin.Exec(context.Background(), "CREATE DATABASE "+name); err != nil {
		t.Fatalf("testenv: create database %s: %v", name, err)
	}
	t.Cleanup(func() { dropDatabase(t, server, name) })
	return withDatabase(server, name)
}

// Postgres returns a pool on a fresh migrated database of this test's own.
func Postgres(t testing.TB) *pgxpool.Pool {
	t.Helper()
	pool, err := pgxpool.New(context.Background(), DatabaseURL(t))
	if err != nil {
		t.Fatalf("testenv: %v", err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// RedisURL returns the URL of the Redis server the tests share. Use it with
// RedisPrefix so that the test's keys do not meet another test's.
func RedisURL(t testing.TB) string {
	t.Helper()
	if u := os.Getenv("STAGEDOOR_TEST_REDIS_URL"); u != "" {
		return u
	}
	return containers(t).redisURL
}

// RedisPrefix returns a key prefix of this test's own on the shared Redis and
// deletes every key under it when the test ends.
func RedisPrefix(t testing.TB) string {
	t.Helper()
	prefix := "sdtest:" + randomHex(6) + ":"
	rawURL := RedisURL(t)
	t.Cleanup(func() { deleteKeys(t, rawURL, prefix) })
	return prefix
}

// Redis returns a client on the shared Redis and a key prefix of this test's own;
// every key under the prefix is deleted when the test ends.
func Redis(t testing.TB) (redis.UniversalClient, string) {
	t.Helper()
	rawURL := RedisURL(t)
	prefix := RedisPrefix(t)
	opts, err := redis.ParseURL(rawURL)
	if err != nil {
		t.Fatalf("testenv: STAGEDOOR_TEST_REDIS_URL: %v", err)
	}
	client := redis.NewClient(opts)
	t.Cleanup(func() { client.Close() })
	return client, prefix
}

func deleteKeys(t testing.TB, rawURL, prefix string) {
	opts, err := redis.ParseURL(rawURL)
	if err != nil {
		return
	}
	client := redis.NewClient(opts)
	defer client.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	iter := client.Scan(ctx, 0, prefix+"*", 1000).Iterator()
	var batch []string
	for iter.Next(ctx) {
		batch = append(batch, iter.Val())
		if len(batch) == 1000 {
			client.Unlink(ctx, batch...)
			batch = batch[:0]
		}
	}
	if len(batch) > 0 {
		client.Unlink(ctx, batch...)
	}
	if err := iter.Err(); err != nil {
		t.Logf("testenv: cleaning Redis keys %s*: %v", prefix, err)
	}
}

func postgresServerURL(t testing.TB) string {
	t.Helper()
	if u := os.Getenv("STAGEDOOR_TEST_DATABASE_URL"); u != "" {
		return u
	}
	return containers(t).postgresURL
}

var templates sync.Map // server URL → *templateOnce

type templateOnce struct {
	once sync.Once
	name string
	err  error
}

// migratedTemplate returns the name of a database holding every migration, made
// once per set of migrations. Test binaries run in parallel, so it is built under
// an advisory lock, under a temporary name, and renamed only when complete.
func migratedTemplate(t testing.TB, server string) string {
	t.Helper()
	v, _ := templates.LoadOrStore(server, &templateOnce{})
	tmpl := v.(*templateOnce)
	tmpl.once.Do(func() { tmpl.name, tmpl.err = buildTemplate(server) })
	if tmpl.err != nil {
		t.Fatalf("testenv: migrated template: %v", tmpl.err)
	}
	return tmpl.name
}

func buildTemplate(server string) (string, error) {
	ctx := context.Background()
	name := "sdtemplate_" + migrations.Fingerprint()
	admin, err := pgx.Connect(ctx, server)
	if err != nil {
		return "", fmt.Errorf("%w\n%s", err, help)
	}
	defer admin.Close(ctx)
	if _, err := admin.Exec(ctx, `SELECT pg_advisory_lock(727274)`); err != nil {
		return "", err
	}
	defer admin.Exec(ctx, `SELECT pg_advisory_unlock(727274)`)

	var exists bool
	if err := admin.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)`, name).Scan(&exists); err != nil {
		return "", err
	}
	if exists {
		return name, nil
	}
	building := name + "_building"
	if _, err := admin.Exec(ctx, `DROP DATABASE IF EXISTS `+building+` WITH (FORCE)`); err != nil {
		return "", err
	}
	if _, err := admin.Exec(ctx, `CREATE DATABASE `+building); err != nil {
		return "", err
	}
	quiet := slog.New(slog.NewTextHandler(discard{}, nil))
	if _, err := migrations.Up(ctx, withDatabase(server, building), quiet); err != nil {
		return "", err
	}
	if _, err := admin.Exec(ctx, `ALTER DATABASE `+building+` RENAME TO `+name); err != nil {
		return "", err
	}
	return name, nil
}

func dropDatabase(t testing.TB, server, name string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	admin, err := pgx.Connect(ctx, server)
	if err != nil {
		t.Logf("testenv: drop %s: %v", name, err)
		return
	}
	defer admin.Close(ctx)
	if _, err := admin.Exec(ctx, `DROP DATABASE IF EXISTS `+name+` WITH (FORCE)`); err != nil {
		t.Logf("testenv: drop %s: %v", name, err)
	}
}

func connect(t testing.TB, server string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), server)
	if err != nil {
		t.Fatalf("testenv: connect to %s: %v\n%s", redactURL(server), err, help)
	}
	return conn
}

// withDatabase returns the server URL with its database name replaced.
func withDatabase(server, name string) string {
	u, err := url.Parse(server)
	if err != nil || u.Scheme == "" {
		// A keyword/value connection string.
		return server + " dbname=" + name
	}
	u.Path = "/" + name
	return u.String()
}

func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparseable URL)"
	}
	return u.Redacted()
}

func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return strings.ToLower(hex.EncodeToString(b))
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
