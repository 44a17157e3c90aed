package hold

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// ReleaseEvent releases the active holds of a cancelled event, in tx, the
// caller's (internal/checkout's, which cancels the event in it, and its
// cancellation job's later, until none is left), and frees their seats; it
// returns how many it released. A hold a checkout is starting on right now is
// skipped, not waited for: that checkout finds the event cancelled (see
// BeginCheckout) and leaves the hold active, for the next call. Holds in a
// checkout are left to it: their orders are refunded if they are confirmed.
func ReleaseEvent(ctx context.Context, tx pgx.Tx, eventID string) (int64, error) {
	var released int64
	// The seats are locked in id order, as every statement over several
	// seats locks them, so that it never deadlocks with a placement.
	err := tx.QueryRow(ctx, `
		WITH h AS (
		    UPDATE holds SET status = 'released', ended_at = now()
		    WHERE id IN (SELECT id FROM holds WHERE event_id = $1 AND status = 'active' FOR UPDATE SKIP LOCKED)
		    RETURNING id, seat_ids
		), mine AS (
		    SELECT s.id FROM seats s JOIN h ON s.id = ANY(h.seat_ids) AND s.hold_id = h.id
		    WHERE s.sold_at IS NULL
		    ORDER BY s.id
		    FOR NO KEY UPDATE OF s
		), freed AS (
		    UPDATE seats SET hold_id = NULL, held_until = NULL FROM mine WHERE seats.id = mine.id
		)
		SELECT count(*) FROM h`, eventID).Scan(&released)
	if err != nil {
		return 0, fmt.Errorf("hold: release the holds of event %s: %w", eventID, err)
	}
	return released, nil
}

// Resell puts sold seats back on sale, in tx, the caller's: internal/checkout
// refunds their tickets in it. A seat not sold is left as it is. It returns
// how many it put back.
func Resell(ctx context.Context, tx pgx.Tx, seatIDs []string) (int64, error) {
	tag, err := tx.Exec(ctx, `
		WITH mine AS (
		    SELECT id FROM seats WHERE id = ANY($1::uuid[]) AND sold_at IS NOT NULL ORDER BY id FOR NO KEY UPDATE
		)
		UPDATE seats SET sold_at = NULL, hold_id = NULL, held_until = NULL FROM mine WHERE seats.id = mine.id`, seatIDs)
	if err != nil {
		return 0, fmt.Errorf("hold: put seats back on sale: %w", err)
	}
	return tag.RowsAffected(), nil
}

// PriceOf returns what the seats cost together, in tx, the caller's (a refund
// gives back what its tickets' seats cost).
func PriceOf(ctx context.Context, tx pgx.Tx, seatIDs []string) (int64, error) {
	var total int64
	if err := tx.QueryRow(ctx, `SELECT coalesce(sum(price_cents), 0)::bigint FROM seats WHERE id = ANY($1::uuid[])`, seatIDs).
		Scan(&total); err != nil {
		return 0, fmt.Errorf("hold: the price of seats: %w", err)
	}
	return total, nil
}
