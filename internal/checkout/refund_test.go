package checkout

import (
	"context"
	"errors"
	"testing"

	"github.com/stagedoor/stagedoor/internal/errkind"
	"github.com/stagedoor/stagedoor/internal/scan"
)

// TestABuyerRefundsTicketsOfAnOrder: a buyer of three seats refunds one with
// a key: the refund succeeds with the seat's price, the order is
// partially_refunded by that much, the ticket is refunded (revoked, on the
// doors' list) and its seat back on sale, Payrail holds one refund of 2500.
// The key again answers the same refund, replayed; with another body it is a
// mismatch; the same ticket with a new key is not refundable. The rest of
// the order (no ticket_ids) refunds the two others: refunded, all its money
// back, every seat on sale. The invariant holds throughout.
func TestABuyerRefundsTicketsOfAnOrder(t *testing.T) {
	t.Parallel()
	w := newWorld(t, setup{})
	o := w.buy(t, w.buyer, 0, 1, 2)
	first := o.Tickets[0]
	res, err := w.refund(w.buyer, o.ID, "r1", first.ID)
	if err != nil || res.Refund.Status != RefundSucceeded || res.Refund.AmountCents != 2500 || res.Replayed {
		t.Fatalf("refund of one ticket = %+v, %v; want succeeded, 2500", res.Refund, err)
	}
	if res.Order.Status != PartiallyRefunded || res.Order.RefundedCents != 2500 || ticketStatuses(res.Order)[first.ID] != "refunded" {
		t.Errorf("the order after = %s, %d refunded, tickets %v; want partially_refunded, 2500, the ticket refunded",
			res.Order.Status, res.Order.RefundedCents, ticketStatuses(res.Order))
	}
	if admitting, listed := w.ticketsAdmitting(t, o.ID); admitting != 2 || listed != 1 {
		t.Errorf("%d tickets admit, %d listed for the doors; want 2 and 1", admitting, listed)
	}
	if w.seatSold(t, first.SeatID) {
		t.Error("the refunded ticket's seat is still sold")
	}
	if c := w.chargeOf(t, o.ID); c.RefundedCents != 2500 || len(c.Refunds) != 1 || c.Refunds[0].RefundKey != res.Refund.ID {
		t.Errorf("Payrail's charge = %+v; want one refund of 2500 keyed by the refund's id", c)
	}
	w.noViolations(t)

	again, err := w.refund(w.buyer, o.ID, "r1", first.ID)
	if err != nil || !again.Replayed || again.Refund.ID != res.Refund.ID || again.Order.Status != PartiallyRefunded {
		t.Errorf("the key again = %+v, %v; want the same refund, replayed", again, err)
	}
	if _, err := w.refund(w.buyer, o.ID, "r1", o.Tickets[1].ID); !errors.Is(err, ErrIdempotencyMismatch) {
		t.Errorf("the key with another ticket = %v, want ErrIdempotencyMismatch", err)
	}
	if _, err := w.refund(w.buyer, o.ID, "r2", first.ID); !errors.Is(err, scan.ErrNotRefundable) {
		t.Errorf("the refunded ticket again = %v, want ErrNotRefundable", err)
	}
	rest, err := w.refund(w.buyer, o.ID, "")
	if err != nil || rest.Refund.AmountCents != 5000 || len(rest.Refund.TicketIDs) != 2 ||
		rest.Order.Status != Refunded || rest.Order.RefundedCents != 7500 || rest.Order.RefundedAt == nil {
		t.Fatalf("the rest = %+v, %v; want the two others, 5000, the order refunded", rest, err)
	}
	for _, tk := range o.Tickets {
		if w.seatSold(t, tk.SeatID) {
			t.Errorf("seat %s is still sold", tk.SeatID)
		}
	}
	if c := w.chargeOf(t, o.ID); c.RefundedCents != 7500 || len(c.Refunds) != 2 {
		t.Errorf("Payrail's charge = %+v; want 7500 back in two refunds", c)
	}
	if _, err := w.refund(w.buyer, o.ID, ""); !errors.Is(err, scan.ErrNotRefundable) {
		t.Errorf("a refund of a refunded order = %v, want ErrNotRefundable", err)
	}
	// A seat given back is sold again, to someone else, with a new ticket.
	other := w.buy(t, w.newBuyer(t), 0)
	if other.Tickets[0].SeatID != first.SeatID || other.Tickets[0].ID == first.ID {
		t.Errorf("the seat sold again = %+v", other.Tickets[0])
	}
	w.noViolations(t)
}

// TestWhoMayRefundAndWhen: another buyer, another organizer, an unknown
// order are not found; a buyer may not refund once the window has closed,
// nor when the event has none, while the organizer may at any time; a
// scanned ticket is not refundable (the others are); an order that was never
// confirmed is not refundable.
func TestWhoMayRefundAndWhen(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newWorld(t, setup{})
	o := w.buy(t, w.buyer, 0, 1)
	stranger := w.newBuyer(t)
	for name, r := range map[string]RefundRequest{
		"another buyer":     {AccountID: stranger, OrderID: o.ID},
		"another organizer": {AccountID: stranger, OrderID: o.ID, Organizer: true},
		"no order":          {AccountID: w.buyer, OrderID: "00000000-0000-4000-8000-000000000000"},
		"a malformed id":    {AccountID: w.buyer, OrderID: "42"},
	} {
		if _, err := w.checkout.Refund(ctx, r); !errors.Is(err, errkind.NotFound) {
			t.Errorf("%s: %v, want not found", name, err)
		}
	}
	if _, err := w.refund(w.buyer, o.ID, "", "not-an-id"); !errors.Is(err, errkind.Invalid) {
		t.Errorf("a malformed ticket id = %v, want invalid", err)
	}
	if _, err := w.refund(w.buyer, o.ID, "", w.buy(t, w.buyer, 5).Tickets[0].ID); !errors.Is(err, errkind.Invalid) {
		t.Errorf("a ticket of another order = %v, want invalid", err)
	}

	doors, sc := w.door(t)
	if _, err := doors.Scan(ctx, sc, o.Tickets[0].Code); err != nil {
		t.Fatal(err)
	}
	if _, err := w.refund(w.buyer, o.ID, "", o.Tickets[0].ID); !errors.Is(err, scan.ErrNotRefundable) {
		t.Errorf("a scanned ticket = %v, want ErrNotRefundable", err)
	}

	if _, err := w.db.Exec(ctx, `UPDATE events SET refunds_until = now() - interval '1 second' WHERE id = $1`, w.event.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := w.refund(w.buyer, o.ID, "", o.Tickets[1].ID); !errors.Is(err, ErrRefundWindowClosed) {
		t.Errorf("after the window = %v, want ErrRefundWindowClosed", err)
	}
	if _, err := w.db.Exec(ctx, `UPDATE events SET refunds_until = NULL WHERE id = $1`, w.event.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := w.refund(w.buyer, o.ID, "", o.Tickets[1].ID); !errors.Is(err, ErrRefundWindowClosed) {
		t.Errorf("with no window = %v, want ErrRefundWindowClosed", err)
	}
	res, err := w.checkout.Refund(ctx, RefundRequest{AccountID: w.event.OrganizerID, Organizer: true, OrderID: o.ID})
	if err != nil || res.Refund.Reason != ByOrganizer || len(res.Refund.TicketIDs) != 1 || res.Refund.TicketIDs[0] != o.Tickets[1].ID ||
		res.Order.Status != PartiallyRefunded {
		t.Errorf("the organizer's refund = %+v, %v; want the unscanned ticket refunded", res.Refund, err)
	}

	declined := w.crashAfterBegin(t, w.hold(t, 3), false)
	if _, err := w.checkout.Recover(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := w.refund(w.buyer, declined.ID, ""); !errors.Is(err, scan.ErrNotRefundable) {
		t.Errorf("a released order = %v, want ErrNotRefundable", err)
	}
	w.noViolations(t)
}
