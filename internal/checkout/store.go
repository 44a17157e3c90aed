package checkout

import (
	"context"
	"crypto/rand"
	"encoding/base32"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/stagedoor/stagedoor/internal/hold"
	"github.com/stagedoor/stagedoor/internal/ids"
)

// store is the SQL of orders and tickets; the hold and seat changes that go with
// them are internal/hold's, run in the same transactions. Ids reaching it are
// valid UUIDs.
type store struct {
	db *pgxpool.Pool
}

// pendingOrder is what the charge and its settlement need of an order.
type pendingOrder struct {
	Order
	seatIDs []string
}

// begin starts a checkout in one short transaction: the hold moves to
// checking_out (hold.BeginCheckout: the buyer's, active, unexpired, owning its
// seats, which are then kept while the payment runs) and a pending order is
// written for it.
func (s store) begin(ctx context.Context, buyerID, holdID string) (pendingOrder, error) {
	var o pendingOrder
	err := pgx.BeginFunc(ctx, s.db, func(tx pgx.Tx) error {
		h, err := hold.BeginCheckout(ctx, tx, buyerID, holdID)
		if err != nil {
			return err
		}
		o.ID, o.BuyerID, o.HoldID, o.EventID, o.Status = ids.New(), buyerID, h.ID, h.EventID, Pending
		o.TotalCents, o.Currency, o.seatIDs = h.TotalCents, h.Currency, h.SeatIDs
		return tx.QueryRow(ctx, `
			INSERT INTO orders (id, buyer_id, hold_id, event_id, total_cents, currency)
			VALUES ($1, $2, $3, $4, $5, $6) RETURNING created_at`,
			o.ID, buyerID, holdID, o.EventID, o.TotalCents, o.Currency).Scan(&o.CreatedAt)
	})
	if err != nil && !errors.Is(err, hold.ErrNotFound) && !errors.Is(err, hold.ErrNotActive) {
		return pendingOrder{}, fmt.Errorf("checkout: begin: %w", err)
	}
	return o, err
}

// confirm settles a charged order: the order is confirmed, its hold converted
// (its seats sold), and one ticket issued a seat. It does nothing to an order
// that is no longer pending (recovery may have settled it first) and reports
// whether it confirmed.
func (s store) confirm(ctx context.Context, o pendingOrder, chargeID string) (bool, error) {
	confirmed := false
	err := pgx.BeginFunc(ctx, s.db, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `
			UPDATE orders SET status = 'confirmed', charge_id = $2, settled_at = now()
			WHERE id = $1 AND status = 'pending'`, o.ID, chargeID)
		if err != nil || tag.RowsAffected() == 0 {
			return err
		}
		seatIDs, err := hold.EndCheckout(ctx, tx, o.HoldID, hold.Converted)
		if err != nil {
			return err
		}
		ticketIDs, codes := make([]string, len(seatIDs)), make([]string, len(seatIDs))
		for i := range seatIDs {
			ticketIDs[i], codes[i] = ids.New(), newTicketCode()
		}
		if _, err := tx.Exec(ctx, `
			INSERT INTO tickets (id, order_id, buyer_id, event_id, seat_id, code)
			SELECT t.id, $1, $2, $3, t.seat_id, t.code
			FROM unnest($4::uuid[], $5::uuid[], $6::text[]) AS t (id, seat_id, code)`,
			o.ID, o.BuyerID, o.EventID, ticketIDs, seatIDs, codes); err != nil {
			return err
		}
		confirmed = true
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("checkout: confirm order %s: %w", o.ID, err)
	}
	return confirmed, nil
}

// reopen ends a pending order that was not charged (status declined or failed)
// and gives its hold back: active again until its own expiry.
func (s store) reopen(ctx context.Context, o pendingOrder, status string) error {
	return s.endUncharged(ctx, o, status, hold.Active)
}

// release ends a pending order that recovery found uncharged: the order is
// released and so is its hold, its seats available at once.
func (s store) release(ctx context.Context, o pendingOrder) error {
	return s.endUncharged(ctx, o, Released, hold.Released)
}

func (s store) endUncharged(ctx context.Context, o pendingOrder, orderStatus string, holdTo hold.Status) error {
	err := pgx.BeginFunc(ctx, s.db, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `
			UPDATE orders SET status = $2, settled_at = now() WHERE id = $1 AND status = 'pending'`,
			o.ID, orderStatus)
		if err != nil || tag.RowsAffected() == 0 {
			return err
		}
		_, err = hold.EndCheckout(ctx, tx, o.HoldID, holdTo)
		return err
	})
	if err != nil {
		return fmt.Errorf("checkout: end order %s: %w", o.ID, err)
	}
	return nil
}

// stalePending lists pending orders created more than olderThan ago.
func (s store) stalePending(ctx context.Context, olderThanSeconds float64, limit int) ([]pendingOrder, error) {
	rows, err := s.db.Query(ctx, `
		SELECT o.id::text, o.buyer_id::text, o.hold_id::text, o.event_id::text, o.total_cents, o.currency,
		       o.created_at, h.seat_ids::text[]
		FROM orders o JOIN holds h ON h.id = o.hold_id
		WHERE o.status = 'pending' AND o.created_at < now() - $1::float8 * interval '1 second'
		ORDER BY o.created_at LIMIT $2`, olderThanSeconds, limit)
	if err != nil {
		return nil, fmt.Errorf("checkout: list pending orders: %w", err)
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (pendingOrder, error) {
		var o pendingOrder
		o.Status = Pending
		err := row.Scan(&o.ID, &o.BuyerID, &o.HoldID, &o.EventID, &o.TotalCents, &o.Currency, &o.CreatedAt, &o.seatIDs)
		return o, err
	})
}

var ticketCodeEncoding = base32.StdEncoding.WithPadding(base32.NoPadding)

// newTicketCode returns 160 random bits as 32 base32 characters.
func newTicketCode() string {
	b := make([]byte, 20)
	_, _ = rand.Read(b)
	return ticketCodeEncoding.EncodeToString(b)
}
