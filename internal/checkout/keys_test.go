package checkout

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stagedoor/stagedoor/internal/payrail"
)

// TestAKeyAnswersItsOrderAfterAnUnknownOutcome reproduces the first defect:
// Payrail answers after the deadline, so the outcome is unknown. The attempt
// answers the pending order (not an error); a retry with the key answers it
// again; once recovery confirms it, the retry answers the confirmed order with
// its tickets: never "hold not active".
func TestAKeyAnswersItsOrderAfterAnUnknownOutcome(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newWorld(t, setup{stub: payrail.Config{Latency: 600 * time.Millisecond}, timeout: 200 * time.Millisecond})
	h := w.hold(t, 0, 1)
	first, err := w.pay(h, payrail.TokenVisa, "k1")
	if err != nil || first.Order.Status != Pending || first.Replayed {
		t.Fatalf("first attempt = %+v, %v; want the pending order", first, err)
	}
	again, err := w.pay(h, payrail.TokenVisa, "k1")
	if err != nil || again.Order.ID != first.Order.ID || again.Order.Status != Pending || !again.Replayed {
		t.Fatalf("retry = %+v, %v; want the same pending order, replayed", again, err)
	}
	if _, err := w.pay(h, payrail.TokenDeclined, "k1"); !errors.Is(err, ErrIdempotencyMismatch) {
		t.Errorf("the key with another body = %v, want ErrIdempotencyMismatch", err)
	}

	w.age(t, first.Order.ID, 2*time.Minute)
	if r, err := w.checkout.Recover(ctx); err != nil || r.Confirmed != 1 {
		t.Fatalf("Recover = %+v, %v; want the order confirmed (Payrail made the charge)", r, err)
	}
	after, err := w.pay(h, payrail.TokenVisa, "k1")
	if err != nil || after.Order.ID != first.Order.ID || after.Order.Status != Confirmed || len(after.Order.Tickets) != 2 || !after.Replayed {
		t.Fatalf("retry after recovery = %+v, %v; want the confirmed order with its 2 tickets", after, err)
	}
	if n := len(w.charges(t)); n != 1 {
		t.Errorf("%d charges, want 1", n)
	}
	w.noViolations(t)
}

// TestACertainNonChargeMayBeTriedAgainWithTheKey: Payrail answers 500 (it
// records nothing): the order fails, the hold is active again, and a retry
// with the same key runs a new attempt, which succeeds.
func TestACertainNonChargeMayBeTriedAgainWithTheKey(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	rolls := []float64{0, 0.9} // the first new charge fails, the next succeeds
	w := newWorld(t, setup{stub: payrail.Config{FailureRate: 0.5, Rand: func() float64 {
		mu.Lock()
		defer mu.Unlock()
		v := rolls[0]
		rolls = rolls[1:]
		return v
	}}})
	h := w.hold(t, 2)
	failed, err := w.pay(h, payrail.TokenVisa, "k")
	if !errors.Is(err, ErrPaymentUnavailable) || w.orderStatus(t, failed.Order.ID) != Failed {
		t.Fatalf("first attempt = %+v, %v; want ErrPaymentUnavailable and a failed order", failed, err)
	}
	retry, err := w.pay(h, payrail.TokenVisa, "k")
	if err != nil || retry.Order.Status != Confirmed || retry.Order.ID == failed.Order.ID || retry.Replayed {
		t.Fatalf("retry with the key = %+v, %v; want a new attempt, confirmed", retry, err)
	}
	if replay, err := w.pay(h, payrail.TokenVisa, "k"); err != nil || replay.Order.ID != retry.Order.ID || !replay.Replayed {
		t.Errorf("a third request = %+v, %v; want the confirmed order replayed", replay, err)
	}
	w.noViolations(t)
}

// TestADeclineIsReplayed: the key of a declined order answers the decline,
// naming the order, for good.
func TestADeclineIsReplayed(t *testing.T) {
	t.Parallel()
	w := newWorld(t, setup{})
	h := w.hold(t, 3)
	first, err := w.pay(h, payrail.TokenDeclined, "k")
	if !errors.Is(err, ErrPaymentDeclined) {
		t.Fatalf("first = %v", err)
	}
	again, err := w.pay(h, payrail.TokenDeclined, "k")
	var orderErr *OrderError
	if !errors.Is(err, ErrPaymentDeclined) || !again.Replayed || !errors.As(err, &orderErr) || orderErr.OrderID != first.Order.ID {
		t.Errorf("retry = %+v, %v; want the decline of order %s replayed", again, err, first.Order.ID)
	}
	if n := len(w.charges(t)); n != 1 {
		t.Errorf("%d charges at Payrail, want the one decline", n)
	}
}

// TestALapsedLeaseHandsTheKeyOn: a request that claimed a key and died (its
// instance was killed) keeps others out only until its lease lapses.
func TestALapsedLeaseHandsTheKeyOn(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newWorld(t, setup{})
	lapse := func(key string) {
		t.Helper()
		if _, err := w.db.Exec(ctx, `UPDATE idempotency_keys SET lease_until = now() - interval '1 second' WHERE key = $1`, key); err != nil {
			t.Fatal(err)
		}
	}

	t.Run("died before writing the order", func(t *testing.T) {
		h := w.hold(t, 4)
		if _, _, err := w.checkout.store.claimKey(ctx, w.buyer, "early", requestHash(h.ID, payrail.TokenVisa), time.Hour); err != nil {
			t.Fatal(err)
		}
		if _, err := w.pay(h, payrail.TokenVisa, "early"); !errors.Is(err, ErrIdempotencyInProgress) {
			t.Fatalf("while the lease runs = %v, want ErrIdempotencyInProgress", err)
		}
		lapse("early")
		if res, err := w.pay(h, payrail.TokenVisa, "early"); err != nil || res.Order.Status != Confirmed || res.Replayed {
			t.Errorf("once it lapsed = %+v, %v; want the checkout run and confirmed", res, err)
		}
	})
	t.Run("died after writing the order", func(t *testing.T) {
		h := w.hold(t, 5)
		key, _, err := w.checkout.store.claimKey(ctx, w.buyer, "late", requestHash(h.ID, payrail.TokenVisa), time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		o, err := w.checkout.store.begin(ctx, w.buyer, h.ID, key, time.Second, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.pay(h, payrail.TokenVisa, "late"); !errors.Is(err, ErrIdempotencyInProgress) {
			t.Fatalf("while the lease runs = %v, want ErrIdempotencyInProgress", err)
		}
		lapse("late")
		res, err := w.pay(h, payrail.TokenVisa, "late")
		if err != nil || res.Order.ID != o.ID || res.Order.Status != Pending || !res.Replayed {
			t.Fatalf("once it lapsed = %+v, %v; want its pending order", res, err)
		}
		w.age(t, o.ID, 2*time.Minute) // recovery finds no charge: the order is released
		if r, err := w.checkout.Recover(ctx); err != nil || r.Released != 1 {
			t.Fatalf("Recover = %+v, %v", r, err)
		}
		res, err = w.pay(h, payrail.TokenVisa, "late")
		if !errors.Is(err, ErrOrderReleased) || !res.Replayed || res.Order.Status != Released {
			t.Errorf("after recovery = %+v, %v; want ErrOrderReleased for the order", res, err)
		}
	})
	w.noViolations(t)
}

// TestOneKeyFromTwoInstancesChargesOnce: twenty requests with one key, half
// through each of two instances' services, at once: one charge, one order;
// the others are told the request is in progress.
func TestOneKeyFromTwoInstancesChargesOnce(t *testing.T) {
	t.Parallel()
	w := newWorld(t, setup{stub: payrail.Config{Latency: 200 * time.Millisecond}})
	stub := w.checkout.payments.baseURL
	services := []*Service{w.checkout, w.newService(stub, setup{})}
	h := w.hold(t, 6, 7)
	var wg sync.WaitGroup
	ready := make(chan struct{})
	results := make([]error, 20)
	orders := make([]string, 20)
	for i := range results {
		wg.Go(func() {
			<-ready
			res, err := services[i%2].Checkout(context.Background(), Request{BuyerID: w.buyer, HoldID: h.ID,
				PaymentToken: payrail.TokenVisa, IdempotencyKey: "one-key"})
			results[i], orders[i] = err, res.Order.ID
		})
	}
	close(ready)
	wg.Wait()
	confirmed := 0
	for i, err := range results {
		switch {
		case err == nil:
			confirmed++
		case !errors.Is(err, ErrIdempotencyInProgress):
			t.Errorf("request %d = %v, want ErrIdempotencyInProgress", i, err)
		}
	}
	if confirmed != 1 || len(w.charges(t)) != 1 {
		t.Errorf("%d confirmed, %d charges; want exactly one of each", confirmed, len(w.charges(t)))
	}
	var n int
	_ = w.db.QueryRow(context.Background(), `SELECT count(*) FROM orders`).Scan(&n)
	if n != 1 {
		t.Errorf("%d orders, want 1", n)
	}
	w.noViolations(t)
}
