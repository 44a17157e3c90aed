package checkout

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/stagedoor/stagedoor/internal/ids"
)

// reconcileOverlap is how far back each reconciliation pass reads again from
// where the last one stopped: a charge committed at Payrail just after a pass
// listed its neighbours is read by the next one. Reading a charge twice is
// harmless.
const reconcileOverlap = time.Minute

// reconcile reads the charges Payrail recorded since the last pass (and a
// minute before) and settles every difference with the orders: a succeeded
// charge whose order was declined, failed or released (it reached Payrail
// late) is refunded and the refund recorded on the order. A charge of a
// confirmed order is as it should be; one of a pending order is recovery's.
// It returns how many charges it refunded.
func (s *Service) reconcile(ctx context.Context) (int, error) {
	through, err := s.store.reconciledThrough(ctx)
	if err != nil {
		return 0, err
	}
	after, afterID := time.Time{}, ""
	if !through.IsZero() {
		after = through.Add(-reconcileOverlap)
	}
	refunded := 0
	for {
		page, err := s.payments.Charges(ctx, after, afterID, chargesPage)
		if err != nil {
			s.payrail.Failed(err)
			return refunded, nil // the next pass reads from the same place
		}
		n, err := s.reconcilePage(ctx, page)
		refunded += n
		if errors.Is(err, ErrPaymentUnavailable) {
			s.payrail.Failed(err)
			return refunded, nil // the next pass reads this page again
		}
		if err != nil {
			return refunded, err
		}
		if len(page) > 0 {
			last := page[len(page)-1]
			after, afterID = last.RecordedAt, last.ID
			if err := s.store.reconciled(ctx, last.RecordedAt); err != nil {
				return refunded, err
			}
		}
		if len(page) < chargesPage {
			return refunded, nil
		}
	}
}

// reconcilePage settles the charges of one page.
func (s *Service) reconcilePage(ctx context.Context, page []Charge) (int, error) {
	var orderIDs []string
	for _, c := range page {
		if id, ok := ids.Parse(c.IdempotencyKey); ok {
			orderIDs = append(orderIDs, id)
		}
	}
	orders, err := s.store.chargedOrders(ctx, orderIDs)
	if err != nil {
		return 0, err
	}
	refunded := 0
	for _, c := range page {
		id, _ := ids.Parse(c.IdempotencyKey)
		o, ours := orders[id]
		switch {
		case !ours:
			s.logger.Debug("reconciliation: a charge that is no order of ours", "charge_id", c.ID, "key", c.IdempotencyKey)
		case !c.succeeded(), o.status == Confirmed, o.status == Pending, o.refunded:
		case c.Refund != nil:
			// Refunded at Payrail, not yet recorded here (the last pass
			// stopped in between).
			if err := s.store.recordRefund(ctx, id, c.ID, c.Refund.ID); err != nil {
				return refunded, err
			}
		default:
			refund, err := s.payments.RefundCharge(ctx, c.ID)
			if err != nil {
				return refunded, err
			}
			if err := s.store.recordRefund(ctx, id, c.ID, refund.ID); err != nil {
				return refunded, err
			}
			refunded++
			s.metrics.refunds.Inc()
			s.logger.Info("reconciliation: a late charge on an order that was not confirmed was refunded",
				"order_id", id, "order_status", o.status, "charge_id", c.ID, "refund_id", refund.ID)
		}
	}
	return refunded, nil
}

// chargedOrder is what reconciliation needs of an order.
type chargedOrder struct {
	status   string
	refunded bool
}

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
