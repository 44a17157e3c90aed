package httpapi_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stagedoor/stagedoor/internal/auth"
	"github.com/stagedoor/stagedoor/internal/payrail"
)

// TestCardTestingIsLimitedPerBuyer: one buyer sends twenty payment attempts
// at once, each on a hold of its own with a card that declines. Exactly
// checkout-buyer's burst (5) reach Payrail; the other fifteen are 429
// rate-limited naming checkout-buyer, with its headers, and wrote nothing:
// no order, no key, their holds untouched. Switched off through the admin
// API, the limit refuses no more.
func TestCardTestingIsLimitedPerBuyer(t *testing.T) {
	t.Parallel()
	s := newShopWith(t, payrail.Config{Latency: 50 * time.Millisecond},
		"STAGEDOOR_MAX_HELD_SEATS", "25", "STAGEDOOR_ADMIN_TOKEN", adminToken)
	tester := newAccount(t, s.testServer, auth.Buyer)
	holds := make([]string, 20)
	for i := range holds {
		holds[i] = s.hold(t, tester, s.seats[i])
	}
	answers := make([]answer, len(holds))
	atOnce(len(holds), func(i int) {
		answers[i] = s.checkout(t, tester, orderBody(holds[i], "tok_declined"), fmt.Sprint("try-", i))
	})

	declined, limited := 0, 0
	for i, a := range answers {
		switch {
		case a.StatusCode == 402:
			declined++
		case a.StatusCode == 429 && a.problem(t).is("rate-limited") && a.problem(t).Limit == "checkout-buyer" &&
			a.Header.Get("RateLimit-Policy") == `"checkout-buyer";q=5;w=600` && a.Header.Get("Retry-After") != "":
			limited++
		default:
			t.Errorf("attempt %d = %d %s %v", i, a.StatusCode, a.raw, a.Header)
		}
	}
	if posts := s.payrail.posts.Load(); declined != 5 || limited != 15 || posts != 5 {
		t.Errorf("%d declined, %d refused, %d charges asked of Payrail; want 5, 15 and 5", declined, limited, posts)
	}
	var orders, keys, active int
	if err := s.DB.QueryRow(context.Background(), `
		SELECT (SELECT count(*) FROM orders), (SELECT count(*) FROM idempotency_keys),
		       (SELECT count(*) FROM holds WHERE status = 'active')`).Scan(&orders, &keys, &active); err != nil {
		t.Fatal(err)
	}
	if orders != 5 || keys != 5 || active != 20 {
		t.Errorf("%d orders, %d keys, %d active holds; want 5, 5 and 20: a refused attempt writes nothing", orders, keys, active)
	}

	s.putLimit(t, "checkout-buyer", `{"mode":"off"}`)
	eventually(t, "checkout-buyer off lets the buyer pay", func() bool {
		return s.checkout(t, tester, orderBody(holds[19], "tok_visa"), "").StatusCode == 201
	})
	s.noViolations(t)
}

// TestAttemptsPerHoldAreCapped: checkout-hold lets three payment attempts
// through on one hold (checkout-buyer raised out of the way); the fourth is
// 429 naming checkout-hold and reaches no Payrail. A retry with the first
// attempt's key still answers its order (402, replayed): asking again costs
// nothing. Another hold of the buyer has attempts of its own.
func TestAttemptsPerHoldAreCapped(t *testing.T) {
	t.Parallel()
	s := newShop(t, 0, "STAGEDOOR_LIMIT_CHECKOUT_BUYER", "100/1s")
	ada := newAccount(t, s.testServer, auth.Buyer)
	holdID := s.hold(t, ada, s.seats[0])
	for i := range 3 {
		if a := s.checkout(t, ada, orderBody(holdID, "tok_declined"), fmt.Sprint("card-", i)); a.StatusCode != 402 {
			t.Fatalf("attempt %d = %d %s, want 402", i, a.StatusCode, a.raw)
		}
	}
	a := s.checkout(t, ada, orderBody(holdID, "tok_visa"), "card-3")
	if a.StatusCode != 429 || a.problem(t).Limit != "checkout-hold" || !strings.HasPrefix(a.Header.Get("RateLimit-Policy"), `"checkout-hold";q=3;`) {
		t.Fatalf("the fourth attempt on the hold = %d %s %v; want 429 checkout-hold", a.StatusCode, a.raw, a.Header)
	}
	if n := s.payrail.posts.Load(); n != 3 {
		t.Errorf("Payrail was asked %d times, want 3", n)
	}
	for range 3 {
		if a := s.checkout(t, ada, orderBody(holdID, "tok_declined"), "card-0"); a.StatusCode != 402 || a.Header.Get("Idempotent-Replayed") != "true" {
			t.Errorf("a retry of the first attempt's key = %d %s; want its declined order, replayed", a.StatusCode, a.raw)
		}
	}
	if a := s.checkout(t, ada, orderBody(s.hold(t, ada, s.seats[1]), "tok_visa"), "other"); a.StatusCode != 201 {
		t.Errorf("an attempt on another hold = %d %s, want 201", a.StatusCode, a.raw)
	}
	if n := s.payrail.posts.Load(); n != 4 {
		t.Errorf("Payrail was asked %d times, want 4: replays ask nothing", n)
	}
}

// TestARetryOfAFailedPaymentSpendsNoAttemptOfTheHold: a card that fails
// (tok_error: Payrail answers 500, certainly no charge) retried five times
// with its key, as a client is invited to, reaches Payrail five times:
// checkout-hold caps the cards tried on a hold, and a retry is the same card,
// so it spends checkout-buyer only (raised out of the way here). The hold
// still has two attempts of its own: a new card declines, another pays.
func TestARetryOfAFailedPaymentSpendsNoAttemptOfTheHold(t *testing.T) {
	t.Parallel()
	s := newShop(t, 0, "STAGEDOOR_LIMIT_CHECKOUT_BUYER", "100/1s")
	ada := newAccount(t, s.testServer, auth.Buyer)
	holdID := s.hold(t, ada, s.seats[0])
	for i := range 5 {
		if a := s.checkout(t, ada, orderBody(holdID, "tok_error"), "failing-card"); a.StatusCode != 503 || !a.problem(t).is("payment-unavailable") {
			t.Fatalf("try %d of the failing card = %d %s, want 503 payment-unavailable", i, a.StatusCode, a.raw)
		}
	}
	if n := s.payrail.posts.Load(); n != 5 {
		t.Errorf("Payrail was asked %d times, want 5: each retry of a failed attempt is tried", n)
	}
	if a := s.checkout(t, ada, orderBody(holdID, "tok_declined"), "second-card"); a.StatusCode != 402 {
		t.Errorf("a second card on the hold = %d %s, want 402", a.StatusCode, a.raw)
	}
	if a := s.checkout(t, ada, orderBody(holdID, "tok_visa"), "third-card"); a.StatusCode != 201 {
		t.Errorf("a third card on the hold = %d %s, want 201: retries spent none of its attempts", a.StatusCode, a.raw)
	}
	s.noViolations(t)
}

// TestACardTesterPastItsLimitHoldsNoSlot: an instance with one checkout slot.
// A buyer past checkout-buyer sends thirty attempts at once while another
// buyer checks out: every one of the thirty is refused (429, or 503 while the
// slot is the other's) without reaching Payrail, and the other buyer, who
// needs the one slot, is charged: a refused attempt never holds a slot.
func TestACardTesterPastItsLimitHoldsNoSlot(t *testing.T) {
	t.Parallel()
	s := newShop(t, 200*time.Millisecond, "STAGEDOOR_CHECKOUT_SLOTS", "1", "STAGEDOOR_LIMIT_CHECKOUT_BUYER", "1/1h")
	tester, ada := newAccount(t, s.testServer, auth.Buyer), newAccount(t, s.testServer, auth.Buyer)
	testersHold := s.hold(t, tester, s.seats[0])
	if a := s.checkout(t, tester, orderBody(testersHold, "tok_declined"), ""); a.StatusCode != 402 {
		t.Fatalf("the tester's first attempt = %d %s", a.StatusCode, a.raw)
	}
	adasHold := s.hold(t, ada, s.seats[1])
	start := make(chan struct{})
	var wg sync.WaitGroup
	var adas answer
	wg.Go(func() { <-start; adas = s.checkout(t, ada, orderBody(adasHold, "tok_visa"), "") })
	for i := range 30 {
		wg.Go(func() {
			<-start
			a := s.checkout(t, tester, orderBody(testersHold, "tok_declined"), fmt.Sprint("t-", i))
			if a.StatusCode != 429 && !(a.StatusCode == 503 && a.problem(t).is("service-overloaded")) {
				t.Errorf("a tester's attempt = %d %s; want 429 (or 503 while ada's checkout holds the slot)", a.StatusCode, a.raw)
			}
		})
	}
	close(start)
	wg.Wait()
	if adas.StatusCode != 201 {
		t.Errorf("ada's checkout = %d %s; want 201: the tester's refused attempts must hold no slot", adas.StatusCode, adas.raw)
	}
	if n := s.payrail.posts.Load(); n != 2 {
		t.Errorf("Payrail was asked %d times, want 2 (the tester's first attempt and ada's)", n)
	}
}

// TestAShedCheckoutSpendsNoToken: while the one checkout slot is taken, a
// buyer with one payment attempt left (checkout-buyer 1/1h) is told 503 with
// Retry-After, as before; its retry once the slot is free is let through:
// the refusal for want of a slot spent none of its attempts.
func TestAShedCheckoutSpendsNoToken(t *testing.T) {
	t.Parallel()
	s := newShop(t, time.Second, "STAGEDOOR_CHECKOUT_SLOTS", "1", "STAGEDOOR_LIMIT_CHECKOUT_BUYER", "1/1h")
	ada, bob := newAccount(t, s.testServer, auth.Buyer), newAccount(t, s.testServer, auth.Buyer)
	adasHold, bobsHold := s.hold(t, ada, s.seats[0]), s.hold(t, bob, s.seats[1])
	done := make(chan answer, 1)
	go func() { done <- s.checkout(t, ada, orderBody(adasHold, "tok_visa"), "") }()
	waitFor(t, 5*time.Second, "ada's charge to reach Payrail", func() bool { return s.payrail.posts.Load() == 1 })
	body := orderBody(bobsHold, "tok_visa")
	if a := s.checkout(t, bob, body, "bob"); a.StatusCode != 503 || !a.problem(t).is("service-overloaded") || a.problem(t).Bound != "checkout" || a.Header.Get("Retry-After") != "2" {
		t.Errorf("bob's checkout while the slot is taken = %d %s; want 503 service-overloaded", a.StatusCode, a.raw)
	}
	if a := <-done; a.StatusCode != 201 {
		t.Fatalf("ada's checkout = %d %s", a.StatusCode, a.raw)
	}
	if a := s.checkout(t, bob, body, "bob"); a.StatusCode != 201 {
		t.Errorf("bob's retry once the slot is free = %d %s; want 201: the 503 spent no attempt", a.StatusCode, a.raw)
	}
}

// TestACardNumberIsA400: a card number sent as payment_token is refused
// before anything is written or charged, and the answer does not repeat it.
func TestACardNumberIsA400(t *testing.T) {
	t.Parallel()
	s := newShop(t, 0)
	ada := newAccount(t, s.testServer, auth.Buyer)
	holdID := s.hold(t, ada, s.seats[0])
	for _, pan := range []string{"4242424242424242", "4242 4242 4242 4242", "5555-5555-5555-4444"} {
		a := s.checkout(t, ada, orderBody(holdID, pan), "pan")
		if a.StatusCode != 400 || !a.problem(t).is("invalid-request") || strings.Contains(string(a.raw), pan[:8]) {
			t.Errorf("checkout with %q = %d %s; want 400 that does not repeat it", pan, a.StatusCode, a.raw)
		}
	}
	var orders, keys int
	_ = s.DB.QueryRow(context.Background(), `SELECT (SELECT count(*) FROM orders), (SELECT count(*) FROM idempotency_keys)`).Scan(&orders, &keys)
	if n := s.payrail.posts.Load(); n != 0 || orders != 0 || keys != 0 {
		t.Errorf("%d charges asked, %d orders, %d keys; want none", n, orders, keys)
	}
	if a := s.checkout(t, ada, orderBody(holdID, "tok_visa"), "pan"); a.StatusCode != 201 {
		t.Errorf("the hold afterwards = %d %s; want it paid: the refusals changed nothing", a.StatusCode, a.raw)
	}
}
