package conn_test

import (
	"context"
	"testing"

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
