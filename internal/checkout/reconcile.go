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
	return walkPayrail(ctx, s, s.store.reconciledThrough, s.payments.Charges, s.reconcilePage, s.store.reconciled)
}

// position is where a charge stands in Payrail's list.
func (c Charge) position() (time.Time, string) { return c.RecordedAt, c.ID }

// listed is an item of one of Payrail's lists a reconciliation pass reads
// (charges, refunds), which says where it stands in the list.
type listed interface {
	position() (time.Time, string)
}

// walkPayrail settles one of Payrail's lists page by page: from where the last
// pass stopped (through, less reconcileOverlap) to its end, a page after a
// position at a time (list), each settled by settle (which counts what it
// changed) and recorded by read as how far the pass has read. It returns what
// settle counted. A Payrail that cannot answer ends the pass without an
// error: the next one reads from the same place.
func walkPayrail[T listed](ctx context.Context, s *Service,
	through func(context.Context) (time.Time, error),
	list func(ctx context.Context, after time.Time, afterID string, limit int) ([]T, error),
	settle func(context.Context, []T) (int, error),
	read func(context.Context, time.Time) error,
) (int, error) {
	mark, err := through(ctx)
	if err != nil {
		return 0, err
	}
	after, afterID := time.Time{}, ""
	if !mark.IsZero() {
		after = mark.Add(-reconcileOverlap)
	}
	counted := 0
	for {
		page, err := list(ctx, after, afterID, chargesPage)
		if err != nil {
			s.payrail.Failed(err)
			return counted, nil // the next pass reads from the same place
		}
		n, err := settle(ctx, page)
		counted += n
		if errors.Is(err, ErrPaymentUnavailable) {
			s.payrail.Failed(err)
			return counted, nil // the next pass reads this page again
		}
		if err != nil {
			return counted, err
		}
		if len(page) > 0 {
			after, afterID = page[len(page)-1].position()
			if err := read(ctx, after); err != nil {
				return counted, err
			}
		}
		if len(page) < chargesPage {
			return counted, nil
		}
	}
}

// ordersOf reads the orders of a page of Payrail's list, by id: those of the
// items whose idempotency key (key) is an order id.
func ordersOf[T any](ctx context.Context, s *Service, page []T, key func(T) string) (map[string]chargedOrder, error) {
	var orderIDs []string
	for _, item := range page {
		if id, ok := ids.Parse(key(item)); ok {
			orderIDs = append(orderIDs, id)
		}
	}
	return s.store.chargedOrders(ctx, orderIDs)
}

// reconcilePage settles the charges of one page.
func (s *Service) reconcilePage(ctx context.Context, page []Charge) (int, error) {
	orders, err := ordersOf(ctx, s, page, func(c Charge) string { return c.IdempotencyKey })
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
		case !c.succeeded(), o.sold(), o.status == Pending:
		case c.RefundedCents >= c.AmountCents:
			// Refunded at Payrail, not yet recorded here (the last pass
			// stopped in between); a charge of nothing has nothing to give.
			if r, ok := c.refundedInFull(); ok && !o.refunded {
				if err := s.store.recordRefund(ctx, id, c.ID, r.ID); err != nil {
					return refunded, err
				}
			}
		default:
			refund, err := s.payments.RefundRest(ctx, c)
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
	refunded bool // refund_id: the refund of a charge of an order never confirmed
}

// sold reports whether the order was confirmed (and maybe refunded since):
// its charge is as it should be.
func (o chargedOrder) sold() bool {
	return o.status == Confirmed || o.status == PartiallyRefunded || o.status == Refunded
}
