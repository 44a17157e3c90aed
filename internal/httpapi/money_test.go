package httpapi_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/stagedoor/stagedoor/internal/apiclient"
	"github.com/stagedoor/stagedoor/internal/auth"
	"github.com/stagedoor/stagedoor/internal/payrail"
	"github.com/stagedoor/stagedoor/internal/testenv"
)

// fastRecovery is the environment of a server whose pending orders are
// recoverable a second and a half after they were written: a payment deadline
// of 500 ms, and recovery at three times that.
var fastRecovery = []string{"STAGEDOOR_PAYMENT_TIMEOUT", "500ms", "STAGEDOOR_RECOVERY_AFTER", "1500ms"}

// recoverUntil runs recovery, as serve's loop does, until cond holds.
func (s *shop) recoverUntil(t *testing.T, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	waitFor(t, limit, what, func() bool {
		if _, err := s.Checkout.Recover(context.Background()); err != nil {
			t.Fatalf("recover: %v", err)
		}
		return cond()
	})
}

// TestAnUnknownOutcomeIs202AndTheKeyLearnsTheTruth reproduces the first
// defect. Payrail answers after the payment deadline: the answer is 202 with
// the pending order and its Location (not 503), a retry with the key is 202
// again, and once recovery has found the charge the retry is 201 with the
// tickets: the key never answers "hold not active".
func TestAnUnknownOutcomeIs202AndTheKeyLearnsTheTruth(t *testing.T) {
	t.Parallel()
	s := newShop(t, 900*time.Millisecond, fastRecovery...)
	ada := newAccount(t, s.testServer, auth.Buyer)
	holdID := s.hold(t, ada, s.seats[0], s.seats[1])
	body := orderBody(holdID, "tok_visa")

	a := s.checkout(t, ada, body, "k")
	order := as[apiclient.Order](t, a)
	if a.StatusCode != 202 || order.Status != "pending" || a.Header.Get("Location") != "/v1/orders/"+order.Id.String() {
		t.Fatalf("the first answer = %d %s Location %q; want 202 with the pending order", a.StatusCode, a.raw, a.Header.Get("Location"))
	}
	if a := s.request(t, "GET", "/v1/holds/"+holdID, "", ada.bearer()...); as[holdJSON](t, a).Status != "active" {
		t.Errorf("the hold in checkout = %d %s, want shown as active", a.StatusCode, a.raw)
	}
	a = s.checkout(t, ada, body, "k")
	if a.StatusCode != 202 || as[apiclient.Order](t, a).Id != order.Id || a.Header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("the retry = %d %s; want 202 with the same pending order, replayed", a.StatusCode, a.raw)
	}

	s.recoverUntil(t, 10*time.Second, "recovery to confirm the order", func() bool {
		return as[apiclient.Order](t, s.request(t, "GET", "/v1/orders/"+order.Id.String(), "", ada.bearer()...)).Status == "confirmed"
	})
	a = s.checkout(t, ada, body, "k")
	final := as[apiclient.Order](t, a)
	if a.StatusCode != 201 || final.Id != order.Id || final.Status != "confirmed" || len(final.Tickets) != 2 ||
		a.Header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("the retry after recovery = %d %s; want 201 with the confirmed order and its 2 tickets", a.StatusCode, a.raw)
	}
	if n := len(s.payrail.charges(t)); n != 1 {
		t.Errorf("%d charges, want 1", n)
	}
	s.noViolations(t)
}

// TestProblemsOfASettledOrderNameIt: a decline names its order, and its
// replay says it is one.
func TestProblemsOfASettledOrderNameIt(t *testing.T) {
	t.Parallel()
	s := newShop(t, 0)
	ada := newAccount(t, s.testServer, auth.Buyer)
	holdID := s.hold(t, ada, s.seats[3])
	a := s.checkout(t, ada, orderBody(holdID, "tok_declined"), "d")
	orderID := a.problem(t).OrderID
	if a.StatusCode != 402 || orderID == "" || a.Header.Get("Idempotent-Replayed") != "" {
		t.Fatalf("decline = %d %s", a.StatusCode, a.raw)
	}
	a = s.checkout(t, ada, orderBody(holdID, "tok_declined"), "d")
	if a.StatusCode != 402 || a.problem(t).OrderID != orderID || a.Header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("its replay = %d %s", a.StatusCode, a.raw)
	}
	if o := as[apiclient.Order](t, s.request(t, "GET", "/v1/orders/"+orderID, "", ada.bearer()...)); o.Status != "declined" {
		t.Errorf("the declined order reads %+v", o)
	}
}

// TestOneKeyFromTwoInstancesAtOnceChargesOnce: twenty requests with one key,
// half through each of two instances, at once: one charge, one order, one 201;
// the others are 409 idempotency-in-progress (or, once it is done, its replay).
func TestOneKeyFromTwoInstancesAtOnceChargesOnce(t *testing.T) {
	t.Parallel()
	a := newShop(t, 300*time.Millisecond)
	b := startInstance(t, instance{env: limitEnv("PAYRAIL_URL", a.payrail.url, "STAGEDOOR_LIMIT_HOLD_BUYER", "100/1s",
		"STAGEDOOR_LIMIT_BUYER_CONCURRENCY", "1000"), db: a.DB})
	ada := newAccount(t, a.testServer, auth.Buyer)
	holdID := a.hold(t, ada, a.seats[5], a.seats[6])
	body := orderBody(holdID, "tok_visa")
	instances := []*testServer{a.testServer, b}

	var wg sync.WaitGroup
	ready := make(chan struct{})
	statuses := make([]int, 20)
	replayed := make([]bool, 20)
	for i := range statuses {
		wg.Go(func() {
			<-ready
			req, _ := http.NewRequest("POST", instances[i%2].http.URL+"/v1/orders", strings.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+ada.token)
			req.Header.Set("Idempotency-Key", "shared")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			resp.Body.Close()
			statuses[i], replayed[i] = resp.StatusCode, resp.Header.Get("Idempotent-Replayed") == "true"
		})
	}
	close(ready)
	wg.Wait()
	created := 0
	for i, st := range statuses {
		switch {
		case st == 201 && !replayed[i]:
			created++
		case st == 409, st == 201 && replayed[i]:
		default:
			t.Errorf("request %d = %d", i, st)
		}
	}
	var orders int
	_ = a.DB.QueryRow(context.Background(), `SELECT count(*) FROM orders`).Scan(&orders)
	if created != 1 || orders != 1 || len(a.payrail.charges(t)) != 1 {
		t.Errorf("%d created, %d orders, %d charges; want one of each", created, orders, len(a.payrail.charges(t)))
	}
	a.noViolations(t)
}

// TestAPaymentOutageIsAWarningWithACount: thirty checkouts of six buyers
// while Payrail fails are thirty 503s, and in the log one WARN line about
// Payrail, not an ERROR line each.
func TestAPaymentOutageIsAWarningWithACount(t *testing.T) {
	t.Parallel()
	logs := &testenv.LogBuffer{}
	db := testenv.Postgres(t)
	p := startPayrailOn(t, db, payrail.Config{})
	ts := startInstance(t, instance{env: limitEnv("PAYRAIL_URL", p.url, "STAGEDOOR_LIMIT_HOLD_BUYER", "100/1s",
		"STAGEDOOR_PAYMENT_BREAKER_BUYERS", "3"), db: db, logs: logs})
	s := &shop{testServer: ts, payrail: p}
	org := newAccount(t, ts, auth.Organizer)
	s.event, s.seats = newEvent(t, ts, org, eventBody(2, 5))
	buyers := make([]testAccount, 6)
	holds := make([]string, len(buyers))
	for i := range buyers {
		buyers[i] = newAccount(t, ts, auth.Buyer)
		holds[i] = s.hold(t, buyers[i], s.seats[i])
	}
	p.down.Store(true)
	for i := range 30 {
		b := i % len(buyers)
		if a := s.checkout(t, buyers[b], orderBody(holds[b], "tok_visa"), fmt.Sprint("k", i)); a.StatusCode != 503 || !a.problem(t).is("payment-unavailable") {
			t.Fatalf("checkout %d while Payrail fails = %d %s", i, a.StatusCode, a.raw)
		}
	}
	warnings := 0
	for _, l := range logs.Lines(t) {
		switch {
		case l["level"] == "ERROR":
			t.Errorf("an ERROR line during a dependency outage: %v", l)
		case l["level"] == "WARN" && l["dependency"] == "payrail":
			warnings++
		}
	}
	if warnings != 1 {
		t.Errorf("%d WARN lines about Payrail, want 1 (the next would come 10 s later, with the count)", warnings)
	}
}

// restartablePayrail is a Payrail stub on a fixed address whose process can be
// stopped and started again on the same ledger, with another configuration.
type restartablePayrail struct {
	t    *testing.T
	db   *pgxpool.Pool
	addr string
	srv  *httptest.Server
}

func startRestartablePayrail(t *testing.T, db *pgxpool.Pool, cfg payrail.Config) *restartablePayrail {
	t.Helper()
	p := &restartablePayrail{t: t, db: db, addr: fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t))}
	p.start(cfg)
	t.Cleanup(func() { p.stop() })
	return p
}

func (p *restartablePayrail) url() string { return "http://" + p.addr }

func (p *restartablePayrail) start(cfg payrail.Config) {
	p.t.Helper()
	server, err := payrail.Open(context.Background(), p.db, cfg, nil)
	if err != nil {
		p.t.Fatal(err)
	}
	var l net.Listener
	// The address is free again once the stopped server's listener is closed.
	if !testenv.Poll(5*time.Second, 20*time.Millisecond, func() bool {
		l, err = net.Listen("tcp", p.addr)
		return err == nil
	}) {
		p.t.Fatal(err)
	}
	p.srv = httptest.NewUnstartedServer(server)
	p.srv.Listener = l
	p.srv.Start()
}

// stop closes the server, cutting the requests in flight, as a killed process.
func (p *restartablePayrail) stop() {
	if p.srv != nil {
		p.srv.CloseClientConnections()
		p.srv.Close()
		p.srv = nil
	}
}

// restart stops the stub and starts it again with cfg.
func (p *restartablePayrail) restart(cfg payrail.Config) {
	p.stop()
	p.start(cfg)
}

// TestTheSoaksFaultsLoseNothing replays the soak's faults as one repeatable
// test, in phases, each buyer keeping its Idempotency-Key and retrying until
// the answer is not a 409 "in progress" or a 503:
//
//  1. 15 buyers check out while every PostgreSQL connection of the app is
//     terminated mid-charge;
//  2. Payrail is restarted slowed past the 500 ms payment deadline: 4 buyers'
//     outcomes are unknown (202);
//  3. Payrail is restarted as it was; one buyer pays (the breaker, at four
//     buyers' failures, under its volume of 20, stays closed);
//  4. Payrail is killed while 4 buyers' charges are under way;
//  5. the other 16 buyers pay.
//
// After recovery every key answers its order's final state (no 500, none stuck
// in progress), no charged order lacks its tickets, and the money invariant
// holds.
func TestTheSoaksFaultsLoseNothing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testenv.Postgres(t)
	normal := payrail.Config{Latency: 100 * time.Millisecond}
	stubAt := startRestartablePayrail(t, db, payrail.Config{Latency: 300 * time.Millisecond})
	logs := &testenv.LogBuffer{}
	ts := startInstance(t, instance{db: db, logs: logs, env: limitEnv(append([]string{"PAYRAIL_URL", stubAt.url(),
		"STAGEDOOR_LIMIT_HOLD_BUYER", "100/1s"}, fastRecovery...)...)})
	s := &shop{testServer: ts}
	org := newAccount(t, ts, auth.Organizer)
	s.event, s.seats = newEvent(t, ts, org, eventBody(4, 10))

	type client struct {
		buyer testAccount
		body  string
		key   string
	}
	clients := make([]client, 40)
	for i := range clients {
		b := newAccount(t, ts, auth.Buyer)
		clients[i] = client{buyer: b, body: orderBody(s.hold(t, b, s.seats[i]), "tok_visa"), key: fmt.Sprint("soak-", i)}
	}
	pay := func(c client) (a answer) {
		testenv.Poll(30*time.Second, 100*time.Millisecond, func() bool {
			a = s.checkout(t, c.buyer, c.body, c.key)
			return !(a.StatusCode == 503 || a.StatusCode == 409 && a.problem(t).is("idempotency-in-progress"))
		})
		return a
	}
	first := make([]int, len(clients))
	// phase pays for clients[from:to] at once; during runs meanwhile.
	phase := func(from, to int, during func()) {
		var wg sync.WaitGroup
		for i := from; i < to; i++ {
			wg.Go(func() { first[i] = pay(clients[i]).StatusCode })
		}
		if during != nil {
			during()
		}
		wg.Wait()
	}

	var terminated int
	phase(0, 15, func() {
		time.Sleep(150 * time.Millisecond)
		terminated = testenv.TerminateConnections(t, db)
	})
	stubAt.restart(payrail.Config{Latency: 1500 * time.Millisecond})
	phase(15, 19, nil)
	stubAt.restart(normal)
	phase(19, 20, nil)
	stubAt.restart(payrail.Config{Latency: time.Second})
	phase(20, 24, func() {
		time.Sleep(200 * time.Millisecond)
		stubAt.restart(normal)
	})
	phase(24, 40, nil)

	firstCounts := map[int]int{}
	for i, st := range first {
		firstCounts[st]++
		if st >= 500 {
			t.Errorf("client %d got %d", i, st)
		}
	}
	for i := 15; i < 19; i++ {
		if first[i] != 202 {
			t.Errorf("client %d paid while Payrail was slowed past the deadline and got %d, want 202", i, first[i])
		}
	}
	if terminated == 0 {
		t.Error("no connection was terminated: the fault did not happen")
	}

	s.recoverUntil(t, 20*time.Second, "every order to be settled", func() bool {
		var pending int
		_ = db.QueryRow(ctx, `SELECT count(*) FROM orders WHERE status = 'pending'`).Scan(&pending)
		return pending == 0
	})
	counts := map[int]int{}
	for i, c := range clients {
		a := pay(c)
		counts[a.StatusCode]++
		switch {
		case a.StatusCode == 201 && as[apiclient.Order](t, a).Status == "confirmed":
		case a.StatusCode == 409 && a.problem(t).is("order-released"):
		default:
			t.Errorf("client %d, after recovery: %d %s; want its order's final state", i, a.StatusCode, a.raw)
		}
	}
	var stuck, chargedWithoutTickets int
	if err := db.QueryRow(ctx, `
		SELECT (SELECT count(*) FROM idempotency_keys WHERE lease_until > now()),
		       (SELECT count(*) FROM payrail.charges c JOIN orders o ON o.id::text = c.idempotency_key
		        WHERE c.status = 'succeeded' AND c.refunded_cents = 0
		          AND NOT EXISTS (SELECT 1 FROM tickets t WHERE t.order_id = o.id))`).Scan(&stuck, &chargedWithoutTickets); err != nil {
		t.Fatal(err)
	}
	if stuck != 0 || chargedWithoutTickets != 0 {
		t.Errorf("%d keys stuck in progress, %d charged orders without tickets; want none", stuck, chargedWithoutTickets)
	}
	s.noViolations(t)
	for _, l := range logs.Lines(t) {
		if l["level"] == "ERROR" {
			t.Errorf("logged: %v", l)
		}
	}
	t.Logf("first answers by status: %v; after recovery: %v; %d app connections terminated", firstCounts, counts, terminated)
}
