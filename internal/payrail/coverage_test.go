package payrail

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/stagedoor/stagedoor/internal/testenv"
)

// holdKey takes key's lock in a transaction of the test's own, so that a
// charge request with key waits for its turn until release is called.
func holdKey(t *testing.T, db *pgxpool.Pool, key string) (release func()) {
	t.Helper()
	tx, err := db.Begin(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(t.Context(), `SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, key); err != nil {
		t.Fatal(err)
	}
	released := false
	release = func() {
		if !released {
			released = true
			_ = tx.Rollback(context.Background())
		}
	}
	t.Cleanup(release)
	return release
}

// waitingForLocks waits until n sessions wait for an advisory lock.
func waitingForLocks(t *testing.T, db *pgxpool.Pool, n int, what string) {
	t.Helper()
	if !testenv.Poll(10*time.Second, 5*time.Millisecond, func() bool { return advisoryWaiters(t, db) >= n }) {
		t.Fatalf("%s: never waited for its lock", what)
	}
}

// advisoryWaiters counts the sessions of db's database waiting for an advisory lock.
func advisoryWaiters(t *testing.T, db *pgxpool.Pool) int {
	t.Helper()
	var waiting int
	if err := db.QueryRow(t.Context(), `SELECT count(*) FROM pg_locks l JOIN pg_database d ON d.oid = l.database
		WHERE d.datname = current_database() AND l.locktype = 'advisory' AND NOT l.granted`).Scan(&waiting); err != nil {
		t.Fatal(err)
	}
	return waiting
}

// lookup is GET /charges?idempotency_key=key, decoded.
type lookup struct {
	response
	Coverage
}

// TestALookupWaitsForTheChargeBeingMade: a charge whose request has begun
// (its transaction open, waiting for its key) but is not yet written cannot
// be vouched away: a lookup of its key made meanwhile answers, once the
// charge is written, either the charge or a 404 whose complete_through is no
// later than the charge's created_at. (Before the coverage lock, the lookup
// answered at once: 404, complete through a moment after the charge's
// transaction began, and the charge's created_at was that beginning.)
func TestALookupWaitsForTheChargeBeingMade(t *testing.T) {
	t.Parallel()
	db := testenv.Postgres(t)
	s, ts, _ := startOn(t, db, Config{})
	release := holdKey(t, db, "in-the-making")
	charged := make(chan response, 1)
	go func() {
		r, err := post(context.Background(), t, ts, "in-the-making", chargeBody(TokenVisa))
		if err != nil {
			t.Error(err)
		}
		charged <- r
	}()
	waitingForLocks(t, db, 1, "the charge")

	looked := make(chan lookup, 1)
	go func() { // not get: it fails the test with t.Fatalf, which only the test's goroutine may call
		var l lookup
		req, err := http.NewRequest(http.MethodGet, ts.URL+"/charges?idempotency_key=in-the-making", nil)
		if err == nil {
			l.response, err = do(ts, req)
		}
		if err == nil {
			err = decodeInto(l.raw, &l.Coverage)
		}
		if err != nil {
			t.Errorf("the lookup: %v", err)
		}
		looked <- l
	}()
	// The lookup either answered already (the hole this test closes) or
	// waits for the charge's coverage lock.
	var early *lookup
	if !testenv.Poll(10*time.Second, 5*time.Millisecond, func() bool {
		select {
		case l := <-looked:
			early = &l
			return true
		default:
		}
		return advisoryWaiters(t, db) >= 2
	}) {
		t.Fatal("the lookup neither answered nor waited")
	}
	release()
	if r := <-charged; r.status != 201 {
		t.Fatalf("the charge = %d %s", r.status, r.raw)
	}
	l := early
	if l == nil {
		got := <-looked
		l = &got
	}
	made := charges(t, s)[0]
	switch l.status {
	case 200:
	case 404:
		if l.CompleteThrough.After(made.CreatedAt) {
			t.Errorf("a lookup answered 404 complete through %s, but the charge it missed was made at %s",
				l.CompleteThrough.Format(time.RFC3339Nano), made.CreatedAt.Format(time.RFC3339Nano))
		}
	default:
		t.Errorf("the lookup = %d %s", l.status, l.raw)
	}
}

// TestAClientGoneBeforeItsTurnIsChargedNothing: a charge request waits for
// its key (another request with it is being decided); its client gives up
// meanwhile. When its turn comes nothing is charged, and a lookup proves it.
func TestAClientGoneBeforeItsTurnIsChargedNothing(t *testing.T) {
	t.Parallel()
	db := testenv.Postgres(t)
	s, ts, logs := startOn(t, db, Config{})
	release := holdKey(t, db, "gone-early")
	ctx, cancel := context.WithCancel(t.Context())
	answered := make(chan error, 1)
	go func() {
		_, err := post(ctx, t, ts, "gone-early", chargeBody(TokenVisa))
		answered <- err
	}()
	waitingForLocks(t, db, 1, "the charge")
	asked := time.Now()
	cancel()
	if err := <-answered; err == nil {
		t.Fatal("the request was answered though its client gave up")
	}
	release()
	if !testenv.Poll(10*time.Second, 5*time.Millisecond, func() bool {
		return strings.Contains(logs.String(), "client went away before its charge was made")
	}) {
		t.Fatalf("the request's turn never came; logs:\n%s", logs)
	}
	if n := len(charges(t, s)); n != 0 {
		t.Errorf("%d charges for a client gone before its turn, want none", n)
	}
	var cov Coverage
	if g := get(t, ts, "/charges?idempotency_key=gone-early", &cov); g.status != 404 || cov.CompleteThrough.Before(asked) {
		t.Errorf("the lookup = %d %s; want 404 complete through after the request", g.status, g.raw)
	}
}
