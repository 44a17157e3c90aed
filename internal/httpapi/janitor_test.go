package httpapi_test

import (
	"context"
	"testing"

	"github.com/stagedoor/stagedoor/internal/auth"
)

// TestJanitorDeletesOnlyWhatNoOneNeeds reproduces the rest of the ninth
// finding: expired sessions and Idempotency-Keys were never deleted. The
// janitor deletes expired sessions and devices, keys older than 24 hours and
// holds that ended over a week ago without an order, and nothing else: a live
// session, a fresh key, a recently ended hold and an order's hold stay.
func TestJanitorDeletesOnlyWhatNoOneNeeds(t *testing.T) {
	t.Parallel()
	s := newShop(t, 0)
	ctx := context.Background()
	exec := func(sql string, args ...any) {
		t.Helper()
		if _, err := s.DB.Exec(ctx, sql, args...); err != nil {
			t.Fatal(err)
		}
	}
	buyer := newAccount(t, s.testServer, auth.Buyer)
	stale := newAccount(t, s.testServer, auth.Buyer) // its session and device expire
	exec(`UPDATE sessions SET expires_at = now() - interval '1 second'
		WHERE account_id = $1`, stale.id)
	exec(`UPDATE devices SET expires_at = now() - interval '1 second' WHERE account_id = $1`, stale.id)

	bought := s.hold(t, buyer, s.seats[0])
	if a := s.checkout(t, buyer, orderBody(bought, "tok_visa"), "old-key"); a.StatusCode != 201 {
		t.Fatalf("checkout = %d %s", a.StatusCode, a.raw)
	}
	if a := s.checkout(t, buyer, orderBody(s.hold(t, buyer, s.seats[1]), "tok_visa"), "fresh-key"); a.StatusCode != 201 {
		t.Fatalf("checkout = %d %s", a.StatusCode, a.raw)
	}
	exec(`UPDATE idempotency_keys SET created_at = now() - interval '25 hours' WHERE key = 'old-key'`)
	oldHold, recentHold := s.hold(t, buyer, s.seats[2]), s.hold(t, buyer, s.seats[3])
	for _, h := range []string{oldHold, recentHold} {
		if a := s.request(t, "DELETE", "/v1/holds/"+h, "", buyer.bearer()...); a.StatusCode != 204 {
			t.Fatalf("release = %d", a.StatusCode)
		}
	}
	exec(`UPDATE holds SET ended_at = now() - interval '8 days' WHERE id IN ($1, $2)`, oldHold, bought)

	deleted, err := s.Janitor.RunOnce(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{"sessions_and_devices": 2, "idempotency_keys": 1, "holds": 1}
	for what, n := range want {
		if deleted[what] != n {
			t.Errorf("deleted %v, want %v", deleted, want)
			break
		}
	}
	var left struct{ sessions, devices, keys, holds int }
	if err := s.DB.QueryRow(ctx, `SELECT
		(SELECT count(*) FROM sessions WHERE account_id = $1), (SELECT count(*) FROM devices WHERE account_id = $1),
		(SELECT count(*) FROM idempotency_keys WHERE key = 'fresh-key'),
		(SELECT count(*) FROM holds WHERE id IN ($2, $3))`, buyer.id, recentHold, bought).
		Scan(&left.sessions, &left.devices, &left.keys, &left.holds); err != nil {
		t.Fatal(err)
	}
	if left.sessions != 1 || left.devices != 1 || left.keys != 1 || left.holds != 2 {
		t.Errorf("left %+v: the janitor deleted what is still needed", left)
	}
	if a := s.request(t, "GET", "/v1/me", "", buyer.bearer()...); a.StatusCode != 200 {
		t.Errorf("a live session after the janitor = %d", a.StatusCode)
	}
	if again, err := s.Janitor.RunOnce(ctx); err != nil || again["holds"]+again["idempotency_keys"]+again["sessions_and_devices"] != 0 {
		t.Errorf("a second pass deleted %v (%v), want nothing", again, err)
	}
}
