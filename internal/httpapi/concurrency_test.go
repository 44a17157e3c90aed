package httpapi_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stagedoor/stagedoor/internal/auth"
	"github.com/stagedoor/stagedoor/internal/concurrency"
	"github.com/stagedoor/stagedoor/internal/limits"
	"github.com/stagedoor/stagedoor/internal/ratelimit"
)

// TestTenSlowCheckoutsFromOneBuyer: ten checkouts of one buyer at once, each
// slow (Payrail takes a second): five are served, five are refused at once
// with 429 too-many-concurrent-requests and change nothing (their holds stay
// active and a retry buys them).
func TestTenSlowCheckoutsFromOneBuyer(t *testing.T) {
	t.Parallel()
	// Ten payment attempts of one buyer: checkout-buyer is out of the way.
	s := newShop(t, time.Second, "STAGEDOOR_LIMIT_BUYER_CONCURRENCY", "5", "STAGEDOOR_LIMIT_CHECKOUT_BUYER", "100/1s")
	buyer := newAccount(t, s.testServer, auth.Buyer)
	holds := make([]string, 10)
	for i := range holds {
		holds[i] = s.hold(t, buyer, s.seats[i])
	}

	answers := make([]answer, len(holds))
	atOnce(len(holds), func(i int) {
		answers[i] = s.checkout(t, buyer, orderBody(holds[i], "tok_visa"), fmt.Sprint("key-", i))
	})

	var sold, refused []int
	for i, a := range answers {
		switch {
		case a.StatusCode == 201:
			sold = append(sold, i)
		case a.StatusCode == 429 && a.problem(t).is("too-many-concurrent-requests"):
			p := a.problem(t)
			if p.Limit != string(limits.BuyerConcurrency) || p.MaxInFlight != 5 || a.Header.Get("Retry-After") != "1" {
				t.Errorf("the refusal = %s (Retry-After %q), want buyer-concurrency, max_in_flight 5, Retry-After 1", a.raw, a.Header.Get("Retry-After"))
			}
			refused = append(refused, i)
		default:
			t.Errorf("checkout %d = %d %s", i, a.StatusCode, a.raw)
		}
	}
	if len(sold) != 5 || len(refused) != 5 {
		t.Fatalf("%d sold, %d refused; want 5 and 5", len(sold), len(refused))
	}
	if n := s.payrail.posts.Load(); n != 5 {
		t.Errorf("Payrail was asked %d times, want 5: a refused checkout must not reach it", n)
	}
	for _, i := range refused {
		if a := s.request(t, "GET", "/v1/holds/"+holds[i], "", buyer.bearer()...); as[holdJSON](t, a).Status != "active" {
			t.Errorf("refused checkout %d left its hold %s, want it active", i, a.raw)
		}
		if a := s.checkout(t, buyer, orderBody(holds[i], "tok_visa"), fmt.Sprint("key-", i)); a.StatusCode != 201 {
			t.Errorf("the retry of refused checkout %d = %d %s, want 201", i, a.StatusCode, a.raw)
		}
	}
	s.noViolations(t)
}

// deadInstance takes max leases for identity on the test server's Redis, as
// an instance that then died mid-request: nothing releases or renews them.
func deadInstance(t *testing.T, ts *testServer, name ratelimit.Name, identity string, max int, lease time.Duration) {
	t.Helper()
	tag := ""
	if name == limits.BuyerConcurrency {
		tag = limits.BuyerTag // as app.New keys a buyer's leases
	}
	dead := concurrency.New(ts.Redis, concurrency.Options{Name: name, Max: max, Lease: lease,
		Prefix: ts.Config.RedisPrefix, Tag: tag, Timeout: 2 * time.Second})
	for range max {
		if d, _ := dead.Enter(context.Background(), identity); !d.Allowed {
			t.Fatalf("the dead instance's lease: %+v", d)
		}
	}
}

// TestADeadInstancesLeasesLapse: a buyer whose five requests were in flight
// on an instance that died is refused until their leases lapse, then served.
func TestADeadInstancesLeasesLapse(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, nil, nil, nil)
	buyer := newAccount(t, ts, auth.Buyer)
	deadInstance(t, ts, limits.BuyerConcurrency, buyer.id, 5, time.Second)
	died := time.Now()

	if a := ts.request(t, "GET", "/v1/me", "", buyer.bearer()...); a.StatusCode != 429 || !a.problem(t).is("too-many-concurrent-requests") {
		t.Fatalf("GET /v1/me with five leases of a dead instance = %d %s, want 429", a.StatusCode, a.raw)
	}
	waitFor(t, 5*time.Second, "the dead instance's leases lapse", func() bool {
		return ts.request(t, "GET", "/v1/me", "", buyer.bearer()...).StatusCode == 200
	})
	if since := time.Since(died); since < 900*time.Millisecond {
		t.Errorf("served again %v after the death, before the leases' second was up", since)
	}
}

// TestEveryCountedRouteRefusesPastTheMaximum: with a buyer's and an
// organizer's places all taken, every route of theirs answers 429 but
// logout, a ticket's QR image (immutable: not counted) and a waiting-room
// poll (paced by the room, and with its token free of Redis: not counted);
// the public routes and the other accounts are not affected.
func TestEveryCountedRouteRefusesPastTheMaximum(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, nil, nil, nil)
	org, buyer := newAccount(t, ts, auth.Organizer), newAccount(t, ts, auth.Buyer)
	event, seats := newEvent(t, ts, org, eventBody(1, 4))
	room, _ := newEvent(t, ts, org, roomEventBody(1, 1, 1, time.Now().Add(time.Hour)))
	deadInstance(t, ts, limits.BuyerConcurrency, buyer.id, 5, time.Minute)
	deadInstance(t, ts, limits.OrganizerConcurrency, org.id, 20, time.Minute)
	id := "8a4c1f6e-5b0d-4c1e-9f5a-2b7d3e9c0a11" // any id: the refusal comes first

	for _, r := range []struct {
		who          testAccount
		method, path string
		body         string
	}{
		{buyer, "GET", "/v1/me", ""},
		{buyer, "POST", "/v1/holds", holdBody(event, seats[0])},
		{buyer, "GET", "/v1/holds/" + id, ""},
		{buyer, "DELETE", "/v1/holds/" + id, ""},
		{buyer, "POST", "/v1/orders", orderBody(id, "tok_visa")},
		{buyer, "GET", "/v1/orders", ""},
		{buyer, "GET", "/v1/orders/" + id, ""},
		{buyer, "GET", "/v1/tickets", ""},
		{org, "POST", "/v1/events", eventBody(1, 1)},
		{org, "GET", "/v1/organizer/events", ""},
		{org, "POST", "/v1/scanner-keys", `{"label":"North gate"}`},
		{org, "GET", "/v1/scanner-keys", ""},
		{org, "DELETE", "/v1/scanner-keys/" + id, ""},
		{org, "DELETE", "/v1/organizer/tickets/" + id, ""},
		{org, "GET", "/v1/events/" + event + "/scans", ""},
	} {
		a := ts.request(t, r.method, r.path, r.body, append(r.who.bearer(), "Idempotency-Key", "k1")...)
		if a.StatusCode != 429 || !a.problem(t).is("too-many-concurrent-requests") {
			t.Errorf("%s %s = %d %s, want 429 too-many-concurrent-requests", r.method, r.path, a.StatusCode, a.raw)
		}
	}
	if a := ts.request(t, "GET", "/v1/tickets/"+id+"/qr", "", buyer.bearer()...); a.StatusCode != 404 {
		t.Errorf("GET /v1/tickets/{id}/qr = %d %s, want 404 (no such ticket): QR images are not counted in flight", a.StatusCode, a.raw)
	}
	if a := ts.request(t, "GET", queuePath(room), "", buyer.bearer()...); a.StatusCode != 404 || !a.problem(t).is("not-found") {
		t.Errorf("GET %s = %d %s, want 404 (not in the queue): polls are not counted in flight", queuePath(room), a.StatusCode, a.raw)
	}
	other := newAccount(t, ts, auth.Buyer)
	if a := ts.request(t, "POST", "/v1/holds", holdBody(event, seats[0]), other.bearer()...); a.StatusCode != 201 {
		t.Errorf("another buyer's hold = %d %s, want 201", a.StatusCode, a.raw)
	}
	if a := ts.request(t, "GET", "/v1/events/"+event+"/seats", ""); a.StatusCode != 200 {
		t.Errorf("a public seat map = %d, want 200", a.StatusCode)
	}
	if a := ts.request(t, "POST", "/v1/logout", "", buyer.bearer()...); a.StatusCode != 204 {
		t.Errorf("logout = %d %s, want 204: a logout is never refused for concurrency", a.StatusCode, a.raw)
	}
}
