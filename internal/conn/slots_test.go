package conn_test

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/stagedoor/stagedoor/internal/conn"
	"github.com/stagedoor/stagedoor/internal/testenv"
)

// TestAServerOutOfConnectionSlotsIsUnavailable: a PostgreSQL at its
// max_connections turns a new connection away (FATAL 53300, "sorry, too many
// clients already") as the pool dials it. That is the database's outage, as a
// refused dial is, not the statement's error: it must not become a 500. It is
// exhausted, not broken: the pool's live connections are good.
func TestAServerOutOfConnectionSlotsIsUnavailable(t *testing.T) {
	t.Parallel()
	proxy := testenv.StartPostgresProxy(t, testenv.DatabaseURL(t))
	ctx := context.Background()
	db, err := conn.Postgres(ctx, proxy.URL, 4)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Ping(ctx); err != nil {
		t.Fatalf("through the proxy: %v", err)
	}
	proxy.SetFull(true)
	db.Reset() // the next acquire dials
	_, err = db.Begin(ctx)
	if err == nil || proxy.Refused() == 0 {
		t.Fatalf("Begin on a full server = %v (%d refused), want its refusal", err, proxy.Refused())
	}
	if !conn.Unavailable(err) || !conn.Exhausted(err) {
		t.Errorf("Unavailable = %v, Exhausted = %v for %v; want both", conn.Unavailable(err), conn.Exhausted(err), err)
	}
	proxy.SetFull(false)
	if err := db.Ping(ctx); err != nil {
		t.Errorf("once a slot is free again: %v", err)
	}
}

// TestADatabaseThatAllowsNoConnectionsIsUnavailable: a database its operator
// closed to new connections (ALLOW_CONNECTIONS false: SQLSTATE 55000 at the
// connect) is the database's outage, a 503, not the request's error.
func TestADatabaseThatAllowsNoConnectionsIsUnavailable(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := testenv.DatabaseURL(t)
	admin, err := conn.Postgres(ctx, url, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	var name string
	if err := admin.QueryRow(ctx, `SELECT current_database()`).Scan(&name); err != nil {
		t.Fatal(err)
	}
	closed := name + "_closed"
	if _, err := admin.Exec(ctx, `CREATE DATABASE `+closed+` ALLOW_CONNECTIONS false`); err != nil {
		t.Fatal(err)
	}
	defer admin.Exec(context.Background(), `DROP DATABASE IF EXISTS `+closed)
	c, err := pgx.Connect(ctx, strings.Replace(url, "/"+name+"?", "/"+closed+"?", 1))
	if err == nil {
		c.Close(ctx)
	}
	if err == nil || !conn.Unavailable(err) {
		t.Fatalf("connecting to a database that allows none = %v; want an error Unavailable says is the database's", err)
	}
}
