package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/stagedoor/stagedoor/internal/checkout"
	"github.com/stagedoor/stagedoor/internal/testenv"
)

// The chaos run, as the checkout is meant to survive it: 300 checkouts from 50
// buyers at once over holds on 200 seats, through two instances of the real
// program, with Payrail (a third process) answering after 50 to 800 ms,
// failing 10 % of new charges with a 500 and recording charges up to 2 s after
// making them; the first instance is killed with SIGKILL twice during the run
// and started again, and Payrail once, while it holds charges it has made but
// not answered (on keep-alive connections the instances reuse), and started
// again. Each buyer keeps the Idempotency-Key of each checkout and retries it
// (on the other instance when one is gone, and after a 503) until it has an
// answer.
const (
	chaosBuyers    = 50
	chaosCheckouts = 300
	chaosSeats     = 200 // 10 rows of 20
)

func TestChaosCheckoutLosesNothing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dbURL, db := ownDatabase(t)
	const payrailKey = "prk_chaos_0123456789abcdef"
	payrail, payrailEnv := startPayrail(t, dbURL, payrailKey, nil, map[string]string{
		"PAYRAIL_LATENCY": "50ms", "PAYRAIL_LATENCY_JITTER": "750ms",
		"PAYRAIL_FAILURE_RATE": "0.1", "PAYRAIL_RECORD_DELAY": "2s",
	})
	payrailAddr := payrail.addr
	// Payrail can prove "no charge" only for attempts made a clock-skew
	// allowance after its ledger began: the run starts later than that.
	ledgerBegan := time.Now()

	env := testEnv(t)
	for k, v := range map[string]string{
		"DATABASE_URL": dbURL, "PAYRAIL_URL": "http://" + payrailAddr, "PAYRAIL_API_KEY": payrailKey,
		// About one charge in eight outlasts the deadline: its outcome is unknown.
		"STAGEDOOR_PAYMENT_TIMEOUT": "700ms", "STAGEDOOR_RECOVERY_AFTER": "2100ms",
		"STAGEDOOR_LIMIT_HOLD_BUYER": "1000/1s", "STAGEDOOR_LIMIT_HOLD_ORGANIZER": "100000/1s",
		// A killed instance strands its requests' concurrency leases until they
		// expire (10 s); this test is about money, not buyer-concurrency.
		"STAGEDOOR_LIMIT_BUYER_CONCURRENCY": "1000",
		"STAGEDOOR_LIMIT_LOGIN_ADDRESS":     "1000/1s", "STAGEDOOR_LIMIT_SIGNUP_ADDRESS": "1000/1s",
		// Each buyer makes six payment attempts or more, retried through the
		// faults: this test is about money, not card testing.
		"STAGEDOOR_LIMIT_CHECKOUT_BUYER": "1000/1s", "STAGEDOOR_LIMIT_CHECKOUT_HOLD": "1000/1s",
	} {
		env[k] = v
	}
	// The instances' WARN and ERROR lines, each its own.
	logs := []*testenv.LogBuffer{{}, {}}
	instances := []*instance{startInstance(t, env, logs[0]), startInstance(t, env, logs[1])}
	api := &chaosAPI{t: t, client: &http.Client{Timeout: 15 * time.Second}, instances: instances}

	event, seats := api.setUp()
	buyers := make([]buyer, chaosBuyers)
	for i := range buyers {
		buyers[i] = api.newBuyer(i)
	}

	time.Sleep(time.Until(ledgerBegan.Add(checkout.ClockSkew + 100*time.Millisecond)))

	// The run: each buyer takes its own 4 seats in turn.
	var keys atomic.Int64
	var logMu sync.Mutex
	var checkouts []chaosCheckout
	var wg sync.WaitGroup
	began := time.Now()
	for b, who := range buyers {
		wg.Go(func() {
			for s := 4 * b; s < 4*b+4; s++ {
				for _, c := range api.buySeat(b, who, event, seats[s], s%2 == 0, &keys) {
					logMu.Lock()
					checkouts = append(checkouts, c)
					logMu.Unlock()
				}
			}
		})
	}
	// The killers: the first instance dies twice, and comes back each time;
	// between, Payrail dies while it holds a charge it made and has not
	// answered yet, and comes back.
	for _, at := range []time.Duration{time.Second, 3 * time.Second} {
		time.Sleep(time.Until(began.Add(at)))
		instances[0].kill(t)
		time.Sleep(500 * time.Millisecond)
		instances[0].restart(t, env)
		if at == time.Second {
			killedWith := killPayrailMidCharge(t, db, payrail)
			t.Logf("Payrail killed with %d charges made and not answered", killedWith)
			time.Sleep(300 * time.Millisecond)
			payrail.restart(t, payrailEnv)
		}
	}
	wg.Wait()
	t.Logf("the run: %d checkouts with their own keys in %s", len(checkouts), time.Since(began).Round(time.Millisecond))
	// chaosCheckouts caps the keys; how many a run uses is the faults' to say
	// (a seat's purchase ends at its first answer that is neither declined nor
	// released: 279 to 300 seen). What must be is a checkout of every seat.
	if len(checkouts) < 4*chaosBuyers {
		t.Errorf("only %d checkouts were made for %d buyers' 4 seats each: a seat was never tried", len(checkouts), chaosBuyers)
	}

	// Recovery and reconciliation run in both instances; wait for them.
	var violations []string
	var pending int
	if !testenv.Poll(40*time.Second, 500*time.Millisecond, func() bool {
		if err := db.QueryRow(ctx, `SELECT count(*) FROM orders WHERE status = 'pending'`).Scan(&pending); err != nil {
			t.Fatal(err)
		}
		violations = testenv.MoneyViolations(t, db)
		return pending == 0 && len(violations) == 0
	}) {
		rows, _ := db.Query(ctx, `SELECT o.id::text, o.created_at - l.started_at, o.charge_deadline - o.created_at, o.lease_until
			FROM orders o, payrail.ledger l WHERE o.status = 'pending'`)
		for rows.Next() {
			var id string
			var afterLedger, window time.Duration
			var lease *time.Time
			_ = rows.Scan(&id, &afterLedger, &window, &lease)
			t.Logf("pending order %s: made %s after the ledger began, window %s, lease %v", id, afterLedger, window, lease)
		}
		rows.Close()
		t.Fatalf("after 40 s, %d orders still pending and the invariant fails:\n%s", pending, strings.Join(violations, "\n"))
	}

	// No order was told "certainly no charge" that Payrail charged (the
	// invariant says so too), and none that Payrail declined was released: its
	// key answers 402, as the buyer's retry should learn.
	var releasedDeclined int
	if err := db.QueryRow(ctx, `
		SELECT count(*) FROM orders o JOIN payrail.charges c ON c.idempotency_key = o.id::text
		WHERE o.status = 'released' AND c.status = 'declined'`).Scan(&releasedDeclined); err != nil {
		t.Fatal(err)
	}
	if releasedDeclined != 0 {
		t.Errorf("%d orders Payrail declined were released; want declined", releasedDeclined)
	}
	// Every buyer that kept its key learns its order's outcome from it.
	answers := map[string]int{}
	for _, c := range checkouts {
		var status string
		if err := db.QueryRow(ctx, `
			SELECT o.status FROM idempotency_keys k JOIN orders o ON o.id = k.order_id
			WHERE k.buyer_id = $1 AND k.key = $2`, c.buyer.id, c.key).Scan(&status); err != nil {
			t.Errorf("checkout %s: its key has no order: %v (first answer %d)", c.key, err, c.first)
			continue
		}
		if status == "failed" {
			answers["failed: not asked again (a retry would pay again)"]++
			continue
		}
		code, body := api.pay(0, c.buyer.token, c.body, c.key)
		answers[fmt.Sprint(code, " ", status)]++
		want := map[string]int{"confirmed": 201, "declined": 402, "released": 409}[status]
		if code != want || body["id"] != nil && status != "confirmed" {
			t.Errorf("checkout %s: its order is %s, the key answers %d %v", c.key, status, code, body)
		}
		if tickets, _ := body["tickets"].([]any); status == "confirmed" && len(tickets) != 1 {
			t.Errorf("checkout %s: confirmed with %d tickets, want 1", c.key, len(tickets))
		}
	}

	var charges, succeeded, refunded, confirmed, released, declined, failed, sold int
	if err := db.QueryRow(ctx, `
		SELECT (SELECT count(*) FROM payrail.charges),
		       (SELECT count(*) FROM payrail.charges WHERE status = 'succeeded'),
		       (SELECT count(*) FROM payrail.charges WHERE refunded_cents > 0),
		       (SELECT count(*) FROM orders WHERE status = 'confirmed'),
		       (SELECT count(*) FROM orders WHERE status = 'released'),
		       (SELECT count(*) FROM orders WHERE status = 'declined'),
		       (SELECT count(*) FROM orders WHERE status = 'failed'),
		       (SELECT count(*) FROM seats WHERE sold_at IS NOT NULL)`).
		Scan(&charges, &succeeded, &refunded, &confirmed, &released, &declined, &failed, &sold); err != nil {
		t.Fatal(err)
	}
	if succeeded != confirmed+refunded || sold != confirmed || sold > chaosSeats {
		t.Errorf("%d succeeded charges, %d confirmed orders, %d refunds, %d seats sold: want charges = confirmed + refunded, one seat an order",
			succeeded, confirmed, refunded, sold)
	}
	t.Logf("Payrail: %d charges (%d succeeded, %d declined), %d refunded; orders: %d confirmed, %d released, %d declined, %d failed; %d seats sold",
		charges, succeeded, charges-succeeded, refunded, confirmed, released, declined, failed, sold)
	// Payrail's outages are its deaths, not its 10 % of failures: a handful of
	// WARN lines, not one a failure.
	outages := 0
	for _, lb := range logs {
		for line := range strings.Lines(lb.String()) {
			var l map[string]any
			if json.Unmarshal([]byte(line), &l) == nil && l["dependency"] == "payrail" && l["msg"] == "dependency unavailable" {
				outages++
				t.Logf("a Payrail outage began at %v: %v", l["since"], l["error"])
			}
		}
	}
	t.Logf("Payrail outages logged by the instances: %d", outages)
	// No fault of a dependency is a 500: each is a problem the buyer can act on.
	for i, lb := range logs {
		for line := range strings.Lines(lb.String()) {
			if strings.Contains(line, `"request failed"`) {
				t.Errorf("instance %d: %s", i, strings.TrimSpace(line))
			}
		}
	}
	if n := firstAnswers(checkouts)[http.StatusInternalServerError]; n > 0 {
		t.Errorf("%d checkouts were first answered 500; want none", n)
	}
	if outages == 0 || outages*4 > failed {
		t.Errorf("%d Payrail outages logged for %d orders Payrail failed; want its death logged, and far fewer outages than failures", outages, failed)
	}
	t.Logf("first answers: %v", firstAnswers(checkouts))
	t.Logf("what the keys answer after recovery: %v", answers)
}

// buyer is a signed-up buyer and its session.
type buyer struct{ id, token string }

// chaosCheckout is one buyer's checkout with its own key, as the buyer keeps it.
type chaosCheckout struct {
	buyer     buyer
	key, body string
	first     int // the first answer that was not "in progress" or "busy"
}

func firstAnswers(cs []chaosCheckout) map[int]int {
	out := map[int]int{}
	for _, c := range cs {
		out[c.first]++
	}
	return out
}

// chaosAPI is the buyers' side of the run.
type chaosAPI struct {
	t         *testing.T
	client    *http.Client
	instances []*instance
}

// call sends one request to instance i (or, when it is down, the other), and
// decodes a JSON object answer. It returns 0 when no instance answered.
func (a *chaosAPI) call(i int, method, path, token, body string, header ...string) (int, map[string]any) {
	for try := range 2 * len(a.instances) {
		in := a.instances[(i+try)%len(a.instances)]
		req, _ := http.NewRequest(method, in.base()+path, strings.NewReader(body))
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		for h := 0; h+1 < len(header); h += 2 {
			req.Header.Set(header[h], header[h+1])
		}
		resp, err := a.client.Do(req)
		if err != nil {
			time.Sleep(50 * time.Millisecond) // a killed instance: try the other
			continue
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var m map[string]any
		_ = json.Unmarshal(raw, &m)
		return resp.StatusCode, m
	}
	return 0, nil
}

// setUp makes the organizer and the event, and returns its id and seat ids.
func (a *chaosAPI) setUp() (string, []string) {
	a.call(1, "POST", "/v1/organizers", "", `{"email":"org@example.com","password":"correct horse","name":"Org"}`)
	_, login := a.call(1, "POST", "/v1/login", "", `{"email":"org@example.com","password":"correct horse"}`)
	org, _ := login["token"].(string)
	code, ev := a.call(1, "POST", "/v1/events", org, fmt.Sprintf(`{"name":"Chaos night","venue":"Hall",
		"starts_at":%q,"on_sale_at":%q,"sections":[{"name":"Floor","rows":10,"seats_per_row":20,"price_cents":4500}]}`,
		time.Now().Add(30*24*time.Hour).UTC().Format(time.RFC3339), time.Now().Add(-time.Minute).UTC().Format(time.RFC3339)))
	id, _ := ev["id"].(string)
	if code != 201 || id == "" {
		a.t.Fatalf("create the event: %d %v", code, ev)
	}
	_, m := a.call(1, "GET", "/v1/events/"+id+"/seats", "", "")
	list, _ := m["seats"].([]any)
	var seats []string
	for _, s := range list {
		seats = append(seats, s.(map[string]any)["id"].(string))
	}
	if len(seats) != chaosSeats {
		a.t.Fatalf("the event has %d seats, want %d", len(seats), chaosSeats)
	}
	return id, seats
}

// newBuyer signs buyer i up and logs it in.
func (a *chaosAPI) newBuyer(i int) buyer {
	creds := fmt.Sprintf(`{"email":"buyer-%d@example.com","password":"correct horse"}`, i)
	a.call(1, "POST", "/v1/buyers", "", strings.Replace(creds, "}", `,"name":"B"}`, 1))
	code, login := a.call(1, "POST", "/v1/login", "", creds)
	token, _ := login["token"].(string)
	principal, _ := login["principal"].(map[string]any)
	id, _ := principal["id"].(string)
	if code != 200 || token == "" || id == "" {
		a.t.Fatalf("log buyer %d in: %d %v", i, code, login)
	}
	return buyer{id: id, token: token}
}

// buySeat holds the seat and checks it out until it is bought or lost: first
// with tok_declined when declineFirst, then tok_visa with a new key on the
// same hold; a released order's seat is held again. It returns the checkouts
// made, at most as many as the run has left.
func (a *chaosAPI) buySeat(b int, who buyer, event, seat string, declineFirst bool, keys *atomic.Int64) []chaosCheckout {
	var made []chaosCheckout
	for {
		code, h := a.call(b, "POST", "/v1/holds", who.token, fmt.Sprintf(`{"event_id":%q,"seat_ids":[%q]}`, event, seat))
		if code != 201 {
			return made // held or sold by now
		}
		holdID, _ := h["id"].(string)
		payWith := "tok_visa"
		if declineFirst {
			payWith, declineFirst = "tok_declined", false
		}
	attempts:
		for {
			n := keys.Add(1)
			if n > chaosCheckouts {
				return made
			}
			c := chaosCheckout{buyer: who, key: fmt.Sprint("chaos-", n),
				body: fmt.Sprintf(`{"hold_id":%q,"payment_token":%q}`, holdID, payWith)}
			c.first, _ = a.pay(b, who.token, c.body, c.key)
			made = append(made, c)
			outcome := c.first
			if outcome == 202 { // pending: ask the key again until it knows
				testenv.Poll(20*time.Second, 250*time.Millisecond, func() bool {
					outcome, _ = a.pay(b, who.token, c.body, c.key)
					return outcome != 202
				})
			}
			switch outcome {
			case 402: // declined: the hold is still ours; pay with the other card
				payWith = "tok_visa"
			case 409: // released: hold the seat again
				break attempts
			default: // bought (or, past 20 s, still pending: checked at the end)
				return made
			}
		}
	}
}

// pay posts a checkout and retries it with the same key, for up to 30 s, while
// the answer is "in progress" (409), "busy" or "payment unavailable" (503: no
// charge was made, the key may try again) or no instance answers.
func (a *chaosAPI) pay(b int, token, body, key string) (int, map[string]any) {
	var code int
	var m map[string]any
	testenv.Poll(30*time.Second, 100*time.Millisecond, func() bool {
		code, m = a.call(b, "POST", "/v1/orders", token, body, "Idempotency-Key", key)
		return !(code == 0 || code == 503 || code == 409 && m["type"] == "/problems/idempotency-in-progress")
	})
	return code, m
}

// instance is one `stagedoor serve` (or, with command "payrail", `stagedoor
// payrail`) child process on a fixed address.
type instance struct {
	mu      sync.Mutex
	cmd     *exec.Cmd
	addr    string
	command string    // "serve" when empty
	logs    io.Writer // its stderr; discarded when nil
}

func startInstance(t *testing.T, env map[string]string, logs io.Writer) *instance {
	t.Helper()
	in := &instance{addr: fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t)), logs: logs}
	in.restart(t, env)
	return in
}

// killPayrailMidCharge waits until Payrail holds a charge it made for an order
// still pending (made, not answered yet), kills it with SIGKILL, and returns
// how many such charges it held.
func killPayrailMidCharge(t *testing.T, db *pgxpool.Pool, payrail *instance) int {
	t.Helper()
	var held int
	if !testenv.Poll(10*time.Second, 5*time.Millisecond, func() bool {
		if err := db.QueryRow(context.Background(), `
			SELECT count(*) FROM orders o JOIN payrail.charges c ON c.idempotency_key = o.id::text
			WHERE o.status = 'pending'`).Scan(&held); err != nil {
			t.Fatal(err)
		}
		return held > 0
	}) {
		t.Fatal("Payrail held no charge it had not answered within 10 s: the fault cannot happen")
	}
	payrail.kill(t)
	return held
}

func (in *instance) base() string { return "http://" + in.addr }

// restart starts the program on the instance's address and waits until it serves.
func (in *instance) restart(t *testing.T, env map[string]string) {
	t.Helper()
	own := map[string]string{"STAGEDOOR_ADDR": in.addr, "STAGEDOOR_LOG_LEVEL": "warn"}
	for k, v := range env {
		if _, set := own[k]; !set {
			own[k] = v
		}
	}
	cmd, stderr := startProgram(t, own, cmp.Or(in.command, "serve"))
	logs := in.logs
	if logs == nil {
		logs = io.Discard
	}
	go io.Copy(logs, stderr)
	in.mu.Lock()
	in.cmd = cmd
	in.mu.Unlock()
	// Up is any answer of /healthz, as soon as the program serves.
	var err error
	if !testenv.Poll(20*time.Second, 20*time.Millisecond, func() bool {
		var resp *http.Response
		if resp, err = http.Get(in.base() + "/healthz"); err == nil {
			resp.Body.Close()
		}
		return err == nil
	}) {
		t.Fatalf("instance on %s did not come up: %v", in.addr, err)
	}
}

// kill ends the instance with SIGKILL, as a crash or an OOM kill would.
func (in *instance) kill(t *testing.T) {
	t.Helper()
	in.mu.Lock()
	defer in.mu.Unlock()
	if err := in.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	var exitErr *exec.ExitError
	if err := in.cmd.Wait(); err != nil && !errors.As(err, &exitErr) {
		t.Logf("wait for the killed instance: %v", err)
	}
}
