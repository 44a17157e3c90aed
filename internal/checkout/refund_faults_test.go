package checkout

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stagedoor/stagedoor/internal/scan"
	"github.com/stagedoor/stagedoor/internal/testenv"
)

// TestARefundWhilePayrailIsDown: Payrail is killed; a buyer's refund is
// accepted pending (its answer unknown: 202), its ticket refund_pending,
// refused at the door and not refundable again; the refund pass, while
// Payrail stays down, keeps it pending and puts its next attempt off. Once
// Payrail is back, a pass sends the same key again: the refund succeeds,
// once, and the invariant holds.
func TestARefundWhilePayrailIsDown(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newWorld(t, setup{timeout: 500 * time.Millisecond})
	o := w.buy(t, w.buyer, 0, 1)
	tk := o.Tickets[0]
	w.stub.Kill()
	res, err := w.refund(w.buyer, o.ID, "k", tk.ID)
	if err != nil || res.Refund.Status != RefundPending || ticketStatuses(res.Order)[tk.ID] != "refund_pending" || res.Order.Status != Confirmed {
		t.Fatalf("a refund with Payrail down = %+v, %v; want pending, the ticket refund_pending", res, err)
	}
	doors, sc := w.door(t)
	if _, err := doors.Scan(ctx, sc, tk.Code); !errors.Is(err, scan.ErrRevoked) {
		t.Errorf("a scan of the ticket pending its refund = %v, want refused as revoked", err)
	}
	if _, err := w.refund(w.buyer, o.ID, "", tk.ID); !errors.Is(err, scan.ErrNotRefundable) {
		t.Errorf("a second refund of it = %v, want ErrNotRefundable", err)
	}
	if !w.seatSold(t, tk.SeatID) {
		t.Error("the seat went back on sale before the refund succeeded")
	}
	w.noViolations(t) // a pending refund is no violation

	testenv.Eventually(t, 10*time.Second, func() bool {
		p, err := w.checkout.Refunds(ctx)
		return err == nil && p.Sent > 0 && p.Pending > 0
	}, "a pass to send the refund again while Payrail is down")
	w.stub.Start()
	testenv.Eventually(t, 10*time.Second, func() bool {
		_, err := w.checkout.Refunds(ctx)
		if err != nil {
			t.Fatal(err)
		}
		o, err := w.checkout.Order(ctx, w.buyer, o.ID)
		return err == nil && o.Status == PartiallyRefunded
	}, "the refund pass to settle the refund once Payrail is back")
	again, err := w.refund(w.buyer, o.ID, "k", tk.ID)
	if err != nil || again.Refund.Status != RefundSucceeded || !again.Replayed || ticketStatuses(again.Order)[tk.ID] != "refunded" {
		t.Errorf("the key afterwards = %+v, %v; want the refund succeeded", again, err)
	}
	if c := w.chargeOf(t, o.ID); c.RefundedCents != 2500 || len(c.Refunds) != 1 {
		t.Errorf("Payrail gave back %d in %d refunds; want 2500 once", c.RefundedCents, len(c.Refunds))
	}
	w.noViolations(t)
}

// TestARefundWhosePayrailAnswerIsLate: Payrail makes the refund but answers
// after the deadline. The buyer gets the refund pending; reconciliation finds
// Payrail's refund by its key and settles it succeeded; the refund pass then
// has nothing to send; Payrail holds one refund, and the buyer's key answers
// it succeeded.
func TestARefundWhosePayrailAnswerIsLate(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newWorld(t, setup{timeout: 300 * time.Millisecond})
	o := w.buy(t, w.buyer, 0)
	w.gate.refundDelay.Store(int64(2 * time.Second))
	res, err := w.refund(w.buyer, o.ID, "late", o.Tickets[0].ID)
	if err != nil || res.Refund.Status != RefundPending {
		t.Fatalf("a refund answered late = %+v, %v; want pending", res.Refund, err)
	}
	if c := w.chargeOf(t, o.ID); c.RefundedCents != 2500 {
		t.Fatalf("Payrail gave back %d, want the refund made though its answer was late", c.RefundedCents)
	}
	if _, err := w.checkout.Recover(ctx); err != nil {
		t.Fatal(err)
	}
	again, err := w.refund(w.buyer, o.ID, "late", o.Tickets[0].ID)
	if err != nil || again.Refund.Status != RefundSucceeded || again.Order.Status != Refunded {
		t.Fatalf("after reconciliation = %+v, %v; want the refund succeeded, the order refunded", again, err)
	}
	w.gate.refundDelay.Store(0)
	if p, err := w.checkout.Refunds(ctx); err != nil || p.Sent != 0 {
		t.Errorf("the refund pass = %+v, %v; want nothing left to send", p, err)
	}
	if c := w.chargeOf(t, o.ID); len(c.Refunds) != 1 {
		t.Errorf("Payrail holds %d refunds, want 1", len(c.Refunds))
	}
	w.noViolations(t)
}

// TestARefundSentAgainAfterALateAnswerIsMadeOnce: as above, but the refund
// pass sends the refund again (same key) before reconciliation runs: Payrail
// answers the refund it made (200, replayed), the refund succeeds, and
// Payrail holds one refund.
func TestARefundSentAgainAfterALateAnswerIsMadeOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newWorld(t, setup{timeout: 300 * time.Millisecond})
	o := w.buy(t, w.buyer, 0, 1)
	w.gate.refundDelay.Store(int64(2 * time.Second))
	if res, err := w.refund(w.buyer, o.ID, "", o.Tickets[1].ID); err != nil || res.Refund.Status != RefundPending {
		t.Fatalf("a refund answered late = %+v, %v; want pending", res.Refund, err)
	}
	w.gate.refundDelay.Store(0)
	testenv.Eventually(t, 10*time.Second, func() bool {
		p, err := w.checkout.Refunds(ctx)
		return err == nil && p.Succeeded == 1
	}, "the refund pass to send the refund again and settle it")
	if c := w.chargeOf(t, o.ID); c.RefundedCents != 2500 || len(c.Refunds) != 1 || w.gate.refundCalls.Load() != 2 {
		t.Errorf("Payrail gave back %d in %d refunds after %d calls; want 2500 once, in 2 calls",
			c.RefundedCents, len(c.Refunds), w.gate.refundCalls.Load())
	}
	w.noViolations(t)
}
