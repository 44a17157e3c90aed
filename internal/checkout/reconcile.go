package checkout

import (
	"context"
	"errors"
	"time"

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
