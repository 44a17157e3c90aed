package hold

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/stagedoor/stagedoor/internal/event"
	"github.com/stagedoor/stagedoor/internal/testenv"
)

// organizer reads the fixture's event's organizer.
func (f fixture) organizer(t *testing.T) string {
	t.Helper()
	var id string
	if err := f.db.QueryRow(context.Background(), `SELECT organizer_id::text FROM events WHERE id = $1`, f.eventID).Scan(&id); err != nil {
		t.Fatal(err)
	}
	return id
}

// cancel cancels the fixture's event and releases its holds, as checkout's
// cancellation does, in one transaction.
func (f fixture) cancel(organizer string) (released int64, err error) {
	err = pgx.BeginFunc(context.Background(), f.db, func(tx pgx.Tx) error {
		if _, _, err := event.CancelIn(context.Background(), tx, organizer, f.eventID); err != nil {
			return err
		}
		released, err = ReleaseEvent(context.Background(), tx, f.eventID)
		return err
	})
	return released, err
}

// TestACancelledEventHoldsAndSellsNothing: cancelling releases the event's
// active hold (its seats free at once) and leaves a hold in checkout alone;
// a new hold, by the database's statement even when the plan was made
// before, and the checkout of the remaining active hold are refused as
// cancelled.
func TestACancelledEventHoldsAndSellsNothing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	active := f.mustPlace(t, f.seats[0])
	paying := f.mustPlace(t, f.seats[1])
	if err := f.inTx(t, func(tx pgx.Tx) error { _, err := BeginCheckout(ctx, tx, f.buyer, paying.ID); return err }); err != nil {
		t.Fatal(err)
	}
	plan, err := f.holds.Plan(ctx, f.newBuyer(t), f.eventID, []string{f.seats[2]})
	if err != nil {
		t.Fatal(err)
	}
	if n, err := f.cancel(f.organizer(t)); err != nil || n != 1 {
		t.Errorf("cancel released %d holds (%v), want the active one", n, err)
	}
	if got := f.seatStates(t); got[0] != "free" || got[1] != "held-forever" {
		t.Errorf("seats = %v; want the released hold's free, the paying one's kept", got)
	}
	if _, err := f.holds.Place(ctx, plan); !errors.Is(err, ErrEventCancelled) {
		t.Errorf("a hold planned before = %v, want ErrEventCancelled", err)
	}
	err = f.inTx(t, func(tx pgx.Tx) error { _, err := BeginCheckout(ctx, tx, f.buyer, active.ID); return err })
	if !errors.Is(err, ErrEventCancelled) {
		t.Errorf("the checkout of the released hold = %v, want ErrEventCancelled", err)
	}
}

// TestACancelWaitsForACheckoutThatBegan: a checkout's start holds the event's
// row until its transaction ends. A cancellation that comes meanwhile waits
// for it, and the checkout's hold is in checkout when the cancel commits (its
// order will be refunded); a checkout that starts while the cancellation
// holds the row waits for it and finds the event cancelled.
func TestACancelWaitsForACheckoutThatBegan(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	first := f.mustPlace(t, f.seats[0])
	second := f.mustPlace(t, f.seats[1])
	tx, err := f.db.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := BeginCheckout(ctx, tx, f.buyer, first.ID); err != nil {
		t.Fatal(err)
	}
	organizer := f.organizer(t)
	cancelled := make(chan error, 1)
	go func() {
		_, err := f.cancel(organizer)
		cancelled <- err
	}()
	testenv.Eventually(t, 10*time.Second, func() bool {
		var waiting bool
		if err := f.db.QueryRow(ctx, `
			SELECT EXISTS (SELECT FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock')`).
			Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		return waiting
	}, "the cancel to wait for the checkout's lock")
	select {
	case <-cancelled:
		t.Fatal("the cancel did not wait for the checkout that began before it")
	default:
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-cancelled; err != nil {
		t.Fatal(err)
	}
	if h, err := f.holds.Get(ctx, f.buyer, first.ID); err != nil || h.Status != CheckingOut {
		t.Errorf("the hold whose checkout began = %+v, %v; want checking_out", h, err)
	}
	err = f.inTx(t, func(tx pgx.Tx) error { _, err := BeginCheckout(ctx, tx, f.buyer, second.ID); return err })
	if !errors.Is(err, ErrEventCancelled) {
		t.Errorf("a checkout after = %v, want ErrEventCancelled", err)
	}
}

// TestRefundedSeatsGoBackOnSale: a sold seat is put back on sale (and may be
// held again at once), a seat not sold is left as it is, and PriceOf sums
// the seats' prices.
func TestRefundedSeatsGoBackOnSale(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	h := f.mustPlace(t, f.seats[0], f.seats[1])
	err := f.inTx(t, func(tx pgx.Tx) error {
		if _, err := BeginCheckout(ctx, tx, f.buyer, h.ID); err != nil {
			return err
		}
		_, err := EndCheckout(ctx, tx, h.ID, Converted)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	var price, resold int64
	err = f.inTx(t, func(tx pgx.Tx) (err error) {
		if price, err = PriceOf(ctx, tx, f.seats[:2]); err != nil {
			return err
		}
		resold, err = Resell(ctx, tx, []string{f.seats[0], f.seats[2]})
		return err
	})
	if err != nil || price != 200 || resold != 1 {
		t.Fatalf("PriceOf = %d, Resell = %d, %v; want 200 and the one sold seat", price, resold, err)
	}
	if got := f.seatStates(t); got[0] != "free" || got[1] != "sold" || got[2] != "free" {
		t.Errorf("seats = %v; want free, sold, free", got)
	}
	if _, err := f.placeAs(f.newBuyer(t), f.seats[0]); err != nil {
		t.Errorf("holding the seat put back on sale: %v", err)
	}
}

// TestPlacesOfACancelledOrRefundedEvent: places of general admission bought
// and refunded go back on sale (Resell), at their section's price (PriceOf);
// once the event is cancelled, a hold of places, planned before, is refused
// as cancelled by its statement, and the cancellation frees the places an
// active hold had.
func TestPlacesOfACancelledOrRefundedEvent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newPlacesFixture(t, nil, 4, 10)
	bought, err := f.placeFor(f.buyer, 2)
	if err != nil {
		t.Fatal(err)
	}
	err = f.inTx(t, func(tx pgx.Tx) error {
		if _, err := BeginCheckout(ctx, tx, f.buyer, bought.ID); err != nil {
			return err
		}
		_, err := EndCheckout(ctx, tx, bought.ID, Converted)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	var price, resold int64
	err = f.inTx(t, func(tx pgx.Tx) (err error) {
		if price, err = PriceOf(ctx, tx, bought.SeatIDs[:1]); err != nil {
			return err
		}
		resold, err = Resell(ctx, tx, bought.SeatIDs[:1])
		return err
	})
	if err != nil || price != 1500 || resold != 1 || f.free(t) != 3 {
		t.Fatalf("PriceOf = %d, Resell = %d (%v), %d places free; want 1500, 1 and 3", price, resold, err, f.free(t))
	}

	other := f.newBuyer(t)
	if _, err := f.placeFor(other, 2); err != nil {
		t.Fatal(err)
	}
	plan, err := f.holds.Plan(ctx, f.newBuyer(t), f.eventID, nil, General{SectionID: f.lawn, Quantity: 1})
	if err != nil {
		t.Fatal(err)
	}
	if n, err := f.cancel(f.organizer(t)); err != nil || n != 1 {
		t.Fatalf("cancel released %d holds (%v), want the other buyer's", n, err)
	}
	if n := f.free(t); n != 3 {
		t.Errorf("%d places free after the cancel, want the released hold's back (3)", n)
	}
	if _, err := f.holds.Place(ctx, plan); !errors.Is(err, ErrEventCancelled) {
		t.Errorf("a hold of places planned before = %v, want ErrEventCancelled", err)
	}
}
