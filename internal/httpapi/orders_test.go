package httpapi_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/stagedoor/stagedoor/internal/apiclient"
	"github.com/stagedoor/stagedoor/internal/auth"
	"github.com/stagedoor/stagedoor/internal/payrail"
	"github.com/stagedoor/stagedoor/internal/testenv"
)

// stub is a real Payrail stub server, with a switch that makes it answer 500
// before the stub sees the request, and a count of the charges it was asked for.
type stub struct {
	*payrail.Server
	url   string
	down  atomic.Bool
	posts atomic.Int64
}

// startPayrailTB starts a Payrail stub with its ledger in a database of its own.
func startPayrailTB(t testing.TB, latency time.Duration) *stub {
	t.Helper()
	return startPayrailOn(t, testenv.Postgres(t), payrail.Config{Latency: latency})
}

// startPayrailOn starts a Payrail stub with its ledger in db (schema payrail).
func startPayrailOn(t testing.TB, db *pgxpool.Pool, cfg payrail.Config) *stub {
	t.Helper()
	server, err := payrail.Open(context.Background(), db, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := &stub{Server: server}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			s.posts.Add(1)
		}
		if s.down.Load() {
			http.Error(w, `{"error":"down"}`, http.StatusInternalServerError)
			return
		}
		s.Server.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	s.url = srv.URL
	return s
}

// charges returns every charge the stub made.
func (s *stub) charges(t testing.TB) []payrail.Charge {
	t.Helper()
	all, err := s.Charges(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return all
}

// shop is a server with a Payrail stub whose ledger is in the server's
// database (so the money invariant can be checked), an organizer's on-sale
// event and its seats.
type shop struct {
	*testServer
	payrail *stub
	org     testAccount // the event's organizer
	event   string
	seats   []string
}

func newShop(t *testing.T, latency time.Duration, env ...string) *shop {
	t.Helper()
	return newShopWith(t, payrail.Config{Latency: latency}, env...)
}

func newShopWith(t *testing.T, cfg payrail.Config, env ...string) *shop {
	t.Helper()
	db := testenv.Postgres(t)
	p := startPayrailOn(t, db, cfg)
	// One buyer's many requests at once are these tests' business, not
	// buyer-concurrency's (concurrency_test.go sets it back to 5).
	env = append([]string{"STAGEDOOR_LIMIT_BUYER_CONCURRENCY", "1000"}, env...)
	ts := startInstance(t, instance{env: limitEnv(append(env, "PAYRAIL_URL", p.url, "STAGEDOOR_LIMIT_HOLD_BUYER", "100/1s")...), db: db})
	org := newAccount(t, ts, auth.Organizer)
	event, seats := newEvent(t, ts, org, eventBody(4, 10))
	return &shop{testServer: ts, payrail: p, org: org, event: event, seats: seats}
}

// noViolations fails the test when the money invariant does not hold.
func (s *shop) noViolations(t *testing.T) {
	t.Helper()
	if v := testenv.MoneyViolations(t, s.DB); len(v) > 0 {
		t.Errorf("the money invariant is violated:\n%s", strings.Join(v, "\n"))
	}
}

// hold places a hold of the buyer on the seats and returns its id.
func (s *shop) hold(t testing.TB, buyer testAccount, seats ...string) string {
	t.Helper()
	a := s.request(t, "POST", "/v1/holds", holdBody(s.event, seats...), buyer.bearer()...)
	if a.StatusCode != 201 {
		t.Fatalf("hold = %d %s", a.StatusCode, a.raw)
	}
	return as[holdJSON](t, a).ID
}

func orderBody(holdID, token string) string {
	return fmt.Sprintf(`{"hold_id":%q,"payment_token":%q}`, holdID, token)
}

// checkout posts an order as buyer, with key as its Idempotency-Key unless empty.
func (s *shop) checkout(t testing.TB, buyer testAccount, body, key string) answer {
	t.Helper()
	header := buyer.bearer()
	if key != "" {
		header = append(header, "Idempotency-Key", key)
	}
	return s.request(t, "POST", "/v1/orders", body, header...)
}

func TestCheckoutLifecycle(t *testing.T) {
	t.Parallel()
	s := newShop(t, 0)
	ada, bob := newAccount(t, s.testServer, auth.Buyer), newAccount(t, s.testServer, auth.Buyer)
	holdID := s.hold(t, ada, s.seats[0], s.seats[1])

	t.Run("another buyer's hold is not found", func(t *testing.T) {
		if a := s.checkout(t, bob, orderBody(holdID, "tok_visa"), "k0"); a.StatusCode != 404 || !a.problem(t).is("not-found") {
			t.Errorf("= %d %s, want 404", a.StatusCode, a.raw)
		}
	})
	a := s.checkout(t, ada, orderBody(holdID, "tok_visa"), "k1")
	order := as[apiclient.Order](t, a)
	t.Run("a paid hold is a confirmed order with a ticket a seat", func(t *testing.T) {
		if a.StatusCode != 201 || order.Status != "confirmed" || order.HoldId.String() != holdID ||
			order.TotalCents != 9000 || order.Currency != "USD" || len(order.Tickets) != 2 {
			t.Fatalf("checkout = %d %+v", a.StatusCode, order)
		}
	})
	t.Run("the same hold cannot be paid twice", func(t *testing.T) {
		if a := s.checkout(t, ada, orderBody(holdID, "tok_visa"), "k2"); a.StatusCode != 409 || !a.problem(t).is("hold-not-active") {
			t.Errorf("= %d %s, want 409 hold-not-active", a.StatusCode, a.raw)
		}
	})
	t.Run("the buyer reads the order; nobody else does", func(t *testing.T) {
		if a := s.request(t, "GET", "/v1/orders/"+order.Id.String(), "", ada.bearer()...); a.StatusCode != 200 || as[apiclient.Order](t, a).Id != order.Id {
			t.Errorf("GET order = %d %s", a.StatusCode, a.raw)
		}
		for _, path := range []string{"/v1/orders/" + order.Id.String(), "/v1/orders/not-an-id"} {
			if a := s.request(t, "GET", path, "", bob.bearer()...); a.StatusCode != 404 {
				t.Errorf("GET %s as another buyer = %d %s, want 404", path, a.StatusCode, a.raw)
			}
		}
		if a := s.request(t, "GET", "/v1/orders", "", ada.bearer()...); a.StatusCode != 200 || len(as[orderList](t, a).Orders) != 1 {
			t.Errorf("GET /v1/orders = %d %s", a.StatusCode, a.raw)
		}
	})
	t.Run("the tickets are listed, valid", func(t *testing.T) {
		a := s.request(t, "GET", "/v1/tickets", "", ada.bearer()...)
		list := as[ticketList](t, a).Tickets
		if a.StatusCode != 200 || len(list) != 2 || list[0].Status != "valid" || list[0].EventId.String() != s.event {
			t.Errorf("GET /v1/tickets = %d %s", a.StatusCode, a.raw)
		}
	})
	t.Run("the seats show sold", func(t *testing.T) {
		waitFor(t, 5*time.Second, "the seats to show sold", func() bool {
			m := seatMap(t, s.testServer, s.event)
			return m[0].Status == "sold" && m[1].Status == "sold"
		})
	})
	t.Run("an expired hold cannot be paid", func(t *testing.T) {
		expiring := newShop(t, 0, "STAGEDOOR_HOLD_TTL", "1s")
		cat := newAccount(t, expiring.testServer, auth.Buyer)
		late := expiring.hold(t, cat, expiring.seats[0])
		waitFor(t, 5*time.Second, "the hold to expire", func() bool {
			return as[holdJSON](t, expiring.request(t, "GET", "/v1/holds/"+late, "", cat.bearer()...)).Status == "expired"
		})
		if a := expiring.checkout(t, cat, orderBody(late, "tok_visa"), ""); a.StatusCode != 409 || !a.problem(t).is("hold-not-active") {
			t.Errorf("= %d %s, want 409 hold-not-active", a.StatusCode, a.raw)
		}
	})
	t.Run("a bad body is 400", func(t *testing.T) {
		for _, body := range []string{`{"hold_id":"x","payment_token":"tok_visa"}`, orderBody(holdID, ""), `{"hold_id":1}`} {
			if a := s.checkout(t, ada, body, ""); a.StatusCode != 400 || !a.problem(t).is("invalid-request") {
				t.Errorf("bad body %s = %d %s, want 400", body, a.StatusCode, a.raw)
			}
		}
	})
}

// TestDeclinedThenPaid: a decline keeps the hold active; tok_visa then succeeds.
func TestDeclinedThenPaid(t *testing.T) {
	t.Parallel()
	s := newShop(t, 0)
	ada := newAccount(t, s.testServer, auth.Buyer)
	holdID := s.hold(t, ada, s.seats[5])
	if a := s.checkout(t, ada, orderBody(holdID, "tok_declined"), "try-1"); a.StatusCode != 402 || !a.problem(t).is("payment-declined") {
		t.Fatalf("tok_declined = %d %s, want 402", a.StatusCode, a.raw)
	}
	if a := s.request(t, "GET", "/v1/holds/"+holdID, "", ada.bearer()...); as[holdJSON](t, a).Status != "active" {
		t.Fatalf("hold after the decline = %d %s, want active", a.StatusCode, a.raw)
	}
	if a := s.checkout(t, ada, orderBody(holdID, "tok_visa"), "try-2"); a.StatusCode != 201 {
		t.Fatalf("tok_visa after the decline = %d %s", a.StatusCode, a.raw)
	}
}

// TestIdempotencyKey: ten concurrent requests with one key make one charge and
// one order; later retries replay the first body; another body is 422.
func TestIdempotencyKey(t *testing.T) {
	t.Parallel()
	s := newShop(t, 300*time.Millisecond)
	ada := newAccount(t, s.testServer, auth.Buyer)
	holdID := s.hold(t, ada, s.seats[7])
	body := orderBody(holdID, "tok_visa")

	post := func() (int, string, []byte) {
		req, _ := http.NewRequest("POST", s.http.URL+"/v1/orders", bytes.NewBufferString(body))
		req.Header.Set("Authorization", "Bearer "+ada.token)
		req.Header.Set("Idempotency-Key", "same-key")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Error(err)
			return 0, "", nil
		}
		defer resp.Body.Close()
		buf := new(bytes.Buffer)
		_, _ = buf.ReadFrom(resp.Body)
		return resp.StatusCode, resp.Header.Get("Idempotent-Replayed"), buf.Bytes()
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var first []byte
	created, inProgress := 0, 0
	for range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			status, _, raw := post()
			mu.Lock()
			defer mu.Unlock()
			switch status {
			case 201:
				created++
				first = raw
			case 409:
				inProgress++
			}
		}()
	}
	wg.Wait()
	if created != 1 || inProgress != 9 {
		t.Errorf("%d created, %d in progress: want one 201 and nine 409 idempotency-in-progress", created, inProgress)
	}
	if n := len(s.payrail.charges(t)); n != 1 {
		t.Errorf("Payrail has %d charges, want 1", n)
	}
	var orders int
	_ = s.DB.QueryRow(context.Background(), `SELECT count(*) FROM orders`).Scan(&orders)
	if orders != 1 {
		t.Errorf("%d orders, want 1", orders)
	}
	replays := make([][]byte, 2)
	for i := range replays {
		status, replayed, raw := post()
		if status != 201 || replayed != "true" {
			t.Errorf("retry %d = %d replayed=%q, want the first 201 again", i, status, replayed)
		}
		replays[i] = raw
	}
	if !bytes.Equal(replays[0], first) || !bytes.Equal(replays[1], first) || !bytes.Contains(first, []byte(`"status":"confirmed"`)) {
		t.Errorf("replays differ from the first response:\n%s\n%s\n%s", first, replays[0], replays[1])
	}
	if a := s.checkout(t, ada, orderBody(holdID, "tok_declined"), "same-key"); a.StatusCode != 422 || !a.problem(t).is("idempotency-mismatch") {
		t.Errorf("same key, another body = %d %s, want 422", a.StatusCode, a.raw)
	}
	if n := len(s.payrail.charges(t)); n != 1 {
		t.Errorf("after the retries Payrail has %d charges, want 1", n)
	}
}

// TestCheckoutBulkhead: with Payrail taking a second, 30 concurrent checkouts
// on one instance: 20 are charged, 10 are refused with 503 and Retry-After: 2
// while the 20 are still inside, and holds and seat maps answer meanwhile.
func TestCheckoutBulkhead(t *testing.T) {
	t.Parallel()
	s := newShop(t, time.Second)
	type attempt struct {
		buyer testAccount
		hold  string
	}
	attempts := make([]attempt, 30)
	for i := range attempts {
		b := newAccount(t, s.testServer, auth.Buyer)
		attempts[i] = attempt{b, s.hold(t, b, s.seats[i])}
	}
	var wg sync.WaitGroup
	var charged, shed atomic.Int64
	var firstCharged atomic.Int64 // unix nanos of the first 201 to arrive
	var lastShed atomic.Int64
	for _, a := range attempts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ans := s.checkout(t, a.buyer, orderBody(a.hold, "tok_visa"), "bulkhead")
			now := time.Now().UnixNano()
			switch {
			case ans.StatusCode == 201:
				charged.Add(1)
				firstCharged.CompareAndSwap(0, now)
			case ans.StatusCode == 503 && ans.problem(t).is("service-overloaded") && ans.Header.Get("Retry-After") == "2":
				shed.Add(1)
				for {
					old := lastShed.Load()
					if now <= old || lastShed.CompareAndSwap(old, now) {
						break
					}
				}
			default:
				t.Errorf("checkout = %d %s", ans.StatusCode, ans.raw)
			}
		}()
	}
	// While the 20 are inside Payrail: a hold and a seat map still answer.
	waitFor(t, 10*time.Second, "the 20 checkouts inside Payrail", func() bool { return s.payrail.posts.Load() == 20 })
	other := newAccount(t, s.testServer, auth.Buyer)
	if a := s.request(t, "POST", "/v1/holds", holdBody(s.event, s.seats[35]), other.bearer()...); a.StatusCode != 201 {
		t.Errorf("a hold during the checkouts = %d", a.StatusCode)
	}
	if a := s.request(t, "GET", "/v1/events/"+s.event+"/seats", ""); a.StatusCode != 200 {
		t.Errorf("the seat map during the checkouts = %d", a.StatusCode)
	}
	wg.Wait()
	if charged.Load() != 20 || shed.Load() != 10 || len(s.payrail.charges(t)) != 20 {
		t.Errorf("%d charged, %d shed, %d Payrail charges; want 20, 10, 20", charged.Load(), shed.Load(), len(s.payrail.charges(t)))
	}
	if lastShed.Load() >= firstCharged.Load() {
		t.Error("a refusal came back after a checkout finished: refusals must not wait for a slot")
	}
	if got := metricValue(t, s.testServer, `stagedoor_shed_total{bound="checkout"}`); got != "10" {
		t.Errorf(`stagedoor_shed_total{bound="checkout"} = %q, want 10`, got)
	}
}

// TestPaymentBreaker: Payrail failing for three buyers (the breaker's volume
// set to 3) opens the breaker; further checkouts are refused without calling
// Payrail, and without spending a payment attempt, until the breaker lets a
// probe through.
func TestPaymentBreaker(t *testing.T) {
	t.Parallel()
	s := newShop(t, 0, "STAGEDOOR_PAYMENT_BREAKER_BUYERS", "3")
	buyers := make([]testAccount, 3)
	holds := make([]string, 3)
	for i := range buyers {
		buyers[i] = newAccount(t, s.testServer, auth.Buyer)
		holds[i] = s.hold(t, buyers[i], s.seats[i])
	}
	ada, holdID := buyers[0], holds[0]
	s.payrail.down.Store(true)
	for i := range buyers {
		a := s.checkout(t, buyers[i], orderBody(holds[i], "tok_visa"), fmt.Sprint("fail-", i))
		if a.StatusCode != 503 || !a.problem(t).is("payment-unavailable") || a.Header.Get("Retry-After") == "" {
			t.Fatalf("checkout %d with Payrail down = %d %s Retry-After %q", i, a.StatusCode, a.raw, a.Header.Get("Retry-After"))
		}
	}
	posts := s.payrail.posts.Load()
	var ordersBefore, ordersAfter int
	_ = s.DB.QueryRow(context.Background(), `SELECT count(*) FROM orders`).Scan(&ordersBefore)
	for i := range 5 {
		a := s.checkout(t, buyers[i%3], orderBody(holds[i%3], "tok_visa"), fmt.Sprint("open-", i))
		if a.StatusCode != 503 || !a.problem(t).is("payment-unavailable") || a.Header.Get("RateLimit") != "" {
			t.Fatalf("checkout with the breaker open = %d %s %v; want 503 before any limit", a.StatusCode, a.raw, a.Header)
		}
	}
	if n := s.payrail.posts.Load() - posts; n != 0 {
		t.Errorf("Payrail was called %d times with the breaker open, want 0", n)
	}
	if _ = s.DB.QueryRow(context.Background(), `SELECT count(*) FROM orders`).Scan(&ordersAfter); ordersAfter != ordersBefore {
		t.Errorf("%d orders written while the breaker was open, want none: a refusal writes nothing", ordersAfter-ordersBefore)
	}
	if a := s.request(t, "GET", "/v1/holds/"+holdID, "", ada.bearer()...); as[holdJSON](t, a).Status != "active" {
		t.Errorf("hold after the failures = %d %s, want active", a.StatusCode, a.raw)
	}
	s.payrail.down.Store(false)
	waitFor(t, 7*time.Second, "the breaker to let a probe through", func() bool {
		return s.checkout(t, ada, orderBody(holdID, "tok_visa"), fmt.Sprint("probe-", time.Now().UnixNano())).StatusCode == 201
	})
}
