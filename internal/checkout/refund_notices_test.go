package checkout

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/stagedoor/stagedoor/internal/auth"
	"github.com/stagedoor/stagedoor/internal/mail"
	"github.com/stagedoor/stagedoor/internal/testenv"
)

// outbox lists the messages written to the buyer, in order, but for the
// confirmations of their orders.
func (w *world) outbox(t *testing.T, buyerID string) []mail.Queued {
	t.Helper()
	return slices.DeleteFunc(w.allMail(t, buyerID), func(m mail.Queued) bool { return m.Kind == mail.KindOrderConfirmed })
}

// allMail lists every message written to the buyer, in order.
func (w *world) allMail(t *testing.T, buyerID string) []mail.Queued {
	t.Helper()
	a, err := auth.AccountByID(context.Background(), w.db, buyerID)
	if err != nil {
		t.Fatal(err)
	}
	all, err := mail.Outbox(context.Background(), w.db, a.Email)
	if err != nil {
		t.Fatal(err)
	}
	return all
}

// mailKinds are the kinds of every message written to the buyer, in order.
func (w *world) mailKinds(t *testing.T, buyerID string) []string {
	t.Helper()
	return kinds(w.allMail(t, buyerID))
}

// kinds are the kinds of the messages, in order.
func kinds(ms []mail.Queued) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.Kind)
	}
	return out
}

// TestRefundNoticesAreWrittenWithTheirRefunds: a refund refused (the window
// closed) writes no notice; one whose answer is unknown writes none until it
// succeeds, and then one, naming its ticket's seat and its amount; an
// event's cancellation writes each buyer an event_cancelled notice with what
// comes back, then, once refunded, a refunded one.
func TestRefundNoticesAreWrittenWithTheirRefunds(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newWorld(t, setup{timeout: 300 * time.Millisecond})
	o := w.buy(t, w.buyer, 0, 1)
	if _, err := w.db.Exec(ctx, `UPDATE events SET refunds_until = now() - interval '1 second' WHERE id = $1`, w.event.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := w.refund(w.buyer, o.ID, "", o.Tickets[0].ID); err == nil {
		t.Fatal("a refund after the window went through")
	}
	if got := kinds(w.outbox(t, w.buyer)); len(got) != 0 {
		t.Errorf("a refused refund wrote %v, want nothing", got)
	}
	if _, err := w.db.Exec(ctx, `UPDATE events SET refunds_until = now() + interval '1 hour' WHERE id = $1`, w.event.ID); err != nil {
		t.Fatal(err)
	}
	w.stub.Kill()
	if res, err := w.refund(w.buyer, o.ID, "", o.Tickets[0].ID); err != nil || res.Refund.Status != RefundPending {
		t.Fatalf("a refund with Payrail down = %+v, %v", res.Refund, err)
	}
	if got := kinds(w.outbox(t, w.buyer)); len(got) != 0 {
		t.Errorf("a pending refund wrote %v, want nothing yet", got)
	}
	w.stub.Start()
	testenv.Eventually(t, 10*time.Second, func() bool {
		p, err := w.checkout.Refunds(ctx)
		return err == nil && p.Succeeded == 1
	}, "the refund to succeed")
	msgs := w.outbox(t, w.buyer)
	if len(msgs) != 1 || msgs[0].Kind != mail.KindRefunded {
		t.Fatalf("after the refund the outbox holds %v, want one refunded", kinds(msgs))
	}
	var n mail.Refunded
	if err := json.Unmarshal(msgs[0].Notice, &n); err != nil {
		t.Fatal(err)
	}
	if n.AmountCents != 2500 || n.OrderID != o.ID || len(n.Tickets) != 1 || n.Tickets[0].Section != "Floor" ||
		n.Tickets[0].Code != "" || n.Event.Name != "Night" {
		t.Errorf("the notice = %+v; want 2500 for one Floor seat, without its code", n)
	}

	other := w.newBuyer(t)
	w.buy(t, other, 5)
	if _, err := w.checkout.CancelEvent(ctx, w.event.OrganizerID, w.event.ID); err != nil {
		t.Fatal(err)
	}
	w.runRefundsUntilDone(t, w.checkout)
	for buyer, want := range map[string][]string{
		w.buyer: {mail.KindRefunded, mail.KindEventCancelled, mail.KindRefunded},
		other:   {mail.KindEventCancelled, mail.KindRefunded},
	} {
		if got := kinds(w.outbox(t, buyer)); !slices.Equal(got, want) {
			t.Errorf("buyer %s's outbox = %v, want %v", buyer, got, want)
		}
	}
	w.noViolations(t)
}
