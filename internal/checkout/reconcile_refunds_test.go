package checkout

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/stagedoor/stagedoor/internal/mail"
	"github.com/stagedoor/stagedoor/internal/payrail"
	"github.com/stagedoor/stagedoor/internal/scan"
)

// refundAtPayrail refunds a charge at Payrail directly, as an operator or the
// provider's dispute desk would: Stagedoor is not told.
func (w *world) refundAtPayrail(t *testing.T, chargeID string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, w.checkout.payments.baseURL+"/charges/"+chargeID+"/refunds", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 201 {
		t.Fatalf("refund at Payrail: %v %v", resp, err)
	}
	resp.Body.Close()
}

// ticketsAdmitting counts the order's tickets that are not revoked, and those
// on the doors' revocations list.
func (w *world) ticketsAdmitting(t *testing.T, orderID string) (admitting, listed int) {
	t.Helper()
	if err := w.db.QueryRow(context.Background(), `
		SELECT count(*) FILTER (WHERE t.revoked_at IS NULL), count(r.id)
		FROM tickets t LEFT JOIN ticket_revocations r ON r.ticket_id = t.id
		WHERE t.order_id = $1`, orderID).Scan(&admitting, &listed); err != nil {
		t.Fatal(err)
	}
	return admitting, listed
}

// TestARefundAtPayrailRefundsTheOrder: a confirmed order's charge is refunded
// at Payrail, behind Stagedoor's back. Until reconciliation notices, the
// invariant says so; after its pass the order is refunded (refunded_at set),
// its tickets are refunded and revoked (on the doors' list), its key answers
// ErrOrderRefunded, and the invariant holds. The seats go back on sale; a
// second pass changes nothing.
func TestARefundAtPayrailRefundsTheOrder(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newWorld(t, setup{})
	h := w.hold(t, 0, 1)
	res, err := w.pay(h, payrail.TokenVisa, "k")
	if err != nil || res.Order.Status != Confirmed {
		t.Fatalf("checkout = %+v, %v", res, err)
	}
	w.refundAtPayrail(t, w.charges(t)[0].ID)
	if v := strings.Join(w.violations(t), "\n"); !strings.Contains(v, "confirmed order whose refunded money disagrees with Payrail") {
		t.Errorf("before reconciliation the invariant says %q; want the refunded charge of a confirmed order", v)
	}

	r, err := w.checkout.Recover(ctx)
	if err != nil || r.RefundedAtPayrail != 1 {
		t.Fatalf("Recover = %+v, %v; want the order found refunded", r, err)
	}
	o, err := w.checkout.Order(ctx, w.buyer, res.Order.ID)
	if err != nil || o.Status != Refunded || o.RefundedAt == nil || len(o.Tickets) != 2 {
		t.Fatalf("the order = %+v, %v; want refunded, with refunded_at and its 2 tickets", o, err)
	}
	for _, tk := range o.Tickets {
		if tk.Status() != "refunded" {
			t.Errorf("ticket %s is %s, want refunded", tk.ID, tk.Status())
		}
	}
	// The buyer's list of tickets says so too, and a ticket its organizer
	// revoked, of an order not refunded, is revoked but not refunded.
	other, err := w.pay(w.hold(t, 2), payrail.TokenVisa, "k2")
	if err != nil || len(other.Order.Tickets) != 1 {
		t.Fatalf("another checkout = %+v, %v", other, err)
	}
	if err := scan.NewService(w.db, nil).Revoke(ctx, w.event.OrganizerID, other.Order.Tickets[0].ID); err != nil {
		t.Fatal(err)
	}
	tickets, err := w.checkout.Tickets(ctx, w.buyer)
	if err != nil || len(tickets) != 3 {
		t.Fatalf("the buyer's tickets = %+v, %v; want 3", tickets, err)
	}
	for _, tk := range tickets {
		if want := tk.OrderID == o.ID; (tk.Status() == "refunded") != want {
			t.Errorf("ticket %s of order %s: %s, want refunded %v", tk.ID, tk.OrderID, tk.Status(), want)
		}
	}
	if admitting, listed := w.ticketsAdmitting(t, o.ID); admitting != 0 || listed != 2 {
		t.Errorf("%d tickets still admit, %d on the revocations list; want 0 and 2", admitting, listed)
	}
	if again, err := w.pay(h, payrail.TokenVisa, "k"); !errors.Is(err, ErrOrderRefunded) || again.Order.ID != o.ID {
		t.Errorf("the key = %+v, %v; want ErrOrderRefunded for the order", again, err)
	}
	var sold int
	_ = w.db.QueryRow(ctx, `SELECT count(*) FROM seats WHERE sold_at IS NOT NULL`).Scan(&sold)
	if sold != 1 {
		t.Errorf("%d seats sold, want 1 (the other order's): a refunded order's seats go back on sale", sold)
	}
	if r, err := w.checkout.Recover(ctx); err != nil || r.RefundedAtPayrail != 0 {
		t.Errorf("a second pass = %+v, %v; want nothing more", r, err)
	}
	if got := testCounter(t, w.checkout.metrics.providerRefunds); got != 1 {
		t.Errorf("stagedoor_reconciliation_refunded_orders_total = %v, want 1", got)
	}
	w.noViolations(t)
}

// TestARefundOfAPendingOrdersCharge: a checkout died after Payrail charged,
// and the charge was refunded at Payrail before recovery came by. Recovery
// confirms and refunds the order at once: its tickets never admit.
func TestARefundOfAPendingOrdersCharge(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newWorld(t, setup{})
	o := w.crashAfterBegin(t, w.hold(t, 0), true)
	w.refundAtPayrail(t, w.charges(t)[0].ID)
	r, err := w.checkout.Recover(ctx)
	if err != nil || r.RefundedAtPayrail != 1 {
		t.Fatalf("Recover = %+v, %v; want the order confirmed and refunded", r, err)
	}
	if s := w.orderStatus(t, o.ID); s != Refunded {
		t.Errorf("the order is %s, want refunded", s)
	}
	if admitting, listed := w.ticketsAdmitting(t, o.ID); admitting != 0 || listed != 1 {
		t.Errorf("%d tickets admit, %d listed; want 0 and 1", admitting, listed)
	}
	if got := w.mailKinds(t, o.BuyerID); !slices.Equal(got, []string{mail.KindRefunded}) {
		t.Errorf("the buyer's e-mail = %v, want the refund alone (no tickets to announce)", got)
	}
	w.noViolations(t)
}

// TestAFailedOrdersRefundIsRecorded: a refund Payrail lists for an order that
// was never confirmed (here a late charge that reconciliation refunded
// itself) is recorded once, and changes no order's status.
func TestAFailedOrdersRefundIsRecorded(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newWorld(t, setup{})
	o := w.crashAfterBegin(t, w.hold(t, 0), false)
	if r, err := w.checkout.Recover(ctx); err != nil || r.Released != 1 {
		t.Fatalf("Recover = %+v, %v", r, err)
	}
	if _, err := w.checkout.payments.Charge(ctx, o.BuyerID, o.ID, o.TotalCents, o.Currency, payrail.TokenVisa); err != nil {
		t.Fatal(err)
	}
	if r, err := w.checkout.Recover(ctx); err != nil || r.Refunded != 1 || r.RefundedAtPayrail != 0 {
		t.Fatalf("Recover = %+v, %v; want the late charge refunded, no order refunded", r, err)
	}
	if s := w.orderStatus(t, o.ID); s != Released {
		t.Errorf("the order is %s, want released still", s)
	}
	w.noViolations(t)
}

// refundPartAtPayrail refunds amount of a charge at Payrail directly, with a
// key of someone else's.
func (w *world) refundPartAtPayrail(t *testing.T, chargeID string, amount int64) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, w.checkout.payments.baseURL+"/charges/"+chargeID+"/refunds",
		strings.NewReader(fmt.Sprintf(`{"amount_cents":%d}`, amount)))
	req.Header.Set("Idempotency-Key", "goodwill-"+chargeID)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 201 {
		t.Fatalf("refund at Payrail: %v %v", resp, err)
	}
	resp.Body.Close()
}

// TestAPartialRefundAtPayrailIsMoneyNotSeats: someone refunds 3000 of a
// 5000 order at Payrail. Reconciliation records it on the order
// (partially_refunded, 3000 back, a refund of reason payrail) and keeps its
// tickets valid: it cannot tell which seats the money was for. The buyer's
// refunds of the tickets then give back at most what is left: 2000 for the
// first, nothing for the second (no call to Payrail), and the order is
// refunded with exactly the charge given back.
func TestAPartialRefundAtPayrailIsMoneyNotSeats(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newWorld(t, setup{})
	o := w.buy(t, w.buyer, 0, 1)
	w.refundPartAtPayrail(t, w.chargeOf(t, o.ID).ID, 3000)
	if r, err := w.checkout.Recover(ctx); err != nil || r.RefundedAtPayrail != 1 {
		t.Fatalf("Recover = %+v, %v; want the refund found", r, err)
	}
	got, err := w.checkout.Order(ctx, w.buyer, o.ID)
	if err != nil || got.Status != PartiallyRefunded || got.RefundedCents != 3000 || len(got.Refunds) != 1 ||
		got.Refunds[0].Reason != AtPayrail || ticketStatuses(got)[o.Tickets[0].ID] != "valid" {
		t.Fatalf("the order = %+v, %v; want partially_refunded by 3000 at Payrail, its tickets valid", got, err)
	}
	w.noViolations(t)
	first, err := w.refund(w.buyer, o.ID, "", o.Tickets[0].ID)
	if err != nil || first.Refund.AmountCents != 2000 {
		t.Fatalf("the first ticket = %+v, %v; want 2000, all that is left", first.Refund, err)
	}
	calls := w.gate.refundCalls.Load()
	second, err := w.refund(w.buyer, o.ID, "", o.Tickets[1].ID)
	if err != nil || second.Refund.AmountCents != 0 || second.Refund.Status != RefundSucceeded || second.Order.Status != Refunded {
		t.Fatalf("the second ticket = %+v, %v; want a refund of nothing, the order refunded", second, err)
	}
	if w.gate.refundCalls.Load() != calls {
		t.Error("a refund of nothing was sent to Payrail")
	}
	if c := w.chargeOf(t, o.ID); c.RefundedCents != 5000 {
		t.Errorf("Payrail gave back %d, want the charge's 5000", c.RefundedCents)
	}
	w.noViolations(t)
}

// TestAPendingOrdersChargeRefundedInPart: a checkout died after Payrail
// charged, and part of the charge was refunded at Payrail before recovery
// came by: recovery confirms the order and records the refund at once
// (partially_refunded, its tickets valid).
func TestAPendingOrdersChargeRefundedInPart(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newWorld(t, setup{})
	o := w.crashAfterBegin(t, w.hold(t, 0, 1), true)
	w.refundPartAtPayrail(t, w.charges(t)[0].ID, 1000)
	if r, err := w.checkout.Recover(ctx); err != nil || r.Confirmed != 1 {
		t.Fatalf("Recover = %+v, %v; want the order confirmed", r, err)
	}
	got, err := w.checkout.Order(ctx, w.buyer, o.ID)
	if err != nil || got.Status != PartiallyRefunded || got.RefundedCents != 1000 || len(got.Tickets) != 2 {
		t.Errorf("the order = %+v, %v; want partially_refunded by 1000, with its 2 tickets", got, err)
	}
	if got := w.mailKinds(t, o.BuyerID); !slices.Equal(got, []string{mail.KindOrderConfirmed}) {
		t.Errorf("the buyer's e-mail = %v, want the confirmation with the tickets kept", got)
	}
	w.noViolations(t)
}
