package checkout

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stagedoor/stagedoor/internal/hold"
	"github.com/stagedoor/stagedoor/internal/payrail"
)

func TestRecoverySettlesOrdersLeftPendingByACrash(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newWorld(t, setup{})
	charged := w.crashAfterBegin(t, w.hold(t, 0, 1), true)
	uncharged := w.crashAfterBegin(t, w.hold(t, 2), false)
	young, err := w.checkout.store.begin(ctx, w.buyer, w.hold(t, 3).ID, nil, time.Second, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	// Old, but a checkout still holds its lease on it.
	leased, err := w.checkout.store.begin(ctx, w.buyer, w.hold(t, 4).ID, nil, time.Second, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.db.Exec(ctx, `UPDATE orders SET created_at = created_at - interval '2 minutes' WHERE id = $1`, leased.ID); err != nil {
		t.Fatal(err)
	}

	r, err := w.checkout.Recover(ctx)
	if err != nil || r.Confirmed != 1 || r.Released != 1 || r.Unknown != 0 {
		t.Fatalf("Recover = %+v, %v; want the charged order confirmed and the uncharged one released", r, err)
	}
	if r.Unsettled != 1 {
		t.Errorf("unsettled = %d, want 1 (the leased one)", r.Unsettled)
	}
	got, err := w.checkout.Order(ctx, w.buyer, charged.ID)
	if err != nil || got.Status != Confirmed || len(got.Tickets) != 2 {
		t.Errorf("the charged order = %+v, %v; want confirmed with 2 tickets", got, err)
	}
	if got, _ := w.checkout.Order(ctx, w.buyer, uncharged.ID); got.Status != Released || len(got.Tickets) != 0 {
		t.Errorf("the uncharged order = %+v; want released, no tickets", got)
	}
	if h, _ := w.holds.Get(ctx, w.buyer, uncharged.HoldID); h.Status != hold.Released {
		t.Errorf("its hold is %s, want released", h.Status)
	}
	var free, sold int
	if err := w.db.QueryRow(ctx, `
		SELECT count(*) FILTER (WHERE sold_at IS NULL AND (held_until IS NULL OR held_until <= now())),
		       count(*) FILTER (WHERE sold_at IS NOT NULL)
		FROM seats WHERE event_id = $1`, w.event.ID).Scan(&free, &sold); err != nil {
		t.Fatal(err)
	}
	if free != 6 || sold != 2 {
		t.Errorf("%d seats free and %d sold; want 6 free (the released one included) and 2 sold", free, sold)
	}
	for _, o := range []pendingOrder{young, leased} {
		if s := w.orderStatus(t, o.ID); s != Pending {
			t.Errorf("order %s (young or leased) = %s, want left pending", o.ID, s)
		}
	}
	if n := len(w.charges(t)); n != 1 {
		t.Errorf("Payrail has %d charges, want 1: recovery never charges", n)
	}
	if again, _ := w.checkout.Recover(ctx); again.Confirmed+again.Released != 0 {
		t.Errorf("a second Recover settled more: %+v", again)
	}
}

// TestRecoveryWaitsWhilePayrailCannotTell: "no such charge" releases nothing
// when Payrail's ledger does not cover the attempt: the order is counted
// unknown and waits.
func TestRecoveryWaitsWhilePayrailCannotTell(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	t.Run("a charge not recorded yet", func(t *testing.T) {
		t.Parallel()
		// Every charge is recorded 3 s after it is made; the payment deadline
		// is 100 ms and orders are recovered as soon as their lease lapses.
		const recordDelay = 3 * time.Second
		w := newWorld(t, setup{stub: payrail.Config{RecordDelay: recordDelay, Rand: func() float64 { return 0.999 }},
			timeout: 100 * time.Millisecond, recoverAfter: time.Millisecond})
		o := w.crashAfterCharge(t, w.hold(t, 0), true)
		// Past the deadline and the clock-skew allowance, by the database's
		// clock (Payrail's too); the charge is recorded only 3 s after it was made.
		w.waitFor(t, "the charge deadline and the clock-skew allowance to pass",
			`SELECT charge_deadline + $2::bigint * interval '1 microsecond' < now() FROM orders WHERE id = $1`, o.ID, ClockSkew.Microseconds())
		r, err := w.checkout.Recover(ctx)
		if err != nil || r.Unknown != 1 || r.Released != 0 || r.Unsettled != 1 {
			t.Fatalf("Recover before the record = %+v, %v; want the order unknown, left pending", r, err)
		}
		if got := testGauge(t, w.checkout.metrics.unsettled); got != 1 {
			t.Errorf("stagedoor_orders_unsettled = %v, want 1", got)
		}
		w.waitFor(t, "Payrail to record the charge", `SELECT bool_and(recorded_at <= now()) FROM payrail.charges`)
		if r, err = w.checkout.Recover(ctx); err != nil || r.Confirmed != 1 || r.Unsettled != 0 {
			t.Fatalf("Recover once recorded = %+v, %v; want the order confirmed", r, err)
		}
		if s := w.orderStatus(t, o.ID); s != Confirmed {
			t.Errorf("the order is %s, want confirmed", s)
		}
		w.noViolations(t)
	})
	t.Run("an attempt older than the ledger", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t, setup{freshLedger: true}) // a Payrail that lost its records and began anew
		o := w.crashAfterBegin(t, w.hold(t, 1), false)
		r, err := w.checkout.Recover(ctx)
		if err != nil || r.Unknown != 1 || r.Released != 0 {
			t.Fatalf("Recover = %+v, %v; want the order unknown: the ledger began after its charge", r, err)
		}
		if s := w.orderStatus(t, o.ID); s != Pending {
			t.Errorf("the order is %s, want pending", s)
		}
	})
}

// TestReconciliationRefundsALateCharge: recovery released an order it proved
// uncharged; then a charge for it reaches Payrail (a request that was still on
// the wire). Reconciliation refunds it, once, and records it on the order.
func TestReconciliationRefundsALateCharge(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newWorld(t, setup{})
	o := w.crashAfterBegin(t, w.hold(t, 0), false)
	if r, err := w.checkout.Recover(ctx); err != nil || r.Released != 1 {
		t.Fatalf("Recover = %+v, %v; want the order released", r, err)
	}
	late, err := w.checkout.payments.Charge(ctx, o.BuyerID, o.ID, o.TotalCents, o.Currency, payrail.TokenVisa)
	if err != nil {
		t.Fatal(err)
	}
	if v := len(w.charges(t)); v != 1 {
		t.Fatalf("%d charges", v)
	}

	r, err := w.checkout.Recover(ctx)
	if err != nil || r.Refunded != 1 {
		t.Fatalf("Recover after the late charge = %+v, %v; want it refunded", r, err)
	}
	got, err := w.checkout.Order(ctx, w.buyer, o.ID)
	if err != nil || got.Status != Released || got.RefundedAt == nil {
		t.Errorf("the order = %+v, %v; want released with refunded_at", got, err)
	}
	if c := w.charges(t)[0]; c.ID != late.ID || len(c.Refunds) == 0 {
		t.Errorf("Payrail's charge = %+v, want refunded", c)
	}
	if r, err := w.checkout.Recover(ctx); err != nil || r.Refunded != 0 {
		t.Errorf("a second pass = %+v, %v; want nothing refunded twice", r, err)
	}
	w.noViolations(t)
	if got := testCounter(t, w.checkout.metrics.refunds); got != 1 {
		t.Errorf("stagedoor_reconciliation_refunds_total = %v, want 1", got)
	}
}

// TestRecoveryEndsAFoundDeclineAsDeclined: a checkout died after Payrail
// declined its charge. Recovery finds the decline and settles the order as
// declined, with the hold active again, so the buyer's same-key retry learns
// what happened (402, pay another way), not that the order was released.
func TestRecoveryEndsAFoundDeclineAsDeclined(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newWorld(t, setup{})
	h := w.hold(t, 0)
	key, _, err := w.checkout.store.claimKey(ctx, w.buyer, "k", requestHash(h.ID, payrail.TokenDeclined), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	o, err := w.checkout.store.begin(ctx, w.buyer, h.ID, key, time.Second, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.checkout.payments.Charge(ctx, o.BuyerID, o.ID, o.TotalCents, o.Currency, payrail.TokenDeclined); !errors.Is(err, ErrPaymentDeclined) {
		t.Fatalf("the charge = %v, want declined", err)
	}
	w.age(t, o.ID, 2*time.Minute) // the process died here
	if _, err := w.db.Exec(ctx, `UPDATE idempotency_keys SET claim = NULL, lease_until = NULL`); err != nil {
		t.Fatal(err)
	}
	r, err := w.checkout.Recover(ctx)
	if err != nil || r.Declined != 1 || r.Released != 0 {
		t.Fatalf("Recover = %+v, %v; want the order declined", r, err)
	}
	res, err := w.pay(h, payrail.TokenDeclined, "k")
	if !errors.Is(err, ErrPaymentDeclined) || !res.Replayed || res.Order.ID != o.ID {
		t.Errorf("the same-key retry = %+v, %v; want the declined order (402)", res, err)
	}
	if got, _ := w.holds.Get(ctx, w.buyer, h.ID); got.Status != hold.Active {
		t.Errorf("the hold is %s, want active again: the buyer may pay another way", got.Status)
	}
	if res, err := w.pay(h, payrail.TokenVisa, "another"); err != nil || res.Order.Status != Confirmed {
		t.Errorf("paying the hold another way = %+v, %v; want confirmed", res, err)
	}
	w.noViolations(t)
}
