package checkout

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/stagedoor/stagedoor/internal/ids"
	"github.com/stagedoor/stagedoor/internal/scan"
)

// Payrail's refunds reach Stagedoor through reconciliation, which reads them
// in the order they were made, from where its last pass stopped (reading back
// reconcileOverlap, for refunds committed late), and matches each to the
// refunds of Stagedoor's own by its refund_key (a refund's id is its key):
//
//   - a refund of Stagedoor's still pending is settled succeeded: Payrail
//     holds it (its answer was lost; the refund pass would learn the same by
//     asking again);
//   - any other refund of a sold order's charge was made by someone else (an
//     operator, a dispute): it is recorded on the order as a refund of its
//     own (reason payrail), with its amount. One that gives back all that was
//     left of the charge refunds the order whole: every ticket still live is
//     refunded and revoked (online at once, offline once a door has synced
//     the revocations), its seat back on sale. A partial one is money, not
//     seats: Stagedoor cannot tell which tickets it was for, so they stay
//     valid, the order partially_refunded, and later refunds of its tickets
//     give back at most what is left of the charge;
//   - a refund of an unconfirmed order's charge is recorded on it, as
//     reconciliation's own refunds of late charges are;
//   - a refund of a pending order's charge is recovery's: it finds the charge
//     refunded, and confirms the order and records its refunds in one
//     transaction.

// reconcileRefunds reads the refunds Payrail made since the last pass (and
// reconcileOverlap before) and settles each with its order. It returns how
// many it found made by someone else on sold orders.
func (s *Service) reconcileRefunds(ctx context.Context) (int, error) {
	return walkPayrail(ctx, s, s.store.refundsThrough, s.payments.Refunds, s.reconcileRefundPage, s.store.refundsRead)
}

// position is where a refund stands in Payrail's list.
func (r Refund) position() (time.Time, string) { return r.CreatedAt, r.ID }

// reconcileRefundPage settles the refunds of one page.
func (s *Service) reconcileRefundPage(ctx context.Context, page []Refund) (int, error) {
	orders, err := ordersOf(ctx, s, page, func(r Refund) string { return r.IdempotencyKey })
	if err != nil {
		return 0, err
	}
	outside := 0
	for _, r := range page {
		id, _ := ids.Parse(r.IdempotencyKey)
		o, ours := orders[id]
		switch {
		case !ours, o.status == Pending:
			// Not ours; or recovery's, which finds the charge refunded.
		case o.sold():
			var found refundFound
			var reason string
			err := s.store.inTx(ctx, func(tx pgx.Tx) (err error) {
				found, reason, err = reconcileSaleRefund(ctx, tx, id, r)
				return err
			})
			if err != nil {
				return outside, fmt.Errorf("checkout: reconcile refund %s of order %s: %w", r.ID, id, err)
			}
			outside += s.noteRefundFound(found, reason, id, r)
		case !o.refunded:
			if err := s.store.recordRefund(ctx, id, r.ChargeID, r.ID); err != nil {
				return outside, err
			}
		}
	}
	return outside, nil
}

// noteRefundFound counts and logs what reconciliation found of a refund of a
// sold order, and returns 1 for one made by someone else.
func (s *Service) noteRefundFound(found refundFound, reason, orderID string, r Refund) int {
	switch found {
	case refundOursSettled:
		s.metrics.orderRefunds.WithLabelValues(reason, RefundSucceeded).Inc()
		s.logger.Info("reconciliation: a pending refund is held by Payrail; settled", "order_id", orderID, "refund_id", r.RefundKey)
	case refundOutsideWhole, refundOutsidePart:
		s.metrics.providerRefunds.Inc()
		s.metrics.orderRefunds.WithLabelValues(AtPayrail, RefundSucceeded).Inc()
		s.logger.Info("reconciliation: a sold order's charge was refunded at Payrail by someone else",
			"order_id", orderID, "charge_id", r.ChargeID, "payrail_refund_id", r.ID, "amount_cents", r.AmountCents,
			"whole", found == refundOutsideWhole)
		return 1
	}
	return 0
}

// refundFound is what reconciliation made of one of Payrail's refunds of a
// sold order.
type refundFound int

const (
	refundKnown        refundFound = iota // recorded already
	refundOursSettled                     // a refund of ours, pending until now
	refundOutsideWhole                    // someone else's, giving back all that was left
	refundOutsidePart                     // someone else's, giving back part of it
)

// reconcileSaleRefund records one of Payrail's refunds of a sold order's
// charge, in tx (see the rules above); for a refund of ours it settled, it
// returns its reason.
func reconcileSaleRefund(ctx context.Context, tx pgx.Tx, orderID string, r Refund) (refundFound, string, error) {
	found, err := reconcileSaleRefundIn(ctx, tx, orderID, r)
	if found != refundOursSettled || err != nil {
		return found, AtPayrail, err
	}
	var reason string
	err = tx.QueryRow(ctx, `SELECT reason FROM refunds WHERE id = $1`, r.RefundKey).Scan(&reason)
	return found, reason, err
}

// reconcileSaleRefundIn is reconcileSaleRefund's work.
func reconcileSaleRefundIn(ctx context.Context, tx pgx.Tx, orderID string, r Refund) (refundFound, error) {
	o, err := lockOrder(ctx, tx, orderID)
	if err != nil {
		return refundKnown, err
	}
	if refundID, ok := ids.Parse(r.RefundKey); ok {
		var status string
		err := tx.QueryRow(ctx, `SELECT status FROM refunds WHERE id = $1 AND order_id = $2 FOR UPDATE`, refundID, orderID).Scan(&status)
		switch {
		case err == nil && status == RefundPending:
			_, err := settleRefundIn(ctx, tx, refundID, r.ID, nil)
			return refundOursSettled, err
		case err == nil && status == RefundSucceeded:
			return refundKnown, nil
		case err != nil && !errors.Is(err, pgx.ErrNoRows):
			return refundKnown, err
		}
		// A refund of ours that failed, held by Payrail after all: money
		// given back, recorded below as someone else's would be.
	}
	var known bool
	if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT FROM refunds WHERE payrail_refund_id = $1)`, r.ID).Scan(&known); err != nil || known {
		return refundKnown, err
	}
	whole := o.refunded+r.AmountCents >= o.total
	var held []scan.Held
	if whole {
		if held, err = scan.RefundOrder(ctx, tx, orderID); err != nil {
			return refundKnown, err
		}
	}
	ticketIDs := make([]string, len(held))
	for i, t := range held {
		ticketIDs[i] = t.ID
	}
	if _, err := tx.Exec(ctx, `
		INSERT INTO refunds (id, order_id, reason, ticket_ids, amount_cents, status, payrail_refund_id, settled_at)
		VALUES ($1, $2, 'payrail', $3, $4, 'succeeded', $5, now())`, ids.New(), orderID, ticketIDs, r.AmountCents, r.ID); err != nil {
		return refundKnown, err
	}
	if err := refunded(ctx, tx, orderID, r.AmountCents, held); err != nil {
		return refundKnown, err
	}
	if whole {
		return refundOutsideWhole, nil
	}
	return refundOutsidePart, nil
}
