package checkout

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/stagedoor/stagedoor/internal/auth"
	"github.com/stagedoor/stagedoor/internal/event"
	"github.com/stagedoor/stagedoor/internal/hold"
	"github.com/stagedoor/stagedoor/internal/ids"
	"github.com/stagedoor/stagedoor/internal/payrail"
	"github.com/stagedoor/stagedoor/internal/testenv"
)

// world is a database with a buyer, an on-sale event of 10 seats, a hold
// service, a Payrail stub and a checkout service charging through it.
type world struct {
	db       *pgxpool.Pool
	buyer    string
	event    event.Event
	holds    *hold.Service
	payrail  *payrail.Server
	checkout *Service
}

func newWorld(t *testing.T, stubConfig payrail.Config, holdTTL time.Duration) *world {
	t.Helper()
	ctx := context.Background()
	w := &world{db: testenv.Postgres(t)}
	accounts := auth.NewService(w.db, 4)
	org, err := accounts.Register(ctx, auth.Organizer, "org-"+ids.New()+"@example.com", "correct horse", "Org")
	if err != nil {
		t.Fatal(err)
	}
	buyer, err := accounts.Register(ctx, auth.Buyer, "buyer-"+ids.New()+"@example.com", "correct horse", "Buyer")
	if err != nil {
		t.Fatal(err)
	}
	w.buyer = buyer.ID
	events := event.NewService(w.db)
	w.event, err = events.Create(ctx, event.Draft{
		OrganizerID: org.ID, Name: "Night", Venue: "Hall", StartsAt: time.Now().Add(24 * time.Hour),
		Sections: []event.Section{{Name: "Floor", Rows: 1, SeatsPerRow: 10, PriceCents: 2500}},
	})
	if err != nil {
		t.Fatal(err)
	}
	w.holds = hold.NewService(w.db, events, holdTTL)
	w.payrail = payrail.NewServer(stubConfig, nil)
	stub := httptest.NewServer(w.payrail)
	t.Cleanup(stub.Close)
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	w.checkout = NewService(w.db, NewPayments(PaymentsOptions{BaseURL: stub.URL}), time.Minute, logger)
	return w
}

func (w *world) hold(t *testing.T, seats ...int) hold.Hold {
	t.Helper()
	return w.holdFor(t, w.buyer, seats...)
}

func (w *world) holdFor(t *testing.T, buyer string, seats ...int) hold.Hold {
	t.Helper()
	ctx := context.Background()
	m, err := event.NewService(w.db).SeatMap(ctx, w.event.ID)
	if err != nil {
		t.Fatal(err)
	}
	var seatIDs []string
	for _, i := range seats {
		seatIDs = append(seatIDs, m.Seats[i].ID)
	}
	h, err := w.tryHold(buyer, seatIDs)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func (w *world) tryHold(buyer string, seatIDs []string) (hold.Hold, error) {
	ctx := context.Background()
	plan, err := w.holds.Plan(ctx, buyer, w.event.ID, seatIDs)
	if err != nil {
		return hold.Hold{}, err
	}
	return w.holds.Place(ctx, plan)
}

// crashAfterBegin leaves a pending order as a process that died after writing
// it would, charged at Payrail or not, and ages it past recovery's threshold.
func (w *world) crashAfterBegin(t *testing.T, h hold.Hold, charge bool) pendingOrder {
	t.Helper()
	ctx := context.Background()
	o, err := w.checkout.store.begin(ctx, w.buyer, h.ID)
	if err != nil {
		t.Fatal(err)
	}
	if charge {
		if _, err := w.checkout.payments.Charge(ctx, o.ID, o.TotalCents, o.Currency, payrail.TokenVisa); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := w.db.Exec(ctx, `UPDATE orders SET created_at = now() - interval '2 minutes' WHERE id = $1`, o.ID); err != nil {
		t.Fatal(err)
	}
	return o
}

func TestRecoverySettlesOrdersLeftPendingByACrash(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newWorld(t, payrail.Config{}, 10*time.Minute)
	charged := w.crashAfterBegin(t, w.hold(t, 0, 1), true)
	uncharged := w.crashAfterBegin(t, w.hold(t, 2), false)
	young, err := w.checkout.store.begin(ctx, w.buyer, w.hold(t, 3).ID)
	if err != nil {
		t.Fatal(err)
	}

	settled, err := w.checkout.Recover(ctx)
	if err != nil || settled != 2 {
		t.Fatalf("Recover = %d, %v; want the two old pending orders settled", settled, err)
	}

	got, err := w.checkout.Order(ctx, w.buyer, charged.ID)
	if err != nil || got.Status != Confirmed || len(got.Tickets) != 2 {
		t.Errorf("the charged order = %+v, %v; want confirmed with 2 tickets", got, err)
	}
	got, err = w.checkout.Order(ctx, w.buyer, uncharged.ID)
	if err != nil || got.Status != Released || len(got.Tickets) != 0 {
		t.Errorf("the uncharged order = %+v, %v; want released, no tickets", got, err)
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
	if free != 7 || sold != 2 {
		t.Errorf("%d seats free and %d sold; want 7 free (the released one included) and 2 sold", free, sold)
	}
	if got, _ := w.checkout.Order(ctx, w.buyer, young.ID); got.Status != Pending {
		t.Errorf("a pending order younger than a minute = %s, want left pending", got.Status)
	}
	if n := len(w.payrail.Charges()); n != 1 {
		t.Errorf("Payrail has %d charges, want 1: recovery never charges", n)
	}
	if settled, _ := w.checkout.Recover(ctx); settled != 0 {
		t.Errorf("a second Recover settled %d more", settled)
	}
}

func TestCheckoutConfirmsAndIssuesTickets(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newWorld(t, payrail.Config{}, 10*time.Minute)
	h := w.hold(t, 4, 5, 6)
	o, err := w.checkout.Checkout(ctx, w.buyer, h.ID, payrail.TokenVisa)
	if err != nil {
		t.Fatal(err)
	}
	if o.Status != Confirmed || o.TotalCents != 7500 || len(o.Tickets) != 3 {
		t.Fatalf("order = %+v", o)
	}
	codes := map[string]bool{}
	for _, tk := range o.Tickets {
		if len(tk.Code) < 26 || codes[tk.Code] || tk.Status() != "valid" {
			t.Errorf("ticket %+v: want a long, distinct, valid code", tk)
		}
		codes[tk.Code] = true
	}
	if got, _ := w.holds.Get(ctx, w.buyer, h.ID); got.Status != hold.Converted {
		t.Errorf("hold = %s, want converted", got.Status)
	}
	if _, err := w.checkout.Checkout(ctx, w.buyer, h.ID, payrail.TokenVisa); !errors.Is(err, hold.ErrNotActive) {
		t.Errorf("checking out the same hold again = %v, want hold.ErrNotActive", err)
	}
	if len(w.payrail.Charges()) != 1 {
		t.Errorf("%d charges, want 1", len(w.payrail.Charges()))
	}
}

// TestHoldExpiringDuringCheckoutKeepsItsSeats: the hold's time runs out while
// Payrail takes its time; nobody can take the seats meanwhile, the sweeper
// leaves the hold alone, and the order is confirmed.
func TestHoldExpiringDuringCheckoutKeepsItsSeats(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newWorld(t, payrail.Config{Latency: 2 * time.Second}, time.Second)
	h := w.hold(t, 0)
	other, err := auth.NewService(w.db, 4).Register(ctx, auth.Buyer, "other-"+ids.New()+"@example.com", "correct horse", "O")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := w.checkout.Checkout(ctx, w.buyer, h.ID, payrail.TokenVisa)
		done <- err
	}()
	time.Sleep(1500 * time.Millisecond) // past the hold's expiry, inside the payment
	if _, err := w.holds.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := w.tryHold(other.ID, h.SeatIDs); !errors.Is(err, hold.ErrSeatsUnavailable) {
		t.Errorf("another buyer holding the seat mid-checkout = %v, want ErrSeatsUnavailable", err)
	}
	if err := <-done; err != nil {
		t.Fatalf("checkout = %v, want confirmed", err)
	}
	if got, _ := w.holds.Get(ctx, w.buyer, h.ID); got.Status != hold.Converted {
		t.Errorf("hold = %s, want converted", got.Status)
	}
}

// TestDeclineGivesTheHoldBack: the hold is active again, its seats still held.
func TestDeclineGivesTheHoldBack(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newWorld(t, payrail.Config{}, 10*time.Minute)
	h := w.hold(t, 0)
	if _, err := w.checkout.Checkout(ctx, w.buyer, h.ID, payrail.TokenDeclined); !errors.Is(err, ErrPaymentDeclined) {
		t.Fatalf("checkout with tok_declined = %v", err)
	}
	if got, _ := w.holds.Get(ctx, w.buyer, h.ID); got.Status != hold.Active {
		t.Fatalf("hold after a decline = %s, want active", got.Status)
	}
	var held bool
	if err := w.db.QueryRow(ctx, `SELECT held_until > now() AND held_until < 'infinity' FROM seats WHERE id = $1`,
		h.SeatIDs[0]).Scan(&held); err != nil || !held {
		t.Errorf("the seat is not held until the hold's expiry again (%v)", err)
	}
	if _, err := w.checkout.Checkout(ctx, w.buyer, h.ID, payrail.TokenVisa); err != nil {
		t.Errorf("second attempt with tok_visa = %v", err)
	}
}

// TestConcurrentCheckoutsOfOneHold: ten checkouts of one hold at once (each
// with its own idempotency key, as ten retrying tabs would): exactly one is
// charged and confirmed, the others are refused with hold.ErrNotActive.
func TestConcurrentCheckoutsOfOneHold(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newWorld(t, payrail.Config{Latency: 100 * time.Millisecond}, 10*time.Minute)
	h := w.hold(t, 7, 8)
	var wg sync.WaitGroup
	errs := make([]error, 10)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = w.checkout.Checkout(ctx, w.buyer, h.ID, payrail.TokenVisa)
		}()
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
	if confirmed != 1 || len(w.payrail.Charges()) != 1 {
		t.Errorf("%d confirmed, %d charges; want exactly one of each", confirmed, len(w.payrail.Charges()))
	}
	var tickets int
	if err := w.db.QueryRow(ctx, `SELECT count(*) FROM tickets`).Scan(&tickets); err != nil || tickets != 2 {
		t.Errorf("%d tickets (%v), want 2", tickets, err)
	}
}
