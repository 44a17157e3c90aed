package checkout

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/stagedoor/stagedoor/internal/hold"
)

// The SQL of cancellations (cancel.go has the rules).

// unfinishedCancellations lists the events whose cancellation is not done,
// oldest first.
func (s store) unfinishedCancellations(ctx context.Context) ([]string, error) {
	rows, err := s.db.Query(ctx, `SELECT event_id::text FROM event_cancellations WHERE done_at IS NULL ORDER BY cancelled_at`)
	if err != nil {
		return nil, fmt.Errorf("checkout: list cancellations: %w", err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("checkout: list cancellations: %w", err)
	}
	return ids, nil
}

// releaseHolds releases the active holds of a cancelled event.
func (s store) releaseHolds(ctx context.Context, eventID string) (n int64, err error) {
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		n, err = hold.ReleaseEvent(ctx, tx, eventID)
		return err
	})
	return n, err
}

// ordersToCancel lists up to limit sold orders of a cancelled event that are
// not refunded whole, have no refund pending, no cancellation refund pending
// or succeeded, and none that Payrail refused in the last minute.
func (s store) ordersToCancel(ctx context.Context, eventID string, limit int) ([]string, error) {
	rows, err := s.db.Query(ctx, `
		SELECT o.id::text FROM orders o
		WHERE o.event_id = $1 AND o.status IN ('confirmed', 'partially_refunded')
		  AND NOT EXISTS (
		      SELECT FROM refunds r WHERE r.order_id = o.id
		        AND (r.status = 'pending'
		          OR r.reason = 'cancellation' AND r.status = 'succeeded'
		          OR r.reason = 'cancellation' AND r.status = 'failed' AND r.settled_at > now() - interval '1 minute'))
		ORDER BY o.created_at LIMIT $2`, eventID, limit)
	if err != nil {
		return nil, fmt.Errorf("checkout: list the orders of a cancellation: %w", err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("checkout: list the orders of a cancellation: %w", err)
	}
	return ids, nil
}

// finishCancellation marks the cancellation done when it is (see cancel.go,
// step 3), in one statement, and reports whether it is.
func (s store) finishCancellation(ctx context.Context, eventID string) (bool, error) {
	tag, err := s.db.Exec(ctx, `
		UPDATE event_cancellations c SET done_at = now()
		WHERE c.event_id = $1 AND c.done_at IS NULL
		  AND NOT EXISTS (SELECT FROM orders o WHERE o.event_id = c.event_id
		                  AND o.status IN ('pending', 'confirmed', 'partially_refunded'))
		  AND NOT EXISTS (SELECT FROM refunds r JOIN orders o ON o.id = r.order_id
		                  WHERE o.event_id = c.event_id AND r.status = 'pending')`, eventID)
	if err != nil {
		return false, fmt.Errorf("checkout: finish a cancellation: %w", err)
	}
	return tag.RowsAffected() == 1, nil
}

// isUniqueViolation reports a unique index refusing a row.
func isUniqueViolation(err error) bool {
	var pg *pgconn.PgError
	return errors.As(err, &pg) && pg.Code == "23505"
}

// pendingRefunds counts the refunds waiting for Payrail's answer.
func (s store) pendingRefunds(ctx context.Context) (int, error) {
	var n int
	if err := s.db.QueryRow(ctx, `SELECT count(*) FROM refunds WHERE status = 'pending'`).Scan(&n); err != nil {
		return 0, fmt.Errorf("checkout: count pending refunds: %w", err)
	}
	return n, nil
}
