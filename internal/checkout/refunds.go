package checkout

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/stagedoor/stagedoor/internal/ids"
	"github.com/stagedoor/stagedoor/internal/scan"
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
	through, err := s.store.refundsThrough(ctx)
	if err != nil {
		return 0, err
	}
	after, afterID := time.Time{}, ""
	if !through.IsZero() {
		after = through.Add(-reconcileOverlap)
	}
	refunded := 0
	for {
		page, err := s.payments.Refunds(ctx, after, afterID, chargesPage)
		if err != nil {
			s.payrail.Failed(err)
			return refunded, nil // the next pass reads from the same place
		}
		n, err := s.reconcileRefundPage(ctx, page)
		refunded += n
		if err != nil {
			return refunded, err
		}
		if len(page) > 0 {
			last := page[len(page)-1]
			after, afterID = last.CreatedAt, last.ID
			if err := s.store.refundsRead(ctx, last.CreatedAt); err != nil {
				return refunded, err
			}
		}
		if len(page) < chargesPage {
			return refunded, nil
		}
	}
}

// reconcileRefundPage settles the refunds of one page.
func (s *Service) reconcileRefundPage(ctx context.Context, page []Refund) (int, error) {
	var orderIDs []string
	for _, r := range page {
		if id, ok := ids.Parse(r.IdempotencyKey); ok {
			orderIDs = append(orderIDs, id)
		}
	}
	orders, err := s.store.chargedOrders(ctx, orderIDs)
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

// refundOrder makes a confirmed order refunded, its charge's refund recorded,
// and revokes its tickets, in one transaction; it returns how many tickets it
// revoked. An order that is not confirmed any more is left as it is.
func (s store) refundOrder(ctx context.Context, orderID, chargeID, refundID string) (int64, error) {
	var revoked int64
	err := s.inTx(ctx, func(tx pgx.Tx) (err error) {
		revoked, err = refundOrderIn(ctx, tx, orderID, chargeID, refundID)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("checkout: refund order %s: %w", orderID, err)
	}
	return revoked, nil
}

// refundOrderIn is refundOrder's work, in tx.
func refundOrderIn(ctx context.Context, tx pgx.Tx, orderID, chargeID, refundID string) (int64, error) {
	tag, err := tx.Exec(ctx, `
		UPDATE orders SET status = 'refunded', refund_id = $3, refunded_at = now()
		WHERE id = $1 AND status = 'confirmed' AND charge_id = $2`, orderID, chargeID, refundID)
	if err != nil || tag.RowsAffected() == 0 {
		return 0, err
	}
	return scan.RevokeOrder(ctx, tx, orderID)
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
