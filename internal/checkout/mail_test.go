package checkout

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/stagedoor/stagedoor/internal/auth"
	"github.com/stagedoor/stagedoor/internal/mail"
	"github.com/stagedoor/stagedoor/internal/payrail"
	"github.com/stagedoor/stagedoor/internal/testenv"
)

// confirmations are the order confirmations in the outbox for orderID.
func (w *world) confirmations(t *testing.T, orderID string) []mail.OrderConfirmed {
	t.Helper()
	queued, err := mail.Outbox(context.Background(), w.db, "")
	if err != nil {
		t.Fatal(err)
	}
	var out []mail.OrderConfirmed
	for _, m := range queued {
		var n mail.OrderConfirmed
		if m.Kind != mail.KindOrderConfirmed {
			continue
		}
		if err := json.Unmarshal(m.Notice, &n); err != nil {
			t.Fatal(err)
		}
		if n.OrderID == orderID {
			out = append(out, n)
		}
	}
	return out
}

// TestACheckoutCompletesWhileTheMailServerIsDown: the mail server is dead
// while a buyer pays. The checkout answers the confirmed order as ever; its
// e-mail waits in the outbox, tried and put off by the sender, and arrives
// once the server is back: to the buyer, with each ticket's seat, code and a
// QR image that reads as the code.
func TestACheckoutCompletesWhileTheMailServerIsDown(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	w := newWorld(t, setup{})
	server := testenv.StartSMTP(t, testenv.SMTPOptions{})
	server.Stop()
	sender, err := mail.NewSender(w.db, mail.Options{SMTPURL: server.URL(), From: "tickets@stagedoor.test",
		PublicURL: "https://stagedoor.test", Every: 20 * time.Millisecond,
		Backoff: mail.Backoff{First: 50 * time.Millisecond, Most: 200 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { sender.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()

	res, err := w.pay(w.hold(t, 0, 1), payrail.TokenVisa, "k")
	if err != nil || res.Order.Status != Confirmed || len(res.Order.Tickets) != 2 {
		t.Fatalf("checkout = %+v, %v; want confirmed with 2 tickets", res.Order, err)
	}
	buyer, err := auth.AccountByID(ctx, w.db, w.buyer)
	if err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 10*time.Second, func() bool {
		queued, err := mail.Outbox(ctx, w.db, buyer.Email)
		return err == nil && len(queued) == 1 && queued[0].Attempts > 0 && queued[0].SentAt == nil
	}, "the sender to try the confirmation and fail, the server being away")

	server.Start()
	testenv.Eventually(t, 10*time.Second, func() bool { return len(server.Received(t)) > 0 }, "the confirmation to arrive")
	got := server.Received(t)
	if len(got) != 1 || got[0].Header.Get("X-RcptTo") != buyer.Email {
		t.Fatalf("%d arrived; want one, to the buyer", len(got))
	}
	body := testenv.ReadMailParts(t, got[0])
	var codes []string
	for _, img := range body.Images {
		codes = append(codes, testenv.DecodeQR(t, img))
	}
	for _, tk := range res.Order.Tickets {
		if !slices.Contains(codes, tk.Code) {
			t.Errorf("no QR image reads as ticket %s's code", tk.ID)
		}
	}
	for _, seat := range []string{"Floor, row A, seat 1", "Floor, row A, seat 2"} {
		if !body.Has(seat) {
			t.Errorf("the message does not name %q", seat)
		}
	}
	w.noViolations(t)
}

// TestAConfirmationIsWrittenWithEveryConfirmedOrderOnly: the checkout's and
// recovery's confirmations each write one e-mail of the order's tickets; a
// declined checkout, a released order and an order refunded as recovery
// confirms it write none.
func TestAConfirmationIsWrittenWithEveryConfirmedOrderOnly(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newWorld(t, setup{})
	paid, err := w.pay(w.hold(t, 0), payrail.TokenVisa, "")
	if err != nil {
		t.Fatal(err)
	}
	_, err = w.pay(w.hold(t, 1), payrail.TokenDeclined, "")
	var declined *OrderError
	if !errors.As(err, &declined) || !errors.Is(err, ErrPaymentDeclined) {
		t.Fatalf("a declined card: %v", err)
	}
	recovered := w.crashAfterBegin(t, w.hold(t, 2, 3), true)
	released := w.crashAfterBegin(t, w.hold(t, 4), false)
	if r, err := w.checkout.Recover(ctx); err != nil || r.Confirmed != 1 || r.Released != 1 {
		t.Fatalf("Recover = %+v, %v", r, err)
	}
	refunded := w.crashAfterBegin(t, w.hold(t, 5), true)
	charges := w.charges(t)
	w.refundAtPayrail(t, charges[len(charges)-1].ID)
	if r, err := w.checkout.Recover(ctx); err != nil || r.RefundedAtPayrail != 1 {
		t.Fatalf("Recover = %+v, %v", r, err)
	}
	for _, c := range []struct {
		what, orderID string
		tickets       int
	}{{"the paid order", paid.Order.ID, 1}, {"the declined order", declined.OrderID, 0},
		{"the order recovery confirmed", recovered.ID, 2}, {"the released order", released.ID, 0}, {"the refunded order", refunded.ID, 0}} {
		got := w.confirmations(t, c.orderID)
		switch {
		case c.tickets == 0 && len(got) != 0:
			t.Errorf("%s has %d confirmations; want none", c.what, len(got))
		case c.tickets > 0 && (len(got) != 1 || len(got[0].Tickets) != c.tickets):
			t.Errorf("%s has %d confirmations (%+v); want one of %d tickets", c.what, len(got), got, c.tickets)
		}
	}
	order, err := w.checkout.Order(ctx, w.buyer, recovered.ID)
	if err != nil {
		t.Fatal(err)
	}
	n := w.confirmations(t, recovered.ID)[0]
	if n.Event.Name != "Night" || n.Event.Venue != "Hall" || n.TotalCents != order.TotalCents || n.To.Name != "Buyer" {
		t.Errorf("the confirmation says %+v", n)
	}
	for i, want := range []int{3, 4} { // the seats held, in the seat map's order
		got := n.Tickets[i]
		j := slices.IndexFunc(order.Tickets, func(tk Ticket) bool { return tk.ID == got.ID })
		if j < 0 || order.Tickets[j].Code != got.Code || got.Section != "Floor" || got.Row != "A" || got.Number != want || got.GeneralAdmission {
			t.Errorf("ticket %d in the e-mail: %+v; want seat A%d, one of the order's tickets with its code: %+v", i, got, want, order.Tickets)
		}
	}
}
