package scan

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// RevokeOrder revokes every ticket of the order, in tx, the caller's:
// internal/checkout revokes a refunded order's tickets in the transaction
// that refunds the order. A revoked ticket admits no one online at once
// (Revoked), and offline once a door has synced the revocations list, as a
// ticket its organizer revoked. Tickets revoked already are left as they are.
// It returns how many it revoked.
func RevokeOrder(ctx context.Context, tx pgx.Tx, orderID string) (int64, error) {
	tag, err := tx.Exec(ctx, `
		WITH revoked AS (
		    UPDATE tickets SET revoked_at = now()
		    WHERE order_id = $1 AND revoked_at IS NULL
		    RETURNING id, event_id
		)
		INSERT INTO ticket_revocations (ticket_id, event_id) SELECT id, event_id FROM revoked`, orderID)
	if err != nil {
		return 0, fmt.Errorf("scan: revoke the tickets of order %s: %w", orderID, err)
	}
	return tag.RowsAffected(), nil
}
