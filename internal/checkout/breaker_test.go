package checkout

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stagedoor/stagedoor/internal/hold"
	"github.com/stagedoor/stagedoor/internal/payrail"
	"github.com/stagedoor/stagedoor/internal/testenv"
)

// countedPayrail is the world's Payrail behind a switch that makes every
// charge answer 500 (an outage) and a count of the charges asked for.
type countedPayrail struct {
	next  http.Handler
	down  atomic.Bool
	posts atomic.Int64
}

func (c *countedPayrail) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPost && r.URL.Path == "/charges" {
		c.posts.Add(1)
		if c.down.Load() {
			http.Error(w, `{"error":"down"}`, http.StatusInternalServerError)
			return
		}
	}
	c.next.ServeHTTP(w, r)
}

// counted puts the world's checkout behind a countedPayrail.
func (w *world) counted(t *testing.T, s setup) *countedPayrail {
	t.Helper()
	p := &countedPayrail{next: w.payrail}
	srv := httptest.NewServer(p)
	t.Cleanup(srv.Close)
	w.checkout = w.newService(srv.URL, s)
	return p
}

// clock gives the world's payment breaker a clock of the test's.
func (w *world) clock() *testenv.Clock {
	c := testenv.NewClock(time.Now())
	w.checkout.payments.breaker.now = c.Now
	return c
}

// payer is a buyer with a hold of one seat.
type payer struct {
	w *world
	h hold.Hold
}

func (w *world) payer(t *testing.T, seat int) payer {
	t.Helper()
	return payer{w: w, h: w.holdFor(t, w.newBuyer(t), seat)}
}

func (p payer) pay(token string) (Result, error) { return p.w.pay(p.h, token, "") }

// TestOneBuyersFailuresDoNotOpenTheBreaker: a buyer pays with tok_error ten
// times (Payrail answers 500 each time), and so does another. The breaker all
// buyers share stays closed: a third buyer pays at once, and every one of the
// failing attempts was Payrail's to answer.
func TestOneBuyersFailuresDoNotOpenTheBreaker(t *testing.T) {
	t.Parallel()
	w := newWorld(t, setup{})
	p := w.counted(t, setup{volume: 3})
	for _, attacker := range []payer{w.payer(t, 0), w.payer(t, 1)} {
		for i := range 10 {
			res, err := attacker.pay(payrail.TokenError)
			if !errors.Is(err, ErrPaymentUnavailable) || res.Order.Status != Failed {
				t.Fatalf("tok_error attempt %d = %+v, %v; want Payrail's 500: a failed order", i, res.Order, err)
			}
		}
	}
	if n := p.posts.Load(); n != 20 {
		t.Errorf("Payrail was asked %d times, want 20", n)
	}
	if res, err := w.payer(t, 2).pay(payrail.TokenVisa); err != nil || res.Order.Status != Confirmed {
		t.Errorf("another buyer's checkout = %+v, %v; want confirmed: two buyers' failures must not close checkout", res.Order, err)
	}
	if w.checkout.payments.Unavailable() {
		t.Error("the breaker holds Payrail to be down")
	}
}

// TestAPayrailOutageOpensTheBreaker: Payrail fails every charge. Three buyers'
// failures open the breaker: a fourth buyer is refused at once, with no order
// written and no call to Payrail. After the cooldown, three buyers' probes
// fail and it opens again; once Payrail is back, the next probe closes it. The
// log has one WARN line when the outage starts and one INFO line when it ends.
func TestAPayrailOutageOpensTheBreaker(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newWorld(t, setup{})
	p := w.counted(t, setup{volume: 3})
	clock := w.clock()
	failing := []payer{w.payer(t, 0), w.payer(t, 1), w.payer(t, 2)}
	late, later := w.payer(t, 3), w.payer(t, 4)
	p.down.Store(true)
	refused := func(who payer, when string) {
		t.Helper()
		posts := p.posts.Load()
		var orders int
		_ = w.db.QueryRow(ctx, `SELECT count(*) FROM orders WHERE hold_id = $1`, who.h.ID).Scan(&orders)
		res, err := who.pay(payrail.TokenVisa)
		if !errors.Is(err, ErrPaymentUnavailable) || res.Order.ID != "" {
			t.Fatalf("a checkout %s = %+v, %v; want refused by the breaker, no order written", when, res.Order, err)
		}
		var after int
		_ = w.db.QueryRow(ctx, `SELECT count(*) FROM orders WHERE hold_id = $1`, who.h.ID).Scan(&after)
		if p.posts.Load() != posts || after != orders {
			t.Errorf("a checkout %s called Payrail or wrote an order", when)
		}
	}
	fail := func(when string) {
		t.Helper()
		for i, who := range failing {
			if res, err := who.pay(payrail.TokenVisa); !errors.Is(err, ErrPaymentUnavailable) || res.Order.Status != Failed {
				t.Fatalf("buyer %d's checkout %s = %+v, %v; want Payrail's 500", i, when, res.Order, err)
			}
		}
	}

	fail("while Payrail fails")
	refused(late, "after three buyers' failures")
	clock.Add(PaymentRetryAfter)
	fail("as probes, Payrail still failing")
	refused(late, "after three failed probes")
	clock.Add(PaymentRetryAfter)
	p.down.Store(false)
	for i, who := range []payer{late, later} {
		if res, err := who.pay(payrail.TokenVisa); err != nil || res.Order.Status != Confirmed {
			t.Fatalf("checkout %d once Payrail is back = %+v, %v; want confirmed", i, res.Order, err)
		}
	}
	var warns, infos int
	for _, l := range w.logs.Lines(t) {
		switch {
		case l["dependency"] == "payrail" && l["level"] == "WARN":
			warns++
		case l["dependency"] == "payrail" && l["msg"] == "dependency available again":
			infos++
		}
	}
	if warns != 1 || infos != 1 {
		t.Errorf("%d WARN and %d INFO lines about Payrail, want 1 and 1: the outage starts once and ends once", warns, infos)
	}
	w.noViolations(t)
}

// TestOneBuyerCannotHoldTheBreakerOpen: an outage opened the breaker, and
// Payrail is back. A buyer paying with tok_error takes the first probe, which
// fails, and cannot take another; the next buyer's probe closes the breaker.
func TestOneBuyerCannotHoldTheBreakerOpen(t *testing.T) {
	t.Parallel()
	w := newWorld(t, setup{})
	p := w.counted(t, setup{volume: 3})
	clock := w.clock()
	p.down.Store(true)
	for i := range 3 {
		_, _ = w.payer(t, i).pay(payrail.TokenVisa)
	}
	if !w.checkout.payments.Unavailable() {
		t.Fatal("three buyers' failures did not open the breaker")
	}
	p.down.Store(false)
	clock.Add(PaymentRetryAfter)
	attacker := w.payer(t, 3)
	if res, err := attacker.pay(payrail.TokenError); !errors.Is(err, ErrPaymentUnavailable) || res.Order.Status != Failed {
		t.Fatalf("the attacker's probe = %+v, %v; want Payrail's 500", res.Order, err)
	}
	if res, err := attacker.pay(payrail.TokenError); !errors.Is(err, ErrPaymentUnavailable) || res.Order.ID != "" {
		t.Errorf("the attacker's second try while half-open = %+v, %v; want refused: one probe a buyer", res.Order, err)
	}
	if res, err := w.payer(t, 4).pay(payrail.TokenVisa); err != nil || res.Order.Status != Confirmed {
		t.Fatalf("another buyer's probe = %+v, %v; want confirmed", res.Order, err)
	}
	if w.checkout.payments.Unavailable() {
		t.Error("the breaker is still open after a probe succeeded")
	}
}

// TestAFlakyPayrailIsNoOutage: Payrail fails one new charge in ten with a
// 500, spread over twelve buyers (the soak's 10 % failure rate). That is no
// outage: the breaker never refuses, and no WARN line is written (the soak
// wrote 364 in 4 minutes, one outage per failure).
func TestAFlakyPayrailIsNoOutage(t *testing.T) {
	t.Parallel()
	var calls atomic.Int64
	every10th := func() float64 {
		if calls.Add(1)%10 == 0 {
			return 0.05
		}
		return 0.5
	}
	w := newWorld(t, setup{stub: payrail.Config{FailureRate: 0.1, Rand: every10th}})
	p := w.counted(t, setup{volume: 3})
	buyers := make([]payer, 10)
	for i := range buyers {
		buyers[i] = w.payer(t, i)
	}
	failed := 0
	for round := range 6 {
		for _, who := range buyers[:(round%2)*2+8] { // 8 or 10 buyers a round: the failures move between buyers
			_, err := who.pay(payrail.TokenDeclined)
			switch {
			case errors.Is(err, ErrPaymentUnavailable):
				failed++
			case !errors.Is(err, ErrPaymentDeclined):
				t.Fatalf("a checkout = %v", err)
			}
		}
	}
	if failed != 5 || p.posts.Load() != 54 {
		t.Fatalf("%d failures in %d charges, want 5 in 54: every charge reaches Payrail", failed, p.posts.Load())
	}
	for _, l := range w.logs.Lines(t) {
		if l["dependency"] == "payrail" && l["level"] != "DEBUG" {
			t.Errorf("logged %v: a failure in ten is no outage", l)
		}
	}
}

// TestBreakerRule: the breaker's arithmetic, on its own clock. It opens on
// the latest outcomes of many buyers within its window (a volume of 10 here),
// half of them failing, not on how often one buyer failed.
func TestBreakerRule(t *testing.T) {
	t.Parallel()
	clock := testenv.NewClock(time.Now())
	fresh := func() *breaker {
		b := newBreaker(10*time.Second, 10, 5*time.Second)
		b.now = clock.Now
		return b
	}
	buyer := func(i int) string { return string(rune('a' + i)) }
	for _, c := range []struct {
		name            string
		succeed, fail   int  // successes first (of buyers 0…), then failures (of the next buyers)
		failAgain       int  // buyers among the failing whose failure repeats
		failuresFirst   bool // the failures first instead
		expireSucceeded bool // the successes expire before the failures come
		wantUnavailable bool
	}{
		{name: "two buyers failing, however often, among ten", succeed: 8, fail: 2, failAgain: 2},
		{name: "nine buyers failing of nine: under the volume", fail: 9, failAgain: 9},
		{name: "ten buyers failing of ten", fail: 10, wantUnavailable: true},
		{name: "six of thirteen: under half", succeed: 7, fail: 6},
		{name: "seven of thirteen: over half", succeed: 6, fail: 7, wantUnavailable: true},
		{name: "the successes expired: seven of seven, under the volume", succeed: 10, fail: 7, expireSucceeded: true},
		{name: "a success never opens it", succeed: 5, fail: 5, failuresFirst: true},
	} {
		b := fresh()
		succeed := func() {
			for i := range c.succeed {
				b.record(buyer(i), false)
			}
		}
		if !c.failuresFirst {
			succeed()
		}
		if c.expireSucceeded {
			clock.Add(11 * time.Second)
		}
		for i := range c.fail {
			b.record(buyer(c.succeed+i), true)
		}
		if c.failuresFirst {
			succeed()
		}
		for i := range c.failAgain {
			for range 10 {
				b.record(buyer(c.succeed+i), true)
			}
		}
		if got := b.unavailable(); got != c.wantUnavailable {
			t.Errorf("%s: unavailable = %v, want %v", c.name, got, c.wantUnavailable)
		}
	}

	b := fresh()
	for i := range 10 {
		b.record(buyer(i), true)
	}
	if !b.refusing("z") || b.admit("z") {
		t.Fatal("open: a charge was admitted")
	}
	clock.Add(5 * time.Second)
	if !b.admit("a") || b.admit("a") {
		t.Error("half-open: want one probe for buyer a, and not two")
	}
	if !b.admit("b") || !b.admit("c") || b.admit("d") {
		t.Error("half-open: want three probes at most")
	}
	b.record("a", true)
	b.record("b", true)
	if !b.unavailable() || b.state != breakerHalfOpen {
		t.Error("two failed probes reopened the breaker; it takes three buyers'")
	}
	b.record("c", false)
	if b.unavailable() {
		t.Error("a probe Payrail answered did not close the breaker")
	}
}
