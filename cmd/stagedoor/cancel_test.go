package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/stagedoor/stagedoor/internal/testenv"
)

// cancelOrders is how many orders (of two seats each) the cancelled event has.
const cancelOrders = 40

// TestACancelSurvivesKill: an event of 40 orders is cancelled through two
// instances of the real program while Payrail (another process) answers
// after 100 ms to 1.3 s (past the 700 ms deadline about half the time) and
// fails a quarter of new refunds with a 500. The instance that took the
// cancel is SIGKILLed once refunds are under way and started again; Payrail is
// SIGKILLed once while it holds refunds it has made and not answered, and
// started again. Afterwards the cancellation is done, every order is
// refunded, Payrail holds exactly one refund of each charge (its whole
// amount), no refund is pending, and the invariant returns no rows. The
// counts (orders, refunds, sends to Payrail, retries, Payrail's 500s) are
// logged: the closing note quotes them.
func TestACancelSurvivesKill(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dbURL, db := ownDatabase(t)
	const payrailKey = "prk_cancel_0123456789abcdef"
	payrailLogs := &testenv.LogBuffer{}
	payrail, payrailEnv := startPayrail(t, dbURL, payrailKey, payrailLogs, map[string]string{"PAYRAIL_LATENCY": "20ms"})
	payrailAddr := payrail.addr

	env := testEnv(t)
	for k, v := range map[string]string{
		"DATABASE_URL": dbURL, "PAYRAIL_URL": "http://" + payrailAddr, "PAYRAIL_API_KEY": payrailKey,
		"STAGEDOOR_PAYMENT_TIMEOUT": "700ms", "STAGEDOOR_RECOVERY_AFTER": "2100ms",
		"STAGEDOOR_LIMIT_HOLD_BUYER": "1000/1s", "STAGEDOOR_LIMIT_HOLD_ORGANIZER": "100000/1s",
		"STAGEDOOR_LIMIT_BUYER_CONCURRENCY": "1000", "STAGEDOOR_LIMIT_ORGANIZER_CONCURRENCY": "1000",
		"STAGEDOOR_LIMIT_LOGIN_ADDRESS": "1000/1s", "STAGEDOOR_LIMIT_SIGNUP_ADDRESS": "1000/1s",
		"STAGEDOOR_LIMIT_CHECKOUT_BUYER": "1000/1s", "STAGEDOOR_LIMIT_CHECKOUT_HOLD": "1000/1s",
	} {
		env[k] = v
	}
	instances := []*instance{startInstance(t, env, nil), startInstance(t, env, nil)}
	api := &chaosAPI{t: t, client: &http.Client{Timeout: 15 * time.Second}, instances: instances}
	event, seats := api.setUp()
	for i := range cancelOrders {
		who := api.newBuyer(i)
		code, h := api.call(i, "POST", "/v1/holds", who.token, fmt.Sprintf(`{"event_id":%q,"seat_ids":[%q,%q]}`, event, seats[2*i], seats[2*i+1]))
		holdID, _ := h["id"].(string)
		if code != 201 {
			t.Fatalf("hold %d: %d %v", i, code, h)
		}
		if code, o := api.pay(i, who.token, fmt.Sprintf(`{"hold_id":%q,"payment_token":"tok_visa"}`, holdID), fmt.Sprint("buy-", i)); code != 201 {
			t.Fatalf("checkout %d: %d %v", i, code, o)
		}
	}

	// Payrail turns slow and flaky; the organizer cancels.
	payrail.kill(t)
	payrailEnv["PAYRAIL_LATENCY"], payrailEnv["PAYRAIL_LATENCY_JITTER"], payrailEnv["PAYRAIL_FAILURE_RATE"] = "100ms", "1200ms", "0.25"
	payrail.restart(t, payrailEnv)
	_, login := api.call(0, "POST", "/v1/login", "", `{"email":"org@example.com","password":"correct horse"}`)
	org, _ := login["token"].(string)
	if code, e := api.call(0, "POST", "/v1/organizer/events/"+event+"/cancel", org, ""); code != 202 || e["status"] != "cancelled" {
		t.Fatalf("cancel = %d %v", code, e)
	}
	began := time.Now()
	count := func(query string) int {
		var n int
		if err := db.QueryRow(ctx, query).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	waitUntil := func(what, query string) {
		t.Helper()
		testenv.Eventually(t, 60*time.Second, func() bool { return count(query) > 0 }, what)
	}
	waitUntil("refunds under way", `SELECT (count(*) >= 8)::int FROM refunds WHERE reason = 'cancellation'`)
	instances[0].kill(t)
	instances[0].restart(t, env)
	waitUntil("Payrail to hold a refund it has not answered", `
		SELECT count(*) FROM refunds r JOIN payrail.refunds p ON p.refund_key = r.id::text WHERE r.status = 'pending'`)
	payrail.kill(t)
	payrail.restart(t, payrailEnv)

	var violations []string
	if !testenv.Poll(90*time.Second, 250*time.Millisecond, func() bool {
		if count(`SELECT count(*) FROM event_cancellations WHERE done_at IS NOT NULL`) == 0 {
			return false
		}
		violations = testenv.MoneyViolations(t, db)
		return len(violations) == 0
	}) {
		t.Fatalf("after 90 s the cancellation is not done (%d orders refunded of %d), or the invariant fails:\n%s",
			count(`SELECT count(*) FROM orders WHERE status = 'refunded'`), cancelOrders, strings.Join(violations, "\n"))
	}
	took := time.Since(began)
	refunded := count(`SELECT count(*) FROM orders WHERE status = 'refunded'`)
	wholeOnce := count(`SELECT count(*) FROM payrail.charges c
		WHERE c.refunded_cents = c.amount_cents AND (SELECT count(*) FROM payrail.refunds r WHERE r.charge_id = c.id) = 1`)
	payrailRefunds := count(`SELECT count(*) FROM payrail.refunds`)
	ours := count(`SELECT count(*) FROM refunds WHERE reason = 'cancellation'`)
	failed := count(`SELECT count(*) FROM refunds WHERE status = 'failed'`)
	sends := count(`SELECT coalesce(sum(attempts), 0)::int FROM refunds`)
	pending := count(`SELECT count(*) FROM refunds WHERE status = 'pending'`)
	injected := strings.Count(payrailLogs.String(), "refund failed with 500")
	if refunded != cancelOrders || wholeOnce != cancelOrders || payrailRefunds != cancelOrders || pending != 0 {
		t.Errorf("%d orders refunded, %d charges refunded whole once, %d refunds at Payrail, %d pending; want %d, %d, %d, 0",
			refunded, wholeOnce, payrailRefunds, pending, cancelOrders, cancelOrders, cancelOrders)
	}
	if sends <= ours || injected == 0 {
		t.Errorf("%d sends for %d refunds, %d injected failures: the faults did not happen", sends, ours, injected)
	}
	t.Logf("cancel under faults: %d orders, all refunded in %s; %d refunds made at Payrail (one a charge); "+
		"%d refunds begun by the job (%d refused by Payrail and begun again); %d sends to Payrail, %d of them retries; "+
		"Payrail answered 500 to %d, and was killed once with a refund unanswered; the instance that took the cancel was killed once",
		refunded, took.Round(100*time.Millisecond), payrailRefunds, ours, failed, sends, sends-ours, injected)
}

// ownDatabase is a database of the test's own, migrated, and a pool on it,
// closed when the test ends.
func ownDatabase(t *testing.T) (string, *pgxpool.Pool) {
	t.Helper()
	url := testenv.DatabaseURL(t)
	db, err := pgxpool.New(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	return url, db
}

// startPayrail starts `stagedoor payrail` on a free port, its ledger in the
// database at dbURL, asking for key, with env (its faults) beside, its log
// written to logs (nil: discarded); it returns the process and its whole
// environment, to start it again with.
func startPayrail(t *testing.T, dbURL, key string, logs io.Writer, env map[string]string) (*instance, map[string]string) {
	t.Helper()
	addr := fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t))
	all := map[string]string{"PAYRAIL_ADDR": addr, "PAYRAIL_DATABASE_URL": dbURL, "PAYRAIL_API_KEY": key}
	for k, v := range env {
		all[k] = v
	}
	p := &instance{addr: addr, command: "payrail", logs: logs}
	p.restart(t, all)
	return p, all
}
