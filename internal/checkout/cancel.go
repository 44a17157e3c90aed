package checkout

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/stagedoor/stagedoor/internal/event"
	"github.com/stagedoor/stagedoor/internal/hold"
	"github.com/stagedoor/stagedoor/internal/scan"
)

// An event's cancellation refunds every order of it, in full, by a job whose
// state is the database's:
//
//  1. one transaction cancels the event (event.CancelIn: it waits for the
//     checkouts that began before, and every one after finds it
//     cancelled), releases its active holds (hold.ReleaseEvent) and writes
//     the cancellation (event_cancellations), the job's work list;
//  2. the refund pass (one instance at a time, every RefundEvery, at once on
//     the instance that cancelled) releases the holds a checkout was
//     starting on, and begins, for each sold order of the event with no
//     refund pending, one refund of every ticket still live (scanned ones
//     too) and all the money left: reason cancellation, at most one
//     succeeded or pending a order (a unique index), so that the job running
//     twice, or on two instances, refunds an order once. Each is driven as
//     any refund (refund.go); one Payrail refused is begun again a minute
//     later;
//  3. the cancellation is done when no order of the event is pending (a
//     checkout under way when it was cancelled may still confirm: its order
//     is then refunded by step 2), none is sold and not refunded, and no
//     refund of one is pending. Only then is done_at written.
//
// A crash anywhere leaves the job where the database says it is: the next
// pass, on any instance, takes it up from there.

// Cancellation is the progress of an event's cancellation.
type Cancellation struct {
	// Orders counts the event's orders that were or may still be paid for
	// (pending, confirmed, partially refunded, refunded).
	Orders int
	// Refunded counts those refunded whole.
	Refunded int
	// Pending is Orders less Refunded: orders the job has yet to refund (or a
	// checkout has yet to settle).
	Pending int
	// Done: every order of the event is refunded, and none can still be
	// confirmed.
	Done        bool
	CancelledAt time.Time
	DoneAt      *time.Time
}

// CancelEvent cancels the organizer's event (event.CancelIn: another's, or
// none, is errkind.NotFound; one that has started event.ErrStarted),
// releases its holds and starts the refund of its orders, in one
// transaction, and returns the cancellation's progress. Cancelling it again
// changes nothing. The refunds are made by the refund pass (RunRefunds),
// woken on this instance at once.
func (s *Service) CancelEvent(ctx context.Context, organizerID, eventID string) (Cancellation, error) {
	var id string
	err := s.store.inTx(ctx, func(tx pgx.Tx) error {
		e, cancelled, err := event.CancelIn(ctx, tx, organizerID, eventID)
		if err != nil || !cancelled {
			id = e.ID
			return err
		}
		id = e.ID
		if _, err := hold.ReleaseEvent(ctx, tx, e.ID); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `INSERT INTO event_cancellations (event_id) VALUES ($1) ON CONFLICT DO NOTHING`, e.ID)
		return err
	})
	if err != nil {
		return Cancellation{}, err
	}
	s.WakeRefunds()
	progress, err := s.Cancellations(ctx, []string{id})
	if err != nil {
		return Cancellation{}, err
	}
	return progress[id], nil
}

// Cancellations returns the progress of the cancellations of those of
// eventIDs that were cancelled, by event id.
func (s *Service) Cancellations(ctx context.Context, eventIDs []string) (map[string]Cancellation, error) {
	out := map[string]Cancellation{}
	rows, err := s.store.db.Query(ctx, `
		SELECT c.event_id::text, c.cancelled_at, c.done_at,
		       count(o.id) FILTER (WHERE o.status IN ('pending', 'confirmed', 'partially_refunded', 'refunded')),
		       count(o.id) FILTER (WHERE o.status = 'refunded')
		FROM event_cancellations c LEFT JOIN orders o ON o.event_id = c.event_id
		WHERE c.event_id = ANY($1::uuid[])
		GROUP BY c.event_id, c.cancelled_at, c.done_at`, eventIDs)
	if err != nil {
		return nil, fmt.Errorf("checkout: read cancellations: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var c Cancellation
		if err := rows.Scan(&id, &c.CancelledAt, &c.DoneAt, &c.Orders, &c.Refunded); err != nil {
			return nil, fmt.Errorf("checkout: read cancellations: %w", err)
		}
		c.Pending, c.Done, c.CancelledAt = c.Orders-c.Refunded, c.DoneAt != nil, c.CancelledAt.UTC()
		out[id] = c
	}
	return out, rows.Err()
}

// cancellationWork is what one pass did for cancellations.
type cancellationWork struct {
	begun, done, unfinished int
	holdsReleased           int64
}

// cancellationBatch bounds the orders of one event a pass begins refunds of.
const cancellationBatch = 200

// workCancellations does steps 2 and 3 for every unfinished cancellation:
// the refunds it begins are driven by drive.
func (s *Service) workCancellations(ctx context.Context, drive func([]OrderRefund, []string)) (cancellationWork, error) {
	var w cancellationWork
	events, err := s.store.unfinishedCancellations(ctx)
	if err != nil {
		return w, err
	}
	for _, eventID := range events {
		released, err := s.store.releaseHolds(ctx, eventID)
		if err != nil {
			return w, err
		}
		w.holdsReleased += released
		orders, err := s.store.ordersToCancel(ctx, eventID, cancellationBatch)
		if err != nil {
			return w, err
		}
		var refs []OrderRefund
		var charges []string
		for _, orderID := range orders {
			ref, charge, err := s.store.beginRefund(ctx, s.events, refundStart{orderID: orderID, reason: ByCancellation, lease: s.lease})
			switch {
			case errors.Is(err, errRefundsPending), isUniqueViolation(err):
				continue // another refund (or pass) came first: the next pass looks again
			case errors.Is(err, scan.ErrNotRefundable):
				// Refunded by another pass between ordersToCancel and its lock (a
				// cancellation refunds scanned tickets too, so its status alone
				// says this): nothing left to do for it (seen in CI).
				continue
			case err != nil:
				return w, fmt.Errorf("checkout: begin the cancellation's refund of order %s: %w", orderID, err)
			}
			refs, charges = append(refs, ref), append(charges, charge)
		}
		w.begun += len(refs)
		drive(refs, charges)
		done, err := s.store.finishCancellation(ctx, eventID)
		if err != nil {
			return w, err
		}
		if done {
			w.done++
			s.logger.Info("cancellation: every order of the event is refunded", "event_id", eventID)
		} else {
			w.unfinished++
		}
	}
	return w, nil
}
