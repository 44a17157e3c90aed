package checkout

import (
	"context"
	"testing"
	"time"

	"github.com/stagedoor/stagedoor/internal/payrail"
	"github.com/stagedoor/stagedoor/internal/testenv"
)

// TestAConfirmationOutlivesTerminatedConnections: while Payrail takes 400 ms,
// every connection of the app's database is terminated. The confirmation is
// written anyway, on a fresh connection: the checkout answers the confirmed
// order, never an error, and the key answers it too.
func TestAConfirmationOutlivesTerminatedConnections(t *testing.T) {
	t.Parallel()
	w := newWorld(t, setup{stub: payrail.Config{Latency: 400 * time.Millisecond}})
	h := w.hold(t, 0, 1)
	done := w.payLater(h, payrail.TokenVisa, "k")
	w.chargeUnderWay(t) // inside the charge
	if n := testenv.TerminateConnections(t, w.db); n == 0 {
		t.Fatal("no connection was terminated: the test proves nothing")
	}
	got := <-done
	if got.err != nil || got.res.Order.Status != Confirmed || len(got.res.Order.Tickets) != 2 {
		t.Fatalf("checkout = %+v, %v; want confirmed with 2 tickets", got.res, got.err)
	}
	if again, err := w.pay(h, payrail.TokenVisa, "k"); err != nil || again.Order.ID != got.res.Order.ID {
		t.Errorf("the key afterwards = %+v, %v; want the confirmed order (not stuck in progress)", again, err)
	}
	w.noViolations(t)
}

// TestAnOutcomeThatCannotBeWrittenInTimeIsPending: the order's row is locked
// by another transaction for longer than the checkout's lease, so the
// confirmation cannot be written: the checkout answers the pending order
// (202, never a 500) within its lease, and recovery confirms it afterwards.
func TestAnOutcomeThatCannotBeWrittenInTimeIsPending(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	// Payrail takes 200 ms; the lease is 500 ms for the charge, then 2 s to
	// write the outcome.
	w := newWorld(t, setup{stub: payrail.Config{Latency: 200 * time.Millisecond},
		timeout: 500 * time.Millisecond, recoverAfter: time.Millisecond})
	h := w.hold(t, 2)
	locker, err := w.db.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer locker.Rollback(ctx)
	began := time.Now()
	done := w.payLater(h, payrail.TokenVisa, "")
	orderID := w.chargeUnderWay(t)
	// While Payrail charges, the order's row is locked.
	if _, err := locker.Exec(ctx, `SELECT 1 FROM orders WHERE id = $1 FOR UPDATE`, orderID); err != nil {
		t.Fatal(err)
	}
	got := <-done
	if got.err != nil || got.res.Order.Status != Pending || got.res.Order.ID != orderID {
		t.Fatalf("checkout = %+v, %v; want the pending order", got.res, got.err)
	}
	if took, lease := time.Since(began), w.checkout.lease; took > lease+500*time.Millisecond {
		t.Errorf("the answer took %s, past the checkout's lease of %s", took, lease)
	}
	if err := locker.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	w.age(t, orderID, 0)
	if r, err := w.checkout.Recover(ctx); err != nil || r.Confirmed != 1 {
		t.Fatalf("Recover = %+v, %v; want the charged order confirmed", r, err)
	}
	w.noViolations(t)
}
