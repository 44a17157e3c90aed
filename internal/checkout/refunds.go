package checkout

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/stagedoor/stagedoor/internal/ids"
)

// Refunds made at Payrail by anyone (an operator, the provider's own
// dispute handling) reach Stagedoor through reconciliation, which reads
// Payrail's refunds in the order they were made, from where its last pass
// stopped (reading back reconcileOverlap, for refunds committed late):
//
//   - a refund of a confirmed order's charge makes the order refunded, in one
//     transaction with its tickets' revocation (internal/scan.RevokeOrder):
//     they admit no one online at once, and offline once a door has synced the
//     revocations. The hold stays converted and the seats sold: a refunded
//     order gives nothing back to the sale;
//   - a refund of an unconfirmed order's charge is recorded on it, as
//     reconciliation's own refunds are;
//   - a refund of a pending order's charge is recovery's: it finds the charge
//     refunded, and confirms and refunds the order in one transaction.

// Refunds lists up to limit of Payrail's refunds after the one made at
// afterTime with id afterID (zero values: from the first), in the order they
// were made.
func (p *Payments) Refunds(ctx context.Context, afterTime time.Time, afterID string, limit int) ([]Refund, error) {
	ctx, cancel := context.WithTimeout(ctx, p.lookupTimeout())
	defer cancel()
	q := url.Values{"limit": {strconv.Itoa(limit)}}
	if !afterTime.IsZero() {
		q.Set("created_after", afterTime.UTC().Format(time.RFC3339Nano))
		q.Set("after_id", afterID)
	}
	req, err := p.request(ctx, http.MethodGet, "/refunds?"+q.Encode(), nil)
	if err != nil {
		return nil, err
	}
	var page struct {
		Refunds []Refund `json:"refunds"`
	}
	status, raw, err := p.do(req, &page)
	switch {
	case err != nil:
		return nil, err
	case status != http.StatusOK:
		return nil, fmt.Errorf("%w: listing refunds, Payrail answered %d: %s", ErrPaymentUnavailable, status, raw)
	}
	return page.Refunds, nil
}

// reconcileRefunds reads the refunds Payrail made since the last pass (and
// reconcileOverlap before) and settles each with its order. It returns how
// many confirmed orders it found refunded.
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
	refunded := 0
	for _, r := range page {
		id, _ := ids.Parse(r.IdempotencyKey)
		o, ours := orders[id]
		switch {
		case !ours, o.refunded, o.status == Pending:
			// Not ours; recorded already (reconciliation's own refunds
			// included); or recovery's, which finds the charge refunded.
		case o.status == Confirmed:
			revoked, err := s.store.refundOrder(ctx, id, r.ChargeID, r.ID)
			if err != nil {
				return refunded, err
			}
			refunded++
			s.metrics.providerRefunds.Inc()
			s.logger.Info("reconciliation: a confirmed order's charge was refunded at Payrail; the order is refunded and its tickets revoked",
				"order_id", id, "charge_id", r.ChargeID, "refund_id", r.ID, "tickets_revoked", revoked)
		default:
			if err := s.store.recordRefund(ctx, id, r.ChargeID, r.ID); err != nil {
				return refunded, err
			}
		}
	}
	return refunded, nil
}
