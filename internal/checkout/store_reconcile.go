package checkout

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// The SQL of reconciliation with Payrail's charges and refunds
// (reconcile.go and refunds.go have the rules).

// chargedOrders returns the orders among orderIDs, by id.
func (s store) chargedOrders(ctx context.Context, orderIDs []string) (map[string]chargedOrder, error) {
	out := make(map[string]chargedOrder, len(orderIDs))
	if len(orderIDs) == 0 {
		return out, nil
	}
	rows, err := s.db.Query(ctx, `
		SELECT id::text, status, refund_id IS NOT NULL FROM orders WHERE id = ANY($1::uuid[])`, orderIDs)
	if err != nil {
		return nil, fmt.Errorf("checkout: reconcile: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var o chargedOrder
		if err := rows.Scan(&id, &o.status, &o.refunded); err != nil {
			return nil, fmt.Errorf("checkout: reconcile: %w", err)
		}
		out[id] = o
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("checkout: reconcile: %w", err)
	}
	return out, nil
}

// recordRefund records on an unconfirmed order the charge that reached Payrail
// for it and the refund that gave it back.
func (s store) recordRefund(ctx context.Context, orderID, chargeID, refundID string) error {
	_, err := s.db.Exec(ctx, `
		UPDATE orders SET charge_id = $2, refund_id = $3, refunded_at = now()
		WHERE id = $1 AND status IN ('declined', 'failed', 'released') AND refund_id IS NULL`,
		orderID, chargeID, refundID)
	if err != nil {
		return fmt.Errorf("checkout: record refund of order %s: %w", orderID, err)
	}
	return nil
}

// reconciledThrough is when the newest charge reconciliation has read was
// recorded at Payrail; zero before the first pass.
func (s store) reconciledThrough(ctx context.Context) (time.Time, error) {
	var t time.Time
	err := s.db.QueryRow(ctx, `SELECT recorded_through FROM payment_reconciliation`).Scan(&t)
	if errors.Is(err, pgx.ErrNoRows) {
		return time.Time{}, nil
	}
	if err != nil {
		return time.Time{}, fmt.Errorf("checkout: reconcile: %w", err)
	}
	return t, nil
}

// reconciled moves the reconciliation's place forward to t (never back).
func (s store) reconciled(ctx context.Context, t time.Time) error {
	_, err := s.db.Exec(ctx, `
		INSERT INTO payment_reconciliation (recorded_through) VALUES ($1)
		ON CONFLICT (singleton) DO UPDATE
		SET recorded_through = greatest(payment_reconciliation.recorded_through, EXCLUDED.recorded_through),
		    updated_at = now()`, t)
	if err != nil {
		return fmt.Errorf("checkout: reconcile: %w", err)
	}
	return nil
}

// refundsThrough is when the newest refund reconciliation has read was made
// at Payrail; zero before the first pass.
func (s store) refundsThrough(ctx context.Context) (time.Time, error) {
	var t time.Time
	err := s.db.QueryRow(ctx, `SELECT refunded_through FROM refund_reconciliation`).Scan(&t)
	if errors.Is(err, pgx.ErrNoRows) {
		return time.Time{}, nil
	}
	if err != nil {
		return time.Time{}, fmt.Errorf("checkout: reconcile refunds: %w", err)
	}
	return t, nil
}

// refundsRead moves refund reconciliation's place forward to t (never back).
func (s store) refundsRead(ctx context.Context, t time.Time) error {
	_, err := s.db.Exec(ctx, `
		INSERT INTO refund_reconciliation (refunded_through) VALUES ($1)
		ON CONFLICT (singleton) DO UPDATE
		SET refunded_through = greatest(refund_reconciliation.refunded_through, EXCLUDED.refunded_through),
		    updated_at = now()`, t)
	if err != nil {
		return fmt.Errorf("checkout: reconcile refunds: %w", err)
	}
	return nil
}
