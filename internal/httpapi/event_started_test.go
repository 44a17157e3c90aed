package httpapi_test

import (
	"context"
	"testing"

	"github.com/stagedoor/stagedoor/internal/auth"
)

// TestNothingIsSoldOnceTheEventStarts: once an event's starts_at has passed
// (moved back in the database rather than waited for), a hold is 409
// event-started, on an instance that has the event cached (the database's
// clock decides) and on one that reads it afresh; and a hold made before the
// start cannot be checked out: 409 event-started, no charge, no order, the
// hold still active and its seat unsold.
func TestNothingIsSoldOnceTheEventStarts(t *testing.T) {
	t.Parallel()
	s := newShop(t, 0)
	buyer := newAccount(t, s.testServer, auth.Buyer)
	held := s.hold(t, buyer, s.seats[0])
	if _, err := s.DB.Exec(context.Background(), `UPDATE events
		SET on_sale_at = now() - interval '1 hour', starts_at = now() - interval '1 second' WHERE id = $1`, s.event); err != nil {
		t.Fatal(err)
	}
	fresh := startInstance(t, instance{db: s.DB, env: limitEnv("PAYRAIL_URL", s.payrail.url)})
	for name, ts := range map[string]*testServer{"the instance that cached the event": s.testServer, "a fresh instance": fresh} {
		a := ts.request(t, "POST", "/v1/holds", holdBody(s.event, s.seats[1]), buyer.bearer()...)
		if a.StatusCode != 409 || !a.problem(t).is("event-started") {
			t.Errorf("a hold after the start, on %s = %d %s, want 409 event-started", name, a.StatusCode, a.raw)
		}
	}
	a := s.checkout(t, buyer, orderBody(held, "tok_visa"), "started-1")
	if a.StatusCode != 409 || !a.problem(t).is("event-started") {
		t.Errorf("checking out a hold after the start = %d %s, want 409 event-started", a.StatusCode, a.raw)
	}
	if n := len(s.payrail.charges(t)); n != 0 {
		t.Errorf("%d charges after the start, want none", n)
	}
	var orders, sold int
	if err := s.DB.QueryRow(context.Background(), `SELECT (SELECT count(*) FROM orders),
		(SELECT count(*) FROM seats WHERE event_id = $1 AND sold_at IS NOT NULL)`, s.event).Scan(&orders, &sold); err != nil {
		t.Fatal(err)
	}
	if orders != 0 || sold != 0 {
		t.Errorf("%d orders and %d seats sold after the start, want none", orders, sold)
	}
	if a := s.request(t, "GET", "/v1/holds/"+held, "", buyer.bearer()...); as[holdJSON](t, a).Status != "active" {
		t.Errorf("the hold after its refused checkout = %d %s, want active", a.StatusCode, a.raw)
	}
	if n := heldSeats(t, s.testServer, s.event); n != 1 {
		t.Errorf("%d seats held, want the one hold's", n)
	}
	s.noViolations(t)
}
