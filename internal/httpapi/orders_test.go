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

func startPayrail(t *testing.T, latency time.Duration) *stub { return startPayrailTB(t, latency) }

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
	ts := startInstance(t, instance{env: limitEnv(append(env, "PAYRAIL_URL", p.url, "STAGEDOOR_LIMIT_HOLD_BUYER", "100/1s")...), db: db})
	org := newAccount(t, ts, auth.Organizer)
	event, seats := newEvent(t, ts, org, eventBody(4, 10))
	return &shop{testServer: ts, payrail: p, event: event, seats: seats}
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
	resp, h := s.doTB(t, "POST", "/v1/holds", holdBody(s.event, seats...), buyer.bearer()...)
	if resp.StatusCode != 201 {
		t.Fatalf("hold = %d %v", resp.StatusCode, h)
	}
	return h["id"].(string)
}

func orderBody(holdID, token string) string {
	return fmt.Sprintf(`{"hold_id":%q,"payment_token":%q}`, holdID, token)
}

func (s *shop) checkout(t testing.TB, buyer testAccount, body, key string) (*http.Response, map[string]any) {
	t.Helper()
	header := buyer.bearer()
	if key != "" {
		header = append(header, "Idempotency-Key", key)
	}
	return s.doTB(t, "POST", "/v1/orders", body, header...)
}

func TestCheckoutLifecycle(t *testing.T) {
	t.Parallel()
	s := newShop(t, 0)
	ada, bob := newAccount(t, s.testServer, auth.Buyer), newAccount(t, s.testServer, auth.Buyer)
	holdID := s.hold(t, ada, s.seats[0], s.seats[1])

	if resp, p := s.checkout(t, bob, orderBody(holdID, "tok_visa"), "k0"); resp.StatusCode != 404 {
		t.Errorf("another buyer's hold = %d %v, want 404", resp.StatusCode, p)
	}
	resp, order := s.checkout(t, ada, orderBody(holdID, "tok_visa"), "k1")
	tickets, _ := order["tickets"].([]any)
	if resp.StatusCode != 201 || order["status"] != "confirmed" || order["hold_id"] != holdID ||
		order["total_cents"] != 9000.0 || order["currency"] != "USD" || len(tickets) != 2 {
		t.Fatalf("checkout = %d %v", resp.StatusCode, order)
	}
	if resp, p := s.checkout(t, ada, orderBody(holdID, "tok_visa"), "k2"); resp.StatusCode != 409 || p["type"] != "/problems/hold-not-active" {
		t.Errorf("the same hold again = %d %v, want 409 hold-not-active", resp.StatusCode, p)
	}
	orderID := order["id"].(string)
	if resp, got := s.do(t, "GET", "/v1/orders/"+orderID, "", ada.bearer()...); resp.StatusCode != 200 || got["id"] != orderID {
		t.Errorf("GET order = %d %v", resp.StatusCode, got)
	}
	for _, path := range []string{"/v1/orders/" + orderID, "/v1/orders/not-an-id"} {
		if resp, got := s.do(t, "GET", path, "", bob.bearer()...); resp.StatusCode != 404 {
			t.Errorf("GET %s as another buyer = %d %v, want 404", path, resp.StatusCode, got)
		}
	}
	if resp, got := s.do(t, "GET", "/v1/orders", "", ada.bearer()...); resp.StatusCode != 200 || len(got["orders"].([]any)) != 1 {
		t.Errorf("GET /v1/orders = %d %v", resp.StatusCode, got)
	}
	resp, got := s.do(t, "GET", "/v1/tickets", "", ada.bearer()...)
	list, _ := got["tickets"].([]any)
	if resp.StatusCode != 200 || len(list) != 2 || list[0].(map[string]any)["status"] != "valid" ||
		list[0].(map[string]any)["event_id"] != s.event {
		t.Errorf("GET /v1/tickets = %d %v", resp.StatusCode, got)
	}
	if m := seatMap(t, s.testServer, s.event); m[0]["status"] != "sold" && m[1]["status"] != "sold" {
		waitFor(t, 2*time.Second, "the seats to show sold", func() bool {
			m := seatMap(t, s.testServer, s.event)
			return m[0]["status"] == "sold" && m[1]["status"] == "sold"
		})
	}

	expiring := newShop(t, 0, "STAGEDOOR_HOLD_TTL", "1s")
	cat := newAccount(t, expiring.testServer, auth.Buyer)
	late := expiring.hold(t, cat, expiring.seats[0])
	time.Sleep(1100 * time.Millisecond)
	if resp, p := expiring.checkout(t, cat, orderBody(late, "tok_visa"), ""); resp.StatusCode != 409 || p["type"] != "/problems/hold-not-active" {
		t.Errorf("an expired hold = %d %v, want 409 hold-not-active", resp.StatusCode, p)
	}
	for _, body := range []string{`{"hold_id":"x","payment_token":"tok_visa"}`, orderBody(holdID, ""), `{"hold_id":1}`} {
		if resp, p := s.checkout(t, ada, body, ""); resp.StatusCode != 400 {
			t.Errorf("bad body %s = %d %v, want 400", body, resp.StatusCode, p)
		}
	}
}

// TestDeclinedThenPaid: a decline keeps the hold active; tok_visa then succeeds.
func TestDeclinedThenPaid(t *testing.T) {
	t.Parallel()
	s := newShop(t, 0)
	ada := newAccount(t, s.testServer, auth.Buyer)
	holdID := s.hold(t, ada, s.seats[5])
	if resp, p := s.checkout(t, ada, orderBody(holdID, "tok_declined"), "try-1"); resp.StatusCode != 402 || p["type"] != "/problems/payment-declined" {
		t.Fatalf("tok_declined = %d %v, want 402", resp.StatusCode, p)
	}
	if resp, h := s.do(t, "GET", "/v1/holds/"+holdID, "", ada.bearer()...); h["status"] != "active" {
		t.Fatalf("hold after the decline = %d %v, want active", resp.StatusCode, h)
	}
	if resp, o := s.checkout(t, ada, orderBody(holdID, "tok_visa"), "try-2"); resp.StatusCode != 201 {
		t.Fatalf("tok_visa after the decline = %d %v", resp.StatusCode, o)
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
	if resp, p := s.checkout(t, ada, orderBody(holdID, "tok_declined"), "same-key"); resp.StatusCode != 422 || p["type"] != "/problems/idempotency-mismatch" {
		t.Errorf("same key, another body = %d %v, want 422", resp.StatusCode, p)
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
			resp, p := s.checkout(t, a.buyer, orderBody(a.hold, "tok_visa"), "bulkhead")
			now := time.Now().UnixNano()
			switch {
			case resp.StatusCode == 201:
				charged.Add(1)
				firstCharged.CompareAndSwap(0, now)
			case resp.StatusCode == 503 && p["type"] == "/problems/service-overloaded" && resp.Header.Get("Retry-After") == "2":
				shed.Add(1)
				for {
					old := lastShed.Load()
					if now <= old || lastShed.CompareAndSwap(old, now) {
						break
					}
				}
			default:
				t.Errorf("checkout = %d %v", resp.StatusCode, p)
			}
		}()
	}
	// While the 20 are inside Payrail: a hold and a seat map still answer.
	time.Sleep(300 * time.Millisecond)
	other := newAccount(t, s.testServer, auth.Buyer)
	if resp, _ := s.doTB(t, "POST", "/v1/holds", holdBody(s.event, s.seats[35]), other.bearer()...); resp.StatusCode != 201 {
		t.Errorf("a hold during the checkouts = %d", resp.StatusCode)
	}
	if resp, _ := s.raw(t, "GET", "/v1/events/"+s.event+"/seats"); resp.StatusCode != 200 {
		t.Errorf("the seat map during the checkouts = %d", resp.StatusCode)
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

// TestPaymentBreaker: Payrail failing opens the breaker; further checkouts are
// refused without calling Payrail until the breaker lets a probe through.
func TestPaymentBreaker(t *testing.T) {
	t.Parallel()
	s := newShop(t, 0)
	ada := newAccount(t, s.testServer, auth.Buyer)
	holdID := s.hold(t, ada, s.seats[0])
	s.payrail.down.Store(true)
	for i := 1; i <= 5; i++ {
		resp, p := s.checkout(t, ada, orderBody(holdID, "tok_visa"), fmt.Sprint("fail-", i))
		if resp.StatusCode != 503 || p["type"] != "/problems/payment-unavailable" || resp.Header.Get("Retry-After") == "" {
			t.Fatalf("checkout %d with Payrail down = %d %v Retry-After %q", i, resp.StatusCode, p, resp.Header.Get("Retry-After"))
		}
	}
	posts := s.payrail.posts.Load()
	var ordersBefore, ordersAfter int
	_ = s.DB.QueryRow(context.Background(), `SELECT count(*) FROM orders`).Scan(&ordersBefore)
	for i := range 5 {
		resp, p := s.checkout(t, ada, orderBody(holdID, "tok_visa"), fmt.Sprint("open-", i))
		if resp.StatusCode != 503 || p["type"] != "/problems/payment-unavailable" {
			t.Fatalf("checkout with the breaker open = %d %v", resp.StatusCode, p)
		}
	}
	if n := s.payrail.posts.Load() - posts; n != 0 {
		t.Errorf("Payrail was called %d times with the breaker open, want 0", n)
	}
	if _ = s.DB.QueryRow(context.Background(), `SELECT count(*) FROM orders`).Scan(&ordersAfter); ordersAfter != ordersBefore {
		t.Errorf("%d orders written while the breaker was open, want none: a refusal writes nothing", ordersAfter-ordersBefore)
	}
	if resp, h := s.do(t, "GET", "/v1/holds/"+holdID, "", ada.bearer()...); h["status"] != "active" {
		t.Errorf("hold after the failures = %d %v, want active", resp.StatusCode, h)
	}
	s.payrail.down.Store(false)
	waitFor(t, 7*time.Second, "the breaker to let a probe through", func() bool {
		resp, _ := s.checkout(t, ada, orderBody(holdID, "tok_visa"), fmt.Sprint("probe-", time.Now().UnixNano()))
		return resp.StatusCode == 201
	})
}
