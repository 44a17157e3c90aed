package httpapi_test

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/stagedoor/stagedoor/internal/apiclient"
	"github.com/stagedoor/stagedoor/internal/auth"
	"github.com/stagedoor/stagedoor/internal/payrail"
	"github.com/stagedoor/stagedoor/internal/testenv"
)

// TestAFullDatabaseIs503: PostgreSQL at its max_connections (a machine whose
// server many programs share) turns the instance's new connections away with
// FATAL 53300 "sorry, too many clients already". A checkout that needs one
// is then answered 503 service-unavailable with Retry-After, never a 500;
// nothing is written or charged, and the buyer's retry with the same
// Idempotency-Key, once a slot is free, is charged once and confirmed.
func TestAFullDatabaseIs503(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dbURL := testenv.DatabaseURL(t)
	direct, err := pgxpool.New(ctx, dbURL) // Payrail's ledger and the test's reads
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(direct.Close)
	proxy := testenv.StartPostgresProxy(t, dbURL)
	db, err := pgxpool.New(ctx, proxy.URL) // the instance's, through the proxy
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	p := startPayrailOn(t, direct, payrail.Config{})
	logs := &testenv.LogBuffer{}
	// A payment timeout far beyond Payrail's latency: the retry's checkout
	// answered pending because a loaded machine was slow (seen in CI: 202) is
	// not what this test is about.
	ts := startInstance(t, instance{db: db, logs: logs,
		env: limitEnv("PAYRAIL_URL", p.url, "STAGEDOOR_LIMIT_BUYER_CONCURRENCY", "1000",
			"STAGEDOOR_PAYMENT_TIMEOUT", "20s", "STAGEDOOR_RECOVERY_AFTER", "1m")})
	org := newAccount(t, ts, auth.Organizer)
	event, seats := newEvent(t, ts, org, eventBody(1, 4))
	buyer := newAccount(t, ts, auth.Buyer)
	s := &shop{testServer: ts, payrail: p, org: org, event: event, seats: seats}
	holdID := s.hold(t, buyer, seats[0])

	proxy.SetFull(true)
	db.Reset() // every connection the instance needs from now on is a new one
	body := orderBody(holdID, "tok_visa")
	if a := s.checkout(t, buyer, body, "full-1"); a.StatusCode != 503 || !a.problem(t).is("service-unavailable") || a.Header.Get("Retry-After") == "" {
		t.Errorf("checkout with PostgreSQL full = %d %s (Retry-After %q), want 503 service-unavailable",
			a.StatusCode, a.raw, a.Header.Get("Retry-After"))
	}
	if proxy.Refused() == 0 {
		t.Fatal("the proxy refused no connection: the test tested nothing")
	}
	if n := len(p.charges(t)); n != 0 {
		t.Errorf("%d charges while PostgreSQL was full, want 0", n)
	}

	proxy.SetFull(false)
	if a := s.checkout(t, buyer, body, "full-1"); a.StatusCode != 201 || as[apiclient.Order](t, a).Status != "confirmed" {
		t.Errorf("the retry with a slot free = %d %s, want 201 confirmed", a.StatusCode, a.raw)
	}
	if n := len(p.charges(t)); n != 1 {
		t.Errorf("%d charges, want 1", n)
	}
	for line := range strings.Lines(logs.String()) {
		if strings.Contains(line, `"request failed"`) {
			t.Errorf("a full PostgreSQL was logged as a failed request: %s", strings.TrimSpace(line))
		}
	}
	if v := testenv.MoneyViolations(t, direct); len(v) > 0 {
		t.Errorf("the money invariant is violated:\n%s", strings.Join(v, "\n"))
	}
}
