package checkout

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stagedoor/stagedoor/internal/errkind"
	"github.com/stagedoor/stagedoor/internal/hold"
	"github.com/stagedoor/stagedoor/internal/payrail"
	"github.com/stagedoor/stagedoor/internal/testenv"
)

// runRefundsUntilDone runs refund passes until the event's cancellation is
// done, and returns the passes' sums.
func (w *world) runRefundsUntilDone(t *testing.T, s *Service) RefundPass {
	t.Helper()
	var sum RefundPass
	testenv.Eventually(t, 30*time.Second, func() bool {
		p, err := s.Refunds(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		sum.Sent += p.Sent
		sum.Succeeded += p.Succeeded
		sum.Failed += p.Failed
		sum.Begun += p.Begun
		sum.HoldsReleased += p.HoldsReleased
		sum.CancellationsDone += p.CancellationsDone
		var done bool
		if err := w.db.QueryRow(context.Background(), `SELECT done_at IS NOT NULL FROM event_cancellations WHERE event_id = $1`,
			w.event.ID).Scan(&done); err != nil {
			t.Fatal(err)
		}
		return done
	}, "the cancellation to be done")
	return sum
}

// TestCancellingAnEventRefundsEveryOrder: an event with three orders (one
// with a ticket scanned at the door, one partly refunded by its buyer) and an
// active hold is cancelled by its organizer (another organizer: not found).
// At once: the hold is released, a new hold and the checkout of another hold
// are refused (event cancelled), and the progress reads 3 orders, none
// refunded, not done. A refund pass refunds each order in full, scanned
// tickets too, once: every order refunded, Payrail holding each charge given
// back whole, no ticket admitting, every seat back on sale, the progress
// done. Cancelling again, and more passes, change nothing.
func TestCancellingAnEventRefundsEveryOrder(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newWorld(t, setup{})
	a := w.buy(t, w.buyer, 0, 1)
	b := w.buy(t, w.newBuyer(t), 2)
	c := w.buy(t, w.newBuyer(t), 3, 4)
	doors, sc := w.door(t)
	if _, err := doors.Scan(ctx, sc, a.Tickets[0].Code); err != nil {
		t.Fatal(err)
	}
	if _, err := w.refund(c.BuyerID, c.ID, "", c.Tickets[0].ID); err != nil {
		t.Fatal(err)
	}
	active := w.hold(t, 5)

	if _, err := w.checkout.CancelEvent(ctx, w.newBuyer(t), w.event.ID); !errors.Is(err, errkind.NotFound) {
		t.Errorf("another organizer's cancel = %v, want not found", err)
	}
	progress, err := w.checkout.CancelEvent(ctx, w.event.OrganizerID, w.event.ID)
	if err != nil || progress.Orders != 3 || progress.Refunded != 0 || progress.Pending != 3 || progress.Done {
		t.Fatalf("CancelEvent = %+v, %v; want 3 orders to refund", progress, err)
	}
	if h, err := w.holds.Get(ctx, w.buyer, active.ID); err != nil || h.Status != hold.Released {
		t.Errorf("the active hold = %+v, %v; want released", h, err)
	}
	if _, err := w.tryHold(w.newBuyer(t), w.seatIDs(t, 7)); !errors.Is(err, hold.ErrEventCancelled) {
		t.Errorf("a new hold = %v, want ErrEventCancelled", err)
	}
	if _, err := w.pay(active, payrail.TokenVisa, ""); !errors.Is(err, hold.ErrEventCancelled) {
		t.Errorf("a checkout of a hold = %v, want ErrEventCancelled", err)
	}

	sum := w.runRefundsUntilDone(t, w.checkout)
	if sum.Begun != 3 || sum.Succeeded != 3 {
		t.Errorf("the passes = %+v; want 3 refunds begun and succeeded", sum)
	}
	for _, o := range []Order{a, b, c} {
		got, err := w.checkout.Order(ctx, o.BuyerID, o.ID)
		if err != nil || got.Status != Refunded || got.RefundedCents != o.TotalCents {
			t.Errorf("order %s = %s, %d back; want refunded, %d", o.ID, got.Status, got.RefundedCents, o.TotalCents)
		}
		if ch := w.chargeOf(t, o.ID); ch.RefundedCents != o.TotalCents {
			t.Errorf("Payrail gave back %d of order %s, want %d", ch.RefundedCents, o.ID, o.TotalCents)
		}
		if admitting, _ := w.ticketsAdmitting(t, o.ID); admitting != 0 {
			t.Errorf("order %s: %d tickets still admit", o.ID, admitting)
		}
	}
	var sold int
	_ = w.db.QueryRow(ctx, `SELECT count(*) FROM seats WHERE sold_at IS NOT NULL`).Scan(&sold)
	if sold != 0 {
		t.Errorf("%d seats still sold, want none", sold)
	}
	final, err := w.checkout.CancelEvent(ctx, w.event.OrganizerID, w.event.ID)
	if err != nil || !final.Done || final.Refunded != 3 || final.Pending != 0 {
		t.Errorf("cancelling again = %+v, %v; want the done cancellation, unchanged", final, err)
	}
	if p, err := w.checkout.Refunds(ctx); err != nil || p.Begun != 0 || p.Sent != 0 {
		t.Errorf("a pass after = %+v, %v; want nothing to do", p, err)
	}
	w.noViolations(t)
}

// TestACancellationRefundsEachOrderOnceWhateverRuns: the cancellation's work
// runs from two instances at once, without the pass's lock, three times over,
// while Payrail is slow: each order gets one cancellation refund, and Payrail
// one refund of each charge.
func TestACancellationRefundsEachOrderOnceWhateverRuns(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newWorld(t, setup{stub: payrail.Config{Latency: 50 * time.Millisecond}})
	var orders []Order
	for i := range 6 {
		orders = append(orders, w.buy(t, w.newBuyer(t), i))
	}
	if _, err := w.checkout.CancelEvent(ctx, w.event.OrganizerID, w.event.ID); err != nil {
		t.Fatal(err)
	}
	other := w.newService(w.stub.URL(), setup{})
	var wg sync.WaitGroup
	for _, s := range []*Service{w.checkout, other, w.checkout, other, w.checkout, other} {
		wg.Go(func() {
			if _, err := s.workCancellations(ctx, func(refs []OrderRefund, charges []string) { s.driveAll(ctx, refs, charges) }); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	w.runRefundsUntilDone(t, w.checkout)
	var refunds int
	_ = w.db.QueryRow(ctx, `SELECT count(*) FROM refunds WHERE reason = 'cancellation'`).Scan(&refunds)
	if refunds != len(orders) {
		t.Errorf("%d cancellation refunds, want one for each of %d orders", refunds, len(orders))
	}
	for _, o := range orders {
		if ch := w.chargeOf(t, o.ID); len(ch.Refunds) != 1 || ch.RefundedCents != o.TotalCents {
			t.Errorf("order %s: Payrail holds %d refunds of %d; want one of %d", o.ID, len(ch.Refunds), ch.RefundedCents, o.TotalCents)
		}
	}
	w.noViolations(t)
}

// TestACancelRacingCheckouts: 16 buyers check out, four at a time (Payrail
// taking 150 ms a charge), while the organizer cancels the event once some
// charges are under way, and refund passes run all along. Every checkout
// either is refused (the event cancelled) or confirms, and some of each; no
// order is confirmed without being refunded in the end; the cancellation is
// declared done only after the last order of the event was settled; and the
// invariant holds.
func TestACancelRacingCheckouts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newWorld(t, setup{seats: 16, stub: payrail.Config{Latency: 150 * time.Millisecond}})
	holds := make([]hold.Hold, 16)
	for i := range holds {
		holds[i] = w.holdFor(t, w.newBuyer(t), i)
	}
	passes, stop := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(passes)
		for {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := w.checkout.Refunds(ctx); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	var mu sync.Mutex
	outcomes := map[string]int{}
	const workers = 4
	testenv.AtOnce(workers+1, func(i int) {
		if i == workers {
			// The cancel lands while charges are under way.
			w.waitFor(t, "some charges to be under way", `SELECT count(*) >= 5 FROM payrail.charges`)
			if _, err := w.checkout.CancelEvent(ctx, w.event.OrganizerID, w.event.ID); err != nil {
				t.Error(err)
			}
			return
		}
		for j := i; j < len(holds); j += workers {
			res, err := w.pay(holds[j], payrail.TokenVisa, "")
			mu.Lock()
			switch {
			case errors.Is(err, hold.ErrEventCancelled):
				outcomes["refused: cancelled"]++
			case err == nil:
				outcomes[res.Order.Status]++
			default:
				t.Errorf("a checkout = %+v, %v", res, err)
			}
			mu.Unlock()
		}
	})
	close(stop)
	<-passes
	w.runRefundsUntilDone(t, w.checkout)
	t.Logf("checkouts: %v", outcomes)
	if outcomes[Confirmed] == 0 || outcomes["refused: cancelled"] == 0 {
		t.Errorf("checkouts %v: want some confirmed before the cancel and some refused after", outcomes)
	}
	var unrefunded, settledAfterDone int
	if err := w.db.QueryRow(ctx, `
		SELECT (SELECT count(*) FROM orders WHERE event_id = $1 AND status IN ('pending', 'confirmed', 'partially_refunded')),
		       (SELECT count(*) FROM orders o JOIN event_cancellations c ON c.event_id = o.event_id
		        WHERE o.event_id = $1 AND o.settled_at > c.done_at)`, w.event.ID).Scan(&unrefunded, &settledAfterDone); err != nil {
		t.Fatal(err)
	}
	if unrefunded != 0 || settledAfterDone != 0 {
		t.Errorf("%d sold orders not refunded, %d settled after the cancellation was done; want none", unrefunded, settledAfterDone)
	}
	w.noViolations(t)
}

// TestAnOrderPendingAtTheCancelIsRefundedOnceSettled: a checkout died after
// Payrail charged, its order pending, and the event is then cancelled. The
// cancellation is not done while the order could still be confirmed: passes
// leave it unfinished. Recovery confirms the order; the next pass refunds it
// and only then is the cancellation done.
func TestAnOrderPendingAtTheCancelIsRefundedOnceSettled(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newWorld(t, setup{})
	o := w.crashAfterCharge(t, w.hold(t, 0, 1), true)
	progress, err := w.checkout.CancelEvent(ctx, w.event.OrganizerID, w.event.ID)
	if err != nil || progress.Orders != 1 || progress.Pending != 1 {
		t.Fatalf("CancelEvent = %+v, %v; want the pending order counted", progress, err)
	}
	for range 2 {
		if p, err := w.checkout.Refunds(ctx); err != nil || p.CancellationsDone != 0 || p.CancellationsUnfinished != 1 || p.Begun != 0 {
			t.Fatalf("a pass with the order pending = %+v, %v; want the cancellation unfinished, nothing begun", p, err)
		}
	}
	w.age(t, o.ID, 2*time.Minute)
	if r, err := w.checkout.Recover(ctx); err != nil || r.Confirmed != 1 {
		t.Fatalf("Recover = %+v, %v; want the order confirmed", r, err)
	}
	if sum := w.runRefundsUntilDone(t, w.checkout); sum.Succeeded != 1 {
		t.Errorf("the passes = %+v; want the order refunded", sum)
	}
	if s := w.orderStatus(t, o.ID); s != Refunded {
		t.Errorf("the order is %s, want refunded", s)
	}
	w.noViolations(t)
}

// TestACancellationWhilePayrailIsDown: Payrail is killed, and an event of
// five orders is cancelled. Passes send its refunds, which stay pending (their
// tickets admitting no one), and the cancellation stays unfinished however
// often they run. Once Payrail is back, the passes finish it: each order
// refunded once, nothing lost.
func TestACancellationWhilePayrailIsDown(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newWorld(t, setup{timeout: 300 * time.Millisecond})
	var orders []Order
	for i := range 5 {
		orders = append(orders, w.buy(t, w.newBuyer(t), i))
	}
	w.stub.Kill()
	if _, err := w.checkout.CancelEvent(ctx, w.event.OrganizerID, w.event.ID); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 10*time.Second, func() bool {
		p, err := w.checkout.Refunds(ctx)
		if err != nil || p.CancellationsDone != 0 {
			t.Fatalf("a pass while Payrail is down = %+v, %v", p, err)
		}
		var pending, resent int
		_ = w.db.QueryRow(ctx, `SELECT count(*) FILTER (WHERE status = 'pending'), count(*) FILTER (WHERE attempts > 1)
			FROM refunds`).Scan(&pending, &resent)
		return pending == 5 && resent > 0
	}, "the refunds pending, sent again while Payrail is down")
	if admitting, _ := w.ticketsAdmitting(t, orders[0].ID); admitting != 1 {
		t.Errorf("%d tickets of a pending refund, want 1 (live, refund_pending)", admitting)
	}
	w.stub.Start()
	w.runRefundsUntilDone(t, w.checkout)
	for _, o := range orders {
		if ch := w.chargeOf(t, o.ID); len(ch.Refunds) != 1 || ch.RefundedCents != o.TotalCents {
			t.Errorf("order %s: Payrail holds %d refunds of %d, want one of %d", o.ID, len(ch.Refunds), ch.RefundedCents, o.TotalCents)
		}
	}
	w.noViolations(t)
}
