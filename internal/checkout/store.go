package checkout

import (
	"context"
	"crypto/rand"
	"encoding/base32"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/stagedoor/stagedoor/internal/ids"
)

// store is the SQL of orders and tickets, and of the hold and seat changes that
// go with them. Ids reaching it are valid UUIDs.
type store struct {
	db *pgxpool.Pool
}

// pendingOrder is what the charge and its settlement need of an order.
type pendingOrder struct {
	Order
	seatIDs []string
}

// begin starts a checkout in one short transaction: the hold must be the
// buyer's, active and unexpired, and still own every seat; its seats are then
// kept past its expiry (held_until = infinity) while the payment runs, the hold
// becomes checking_out, and a pending order is written.
func (s store) begin(ctx context.Context, buyerID, holdID string) (pendingOrder, error) {
	var o pendingOrder
	err := pgx.BeginFunc(ctx, s.db, func(tx pgx.Tx) error {
		var status string
		var expired bool
		err := tx.QueryRow(ctx, `
			SELECT status, expires_at <= now(), seat_ids::text[], event_id::text, total_cents, currency
			FROM holds WHERE id = $1 AND buyer_id = $2 FOR UPDATE`, holdID, buyerID).
			Scan(&status, &expired, &o.seatIDs, &o.EventID, &o.TotalCents, &o.Currency)
		if errors.Is(err, pgx.ErrNoRows) {
			return ErrNotFound
		}
		if err != nil {
			return err
		}
		if status != "active" || expired {
			return fmt.Errorf("%w: the hold is %s", ErrHoldNotActive, holdState(status, expired))
		}
		// Lock the seats in id order, as placing a hold does, so that two
		// statements over several seats never deadlock.
		tag, err := tx.Exec(ctx, `
			WITH owned AS (
			    SELECT id FROM seats
			    WHERE id = ANY($1::uuid[]) AND hold_id = $2 AND held_until > now() AND sold_at IS NULL
			    ORDER BY id FOR NO KEY UPDATE
			)
			UPDATE seats SET held_until = 'infinity' WHERE id IN (SELECT id FROM owned)`, o.seatIDs, holdID)
		if err != nil {
			return err
		}
		if int(tag.RowsAffected()) != len(o.seatIDs) {
			return fmt.Errorf("%w: its time ran out", ErrHoldNotActive)
		}
		if _, err := tx.Exec(ctx, `UPDATE holds SET status = 'checking_out' WHERE id = $1`, holdID); err != nil {
			return err
		}
		o.ID, o.BuyerID, o.HoldID, o.Status = ids.New(), buyerID, holdID, Pending
		return tx.QueryRow(ctx, `
			INSERT INTO orders (id, buyer_id, hold_id, event_id, total_cents, currency)
			VALUES ($1, $2, $3, $4, $5, $6) RETURNING created_at`,
			o.ID, buyerID, holdID, o.EventID, o.TotalCents, o.Currency).Scan(&o.CreatedAt)
	})
	if err != nil && !errors.Is(err, ErrNotFound) && !errors.Is(err, ErrHoldNotActive) {
		return pendingOrder{}, fmt.Errorf("checkout: begin: %w", err)
	}
	return o, err
}

func holdState(status string, expired bool) string {
	switch {
	case status == "checking_out":
		return "already being checked out"
	case status == "active" && expired, status == "expired":
		return "expired"
	default:
		return status
	}
}

// confirm settles a charged order: the order is confirmed, its seats sold, its
// hold converted, and one ticket issued a seat. It does nothing to an order that
// is no longer pending (recovery may have settled it first) and reports whether
// it confirmed.
func (s store) confirm(ctx context.Context, o pendingOrder, chargeID string) (bool, error) {
	confirmed := false
	err := pgx.BeginFunc(ctx, s.db, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `
			UPDATE orders SET status = 'confirmed', charge_id = $2, settled_at = now()
			WHERE id = $1 AND status = 'pending'`, o.ID, chargeID)
		if err != nil || tag.RowsAffected() == 0 {
			return err
		}
		if _, err := tx.Exec(ctx, `
			WITH mine AS (
			    SELECT id FROM seats WHERE id = ANY($1::uuid[]) AND hold_id = $2 ORDER BY id FOR NO KEY UPDATE
			)
			UPDATE seats SET sold_at = now() WHERE id IN (SELECT id FROM mine)`, o.seatIDs, o.HoldID); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `
			UPDATE holds SET status = 'converted', ended_at = now() WHERE id = $1`, o.HoldID); err != nil {
			return err
		}
		ticketIDs, codes := make([]string, len(o.seatIDs)), make([]string, len(o.seatIDs))
		for i := range o.seatIDs {
			ticketIDs[i], codes[i] = ids.New(), newTicketCode()
		}
		if _, err := tx.Exec(ctx, `
			INSERT INTO tickets (id, order_id, buyer_id, event_id, seat_id, code)
			SELECT t.id, $1, $2, $3, t.seat_id, t.code
			FROM unnest($4::uuid[], $5::uuid[], $6::text[]) AS t (id, seat_id, code)`,
			o.ID, o.BuyerID, o.EventID, ticketIDs, o.seatIDs, codes); err != nil {
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
// and gives its hold back: active again, its seats held until the hold's own
// expiry (which may have passed meanwhile, freeing them).
func (s store) reopen(ctx context.Context, o pendingOrder, status string) error {
	return s.endUncharged(ctx, o, status, "active", "h.expires_at")
}

// release ends a pending order that recovery found uncharged: the order is
// released and so is its hold, its seats available at once.
func (s store) release(ctx context.Context, o pendingOrder) error {
	return s.endUncharged(ctx, o, Released, "released", "NULL")
}

func (s store) endUncharged(ctx context.Context, o pendingOrder, orderStatus, holdStatus, heldUntil string) error {
	err := pgx.BeginFunc(ctx, s.db, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `
			UPDATE orders SET status = $2, settled_at = now() WHERE id = $1 AND status = 'pending'`,
			o.ID, orderStatus)
		if err != nil || tag.RowsAffected() == 0 {
			return err
		}
		if _, err := tx.Exec(ctx, `
			UPDATE holds SET status = $2, ended_at = CASE WHEN $2 = 'active' THEN NULL ELSE now() END
			WHERE id = $1`, o.HoldID, holdStatus); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `
			WITH mine AS (
			    SELECT s.id FROM seats s
			    WHERE s.id = ANY($1::uuid[]) AND s.hold_id = $2 AND s.sold_at IS NULL
			    ORDER BY s.id FOR NO KEY UPDATE
			)
			UPDATE seats SET held_until = `+heldUntil+`
			FROM holds h WHERE h.id = $2 AND seats.id IN (SELECT id FROM mine)`, o.seatIDs, o.HoldID)
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
