package checkout

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stagedoor/stagedoor/internal/errkind"
	"github.com/stagedoor/stagedoor/internal/hold"
	"github.com/stagedoor/stagedoor/internal/payrail"
)

func TestCheckoutConfirmsAndIssuesTickets(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newWorld(t, setup{})
	h := w.hold(t, 4, 5, 6)
	res, err := w.pay(h, payrail.TokenVisa, "")
	if err != nil {
		t.Fatal(err)
	}
	o := res.Order
	if o.Status != Confirmed || o.TotalCents != 7500 || len(o.Tickets) != 3 || res.Replayed {
		t.Fatalf("result = %+v", res)
	}
	codes := map[string]bool{}
	for _, tk := range o.Tickets {
		if len(tk.Code) < 26 || codes[tk.Code] || tk.Status() != "valid" {
			t.Errorf("ticket %+v: want a long, distinct, valid code", tk)
		}
		codes[tk.Code] = true
	}
	if stored, err := w.checkout.Order(ctx, w.buyer, o.ID); err != nil || len(stored.Tickets) != 3 ||
		stored.Tickets[0].Code != o.Tickets[0].Code && stored.Tickets[0].Code != o.Tickets[1].Code && stored.Tickets[0].Code != o.Tickets[2].Code {
		t.Errorf("the order as stored = %+v, %v; want the tickets answered", stored, err)
	}
	if got, _ := w.holds.Get(ctx, w.buyer, h.ID); got.Status != hold.Converted {
		t.Errorf("hold = %s, want converted", got.Status)
	}
	if _, err := w.pay(h, payrail.TokenVisa, ""); !errors.Is(err, hold.ErrNotActive) {
		t.Errorf("checking out the same hold again = %v, want hold.ErrNotActive", err)
	}
	if n := len(w.charges(t)); n != 1 {
		t.Errorf("%d charges, want 1", n)
	}
	w.noViolations(t)
}

func TestBadRequestsWriteNothing(t *testing.T) {
	t.Parallel()
	w := newWorld(t, setup{})
	h := w.hold(t, 0)
	for _, r := range []Request{
		{BuyerID: w.buyer, HoldID: "not-an-id", PaymentToken: payrail.TokenVisa},
		{BuyerID: w.buyer, HoldID: h.ID, PaymentToken: "  "},
		{BuyerID: w.buyer, HoldID: h.ID, PaymentToken: payrail.TokenVisa, IdempotencyKey: string(make([]byte, 256))},
	} {
		if _, err := w.checkout.Checkout(context.Background(), r); !errors.Is(err, errkind.Invalid) {
			t.Errorf("Checkout(%+v) = %v, want errkind.Invalid", r, err)
		}
	}
	var orders, keys int
	_ = w.db.QueryRow(context.Background(), `SELECT (SELECT count(*) FROM orders), (SELECT count(*) FROM idempotency_keys)`).Scan(&orders, &keys)
	if orders != 0 || keys != 0 {
		t.Errorf("%d orders and %d keys written by bad requests", orders, keys)
	}
}

// TestHoldExpiringDuringCheckoutKeepsItsSeats: the hold's time runs out while
// Payrail takes its time; nobody can take the seats meanwhile, the sweeper
// leaves the hold alone, and the order is confirmed.
func TestHoldExpiringDuringCheckoutKeepsItsSeats(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newWorld(t, setup{stub: payrail.Config{Latency: 2 * time.Second}, holdTTL: time.Second})
	h := w.hold(t, 0)
	other := w.newBuyer(t)
	done := make(chan error, 1)
	go func() {
		_, err := w.pay(h, payrail.TokenVisa, "")
		done <- err
	}()
	// Past the hold's expiry by the database's clock, inside the payment.
	w.waitFor(t, "the hold's expiry", `SELECT expires_at <= now() FROM holds WHERE id = $1`, h.ID)
	if _, err := w.holds.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := w.tryHold(other, h.SeatIDs); !errors.Is(err, hold.ErrSeatsUnavailable) {
		t.Errorf("another buyer holding the seat mid-checkout = %v, want ErrSeatsUnavailable", err)
	}
	if err := <-done; err != nil {
		t.Fatalf("checkout = %v, want confirmed", err)
	}
	if got, _ := w.holds.Get(ctx, w.buyer, h.ID); got.Status != hold.Converted {
		t.Errorf("hold = %s, want converted", got.Status)
	}
}

// TestDeclineGivesTheHoldBack: the hold is active again, its seats still held,
// and the error names the declined order.
func TestDeclineGivesTheHoldBack(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newWorld(t, setup{})
	h := w.hold(t, 0)
	res, err := w.pay(h, payrail.TokenDeclined, "")
	var orderErr *OrderError
	if !errors.Is(err, ErrPaymentDeclined) || !errors.As(err, &orderErr) || orderErr.OrderID != res.Order.ID ||
		w.orderStatus(t, res.Order.ID) != Declined {
		t.Fatalf("checkout with tok_declined = %+v, %v; want a declined order named by the error", res, err)
	}
	if got, _ := w.holds.Get(ctx, w.buyer, h.ID); got.Status != hold.Active {
		t.Fatalf("hold after a decline = %s, want active", got.Status)
	}
	var held bool
	if err := w.db.QueryRow(ctx, `SELECT held_until > now() AND held_until < 'infinity' FROM seats WHERE id = $1`,
		h.SeatIDs[0]).Scan(&held); err != nil || !held {
		t.Errorf("the seat is not held until the hold's expiry again (%v)", err)
	}
	if _, err := w.pay(h, payrail.TokenVisa, ""); err != nil {
		t.Errorf("second attempt with tok_visa = %v", err)
	}
	w.noViolations(t)
}

// TestConcurrentCheckoutsOfOneHold: ten checkouts of one hold at once (each
// with its own idempotency key, as ten retrying tabs would): exactly one is
// charged and confirmed, the others are refused with hold.ErrNotActive.
func TestConcurrentCheckoutsOfOneHold(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newWorld(t, setup{stub: payrail.Config{Latency: 100 * time.Millisecond}})
	h := w.hold(t, 7, 8)
	var wg sync.WaitGroup
	errs := make([]error, 10)
	for i := range errs {
		wg.Go(func() {
			_, errs[i] = w.pay(h, payrail.TokenVisa, "tab-"+string(rune('a'+i)))
		})
	}
	wg.Wait()
	confirmed := 0
	for _, err := range errs {
		switch {
		case err == nil:
			confirmed++
		case !errors.Is(err, hold.ErrNotActive):
			t.Errorf("a losing checkout = %v, want hold.ErrNotActive", err)
		}
	}
	if confirmed != 1 || len(w.charges(t)) != 1 {
		t.Errorf("%d confirmed, %d charges; want exactly one of each", confirmed, len(w.charges(t)))
	}
	var tickets, keys int
	if err := w.db.QueryRow(ctx, `SELECT (SELECT count(*) FROM tickets), (SELECT count(*) FROM idempotency_keys)`).
		Scan(&tickets, &keys); err != nil || tickets != 2 || keys != 1 {
		t.Errorf("%d tickets and %d keys (%v); want 2 tickets and only the winner's key kept", tickets, keys, err)
	}
	w.noViolations(t)
}

// TestACardNumberIsRefused: a payment_token that looks like a card number
// (13 to 19 digits, spaces or dashes between them, passing Luhn) is refused
// before anything is written or charged, and the error does not repeat it.
// Digits that fail Luhn, or are too few or too many, are just a token.
func TestACardNumberIsRefused(t *testing.T) {
	t.Parallel()
	for _, pan := range []string{
		"4242424242424242", "4242 4242 4242 4242", "4242-4242-4242-4242", " 4242424242424242 ",
		"4222222222222",       // 13 digits
		"6011000990139424",    // Discover
		"378282246310005",     // Amex, 15
		"6759649826438453",    // Maestro
		"4000000000000000006", // 19
	} {
		err := Request{BuyerID: "b", HoldID: "00000000-0000-4000-8000-000000000001", PaymentToken: pan}.Check()
		if !errors.Is(err, errkind.Invalid) || strings.ContainsAny(err.Error(), "0123456789") {
			t.Errorf("Check(%q) = %v; want errkind.Invalid, without the number", pan, err)
		}
	}
	for _, token := range []string{"tok_visa", "4242424242424241", "424242424242", "42424242424242424242", "4242x4242424242424242", "tok_4242424242424242"} {
		if err := (Request{BuyerID: "b", HoldID: "00000000-0000-4000-8000-000000000001", PaymentToken: token}).Check(); err != nil {
			t.Errorf("Check(%q) = %v; want it accepted (not a card number)", token, err)
		}
	}
	w := newWorld(t, setup{})
	if _, err := w.pay(w.hold(t, 0), "4242424242424242", "k"); !errors.Is(err, errkind.Invalid) {
		t.Fatalf("a checkout with a card number = %v, want errkind.Invalid", err)
	}
	var orders, keys int
	_ = w.db.QueryRow(context.Background(), `SELECT (SELECT count(*) FROM orders), (SELECT count(*) FROM idempotency_keys)`).Scan(&orders, &keys)
	if orders != 0 || keys != 0 || len(w.charges(t)) != 0 {
		t.Errorf("%d orders, %d keys, %d charges after a card number; want none", orders, keys, len(w.charges(t)))
	}
}
