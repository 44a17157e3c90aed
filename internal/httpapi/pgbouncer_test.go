package httpapi_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/stagedoor/stagedoor/internal/apiclient"
	"github.com/stagedoor/stagedoor/internal/app"
	"github.com/stagedoor/stagedoor/internal/auth"
	"github.com/stagedoor/stagedoor/internal/conn"
	"github.com/stagedoor/stagedoor/internal/ids"
	"github.com/stagedoor/stagedoor/internal/payrail"
	"github.com/stagedoor/stagedoor/internal/ratelimit"
	"github.com/stagedoor/stagedoor/internal/testenv"
)

// signUp registers an account of kind through the API of ts and logs it in
// through the API of logIn: a testAccount made the way a client makes one.
func signUp(t *testing.T, ts, logIn *testServer, kind string) testAccount {
	t.Helper()
	email := fmt.Sprintf("%s-%s@example.com", kind, ids.New())
	a := ts.request(t, "POST", "/v1/"+kind+"s", fmt.Sprintf(`{"email":%q,"password":"correct horse","name":"Test"}`, email))
	if a.StatusCode != 201 {
		t.Fatalf("sign up %s = %d %s", email, a.StatusCode, a.raw)
	}
	return testAccount{id: as[accountJSON](t, a).ID, token: login(t, logIn, email), email: email}
}

// TestThroughPgBouncer: two instances whose DATABASE_URL is a PgBouncer in
// transaction mode, with 3 server connections for both (their transactions
// share them), and whose STAGEDOOR_DIRECT_DATABASE_URL is PostgreSQL itself,
// every background loop running as serve runs them. The whole flow answers
// as it does on PostgreSQL (signup, login, an event, a hold, a checkout through
// Payrail, a scanner key, a scan admitted once), a limit set on one instance is
// in force on the other, a logout on one is refused on the other at once, and
// what needs a session of its own has one on PostgreSQL: the four listeners,
// and recovery's advisory lock, never left behind on a server connection.
func TestThroughPgBouncer(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	direct := testenv.DatabaseURL(t)
	bouncer := testenv.StartPgBouncer(t, direct)
	db, err := pgxpool.New(ctx, direct) // the test's own look at PostgreSQL
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	// Payrail's ledger in the same database (so that the money invariant can be
	// checked), through PgBouncer as "stagedoor payrail" opens it there.
	ledger, err := conn.PostgresPooler(ctx, bouncer.URL, 4)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ledger.Close)
	p := startPayrailOn(t, ledger, payrail.Config{})
	rdb, prefix := testenv.Redis(t)
	in := instance{rdb: rdb, redisPrefix: prefix, ownPools: true, loops: app.All, env: limitEnv(
		"DATABASE_URL", bouncer.URL, "STAGEDOOR_DIRECT_DATABASE_URL", direct,
		"STAGEDOOR_DB_POOL", "8", "STAGEDOOR_CHECKOUT_SLOTS", "4",
		"PAYRAIL_URL", p.url, "STAGEDOOR_ADMIN_TOKEN", adminToken)}
	var logs [2]testenv.LogBuffer
	in.logs = &logs[0]
	one := startInstance(t, in)
	in.logs = &logs[1]
	two := startInstance(t, in)
	// What went wrong inside: an ERROR line, or an outage of a dependency.
	troubles := func() (out []string) {
		for i := range logs {
			for _, line := range logs[i].Lines(t) {
				if line["level"] == "ERROR" || line["msg"] == "dependency unavailable" {
					out = append(out, fmt.Sprintf("instance %d: %v", i+1, line))
				}
			}
		}
		return out
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the instances' troubles:\n%s", strings.Join(troubles(), "\n"))
		}
	})

	// The flow, its steps alternating between the instances.
	org, buyer := signUp(t, one, two, "organizer"), signUp(t, two, one, "buyer")
	event, seats := newEvent(t, one, org, eventBody(2, 5))
	a := two.request(t, "POST", "/v1/holds", holdBody(event, seats[0], seats[1]), buyer.bearer()...)
	if a.StatusCode != 201 {
		t.Fatalf("hold = %d %s", a.StatusCode, a.raw)
	}
	a = one.request(t, "POST", "/v1/orders", orderBody(as[holdJSON](t, a).ID, "tok_visa"),
		append(buyer.bearer(), "Idempotency-Key", "pgbouncer-1")...)
	order := as[apiclient.Order](t, a)
	if a.StatusCode != 201 || order.Status != "confirmed" || len(order.Tickets) != 2 {
		t.Fatalf("checkout = %d %s", a.StatusCode, a.raw)
	}
	if a := two.request(t, "GET", "/v1/orders/"+order.Id.String(), "", buyer.bearer()...); a.StatusCode != 200 || as[apiclient.Order](t, a).Status != "confirmed" {
		t.Errorf("the order on the other instance = %d %s", a.StatusCode, a.raw)
	}
	_, key := newScannerKey(t, two, org, event)
	code := *order.Tickets[0].Code
	a = one.request(t, "POST", "/v1/scans", fmt.Sprintf(`{"code":%q}`, code), "X-Api-Key", key)
	if adm := as[admissionJSON](t, a); a.StatusCode != 200 || adm.Result != "admitted" || adm.TicketID != order.Tickets[0].Id.String() {
		t.Fatalf("scan = %d %s", a.StatusCode, a.raw)
	}
	wantRejected(t, "the second scan, on the other instance",
		two.request(t, "POST", "/v1/scans", fmt.Sprintf(`{"code":%q}`, code), "X-Api-Key", key), 409, "already_scanned")

	// A limit set on one is in force on two: hold-buyer 1 an hour.
	one.putLimit(t, "hold-buyer", `{"mode":"enforce","rate":1,"period_ms":3600000,"burst":1}`)
	eventually(t, "hold-buyer 1/1h in force on the other instance", func() bool {
		s, _ := two.Limiter.Setting("hold-buyer")
		return s.Limit == ratelimit.Limit{Rate: 1, Period: time.Hour, Burst: 1}
	})
	late := newAccount(t, two, auth.Buyer)
	if a := two.request(t, "POST", "/v1/holds", holdBody(event, seats[2]), late.bearer()...); a.StatusCode != 201 {
		t.Fatalf("the first hold under 1/1h = %d %s", a.StatusCode, a.raw)
	}
	if a := two.request(t, "POST", "/v1/holds", holdBody(event, seats[3]), late.bearer()...); a.StatusCode != 429 || a.problem(t).Limit != "hold-buyer" {
		t.Errorf("the second hold under 1/1h = %d %s, want 429 hold-buyer", a.StatusCode, a.raw)
	}

	// A logout on one: two, which trusted the session from its cache, refuses
	// it as soon as the notification arrives, well before the cache's bound.
	if a := two.request(t, "GET", "/v1/me", "", buyer.bearer()...); a.StatusCode != 200 {
		t.Fatalf("the other instance does not know the session: %d %s", a.StatusCode, a.raw)
	}
	if a := one.request(t, "POST", "/v1/logout", "", buyer.bearer()...); a.StatusCode != 204 {
		t.Fatalf("logout = %d %s", a.StatusCode, a.raw)
	}
	refusedSoon(t, "the other instance refusing the session after the logout", func() answer {
		return two.request(t, "GET", "/v1/me", "", buyer.bearer()...)
	})

	// Sessions of their own on PostgreSQL: the limit-settings and credential
	// listeners of both instances, four at once (PgBouncer has three server
	// connections in all), each waiting in its LISTEN.
	eventually(t, "four listening sessions on PostgreSQL", func() bool {
		var n int
		err := db.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()
			AND application_name IN ('stagedoor-limit-settings', 'stagedoor-credentials') AND query LIKE 'LISTEN %'`).Scan(&n)
		return err == nil && n == 4
	})
	// Recovery: a pass on each instance (the loops run theirs too), its
	// advisory lock taken and given back on a session of its own on
	// PostgreSQL, and never left held (through PgBouncer, the unlock could run
	// on another server connection than the lock).
	for _, ts := range []*testServer{one, two} {
		if _, err := ts.Checkout.Recover(ctx); err != nil {
			t.Fatalf("recovery through PgBouncer: %v", err)
		}
	}
	var unlocked int
	if err := db.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()
		AND application_name = $1 AND query LIKE 'SELECT pg_advisory_unlock(%'`, conn.SessionsName).Scan(&unlocked); err != nil || unlocked == 0 {
		t.Errorf("no session of its own on PostgreSQL gave recovery's lock back (%d, %v)", unlocked, err)
	}
	// The loops of both instances take the lock again every pass (on a
	// loaded machine, most of the time): what must never be is a holder
	// other than a session of its own, such as a server connection of
	// PgBouncer's that a lock taken through it was left on. Only this test's
	// database: the other tests' instances take the same lock in theirs.
	var strays int
	if err := db.QueryRow(ctx, `SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
		WHERE l.locktype = 'advisory' AND l.objid = $1 AND a.application_name IS DISTINCT FROM $2
		AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
		0x5eed_0006, conn.SessionsName).Scan(&strays); err != nil || strays != 0 {
		t.Errorf("recovery's advisory lock is held by %d sessions not of its own (%v): taken through PgBouncer and left", strays, err)
	}
	// The janitor's and the hold sweeper's queries, through PgBouncer too.
	if _, err := one.Janitor.RunOnce(ctx); err != nil {
		t.Errorf("janitor through PgBouncer: %v", err)
	}
	if _, err := two.Holds.Sweep(ctx); err != nil {
		t.Errorf("hold sweeper through PgBouncer: %v", err)
	}
	for _, ts := range []*testServer{one, two} {
		if a := ts.request(t, "GET", "/readyz", ""); a.StatusCode != 200 {
			t.Errorf("readyz = %d %s", a.StatusCode, a.raw)
		}
	}
	if v := testenv.MoneyViolations(t, db); len(v) > 0 {
		t.Errorf("the money invariant is violated:\n%s", strings.Join(v, "\n"))
	}
	if tr := troubles(); len(tr) > 0 && !t.Failed() {
		t.Errorf("the instances logged troubles through PgBouncer:\n%s", strings.Join(tr, "\n"))
	}
}
