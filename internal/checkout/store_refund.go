package checkout

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/stagedoor/stagedoor/internal/event"
	"github.com/stagedoor/stagedoor/internal/hold"
	"github.com/stagedoor/stagedoor/internal/ids"
	"github.com/stagedoor/stagedoor/internal/scan"
)

// The SQL of refunds (refund.go has the rules).

// refundStart is a refund to begin.
type refundStart struct {
	orderID   string
	ticketIDs []string // none: every refundable ticket
	by        string   // the account asking; "" for the cancellation job
	organizer bool     // by is the event's organizer
	reason    string   // "": ByBuyer or ByOrganizer, as organizer says
	key       *refundKey
	lease     time.Duration
}

// EventInfo gives what a refund needs of an event: its organizer
// (*event.Service).
type EventInfo interface {
	Info(ctx context.Context, eventID string) (event.Info, error)
}

// lockedOrder is an order as a refund's transaction holds it.
type lockedOrder struct {
	buyerID, eventID, status, chargeID string
	total, refunded, pending           int64 // pending: the amounts of its pending refunds
}

// lockOrder reads and locks an order in tx, with the amounts of its pending
// refunds: the refunds of one order are begun one at a time.
func lockOrder(ctx context.Context, tx pgx.Tx, orderID string) (lockedOrder, error) {
	var o lockedOrder
	var chargeID *string
	err := tx.QueryRow(ctx, `
		SELECT o.buyer_id::text, o.event_id::text, o.status, o.charge_id, o.total_cents, o.refunded_cents,
		       (SELECT coalesce(sum(r.amount_cents), 0)::bigint FROM refunds r WHERE r.order_id = o.id AND r.status = 'pending')
		FROM orders o WHERE o.id = $1 FOR UPDATE`, orderID).
		Scan(&o.buyerID, &o.eventID, &o.status, &chargeID, &o.total, &o.refunded, &o.pending)
	if errors.Is(err, pgx.ErrNoRows) {
		return lockedOrder{}, errNotFound
	}
	if chargeID != nil {
		o.chargeID = *chargeID
	}
	return o, err
}

// beginRefund writes a pending refund in one transaction (see refund.go, step
// 1) and returns it with the charge to refund. With a key, errKeyTaken when
// another request wrote a refund with it first.
func (s store) beginRefund(ctx context.Context, events EventInfo, r refundStart) (OrderRefund, string, error) {
	ref := OrderRefund{ID: ids.New(), OrderID: r.orderID, Reason: r.reason, Status: RefundPending, TicketIDs: []string{}}
	var chargeID string
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		o, err := lockOrder(ctx, tx, r.orderID)
		if err != nil {
			return err
		}
		if r.key != nil {
			// A request with the same key that held the order first wrote its
			// refund: this one answers it.
			var taken bool
			if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT FROM refunds WHERE requested_by = $1 AND request_key = $2)`,
				r.key.by, r.key.key).Scan(&taken); err != nil || taken {
				return cmp.Or(err, errKeyTaken)
			}
		}
		rule := scan.RefundRule{}
		switch {
		case r.reason == ByCancellation:
			rule.Scanned = true
		case r.organizer:
			ref.Reason = ByOrganizer
			info, err := events.Info(ctx, o.eventID)
			if err != nil || info.OrganizerID != r.by {
				return errNotFound
			}
		default:
			ref.Reason, rule.Holder = ByBuyer, r.by
			if o.buyerID != r.by {
				return errNotFound
			}
		}
		switch {
		case o.status != Confirmed && o.status != PartiallyRefunded:
			return notRefundable("the order is %s", o.status)
		case r.reason == ByCancellation && o.pending > 0:
			return errRefundsPending
		}
		if ref.Reason == ByBuyer {
			w, err := event.RefundWindow(ctx, tx, o.eventID)
			if err != nil {
				return err
			}
			if !w.Open {
				return windowClosed(w)
			}
		}
		held, err := scan.HoldForRefund(ctx, tx, r.orderID, r.ticketIDs, rule)
		switch {
		case r.reason == ByCancellation && errors.Is(err, scan.ErrNotRefundable):
			// No ticket left to give back (revoked by the organizer, or
			// refunded): the money left still goes back.
		case err != nil:
			return err
		}
		seats := make([]string, len(held))
		for i, h := range held {
			ref.TicketIDs, seats[i] = append(ref.TicketIDs, h.ID), h.SeatID
		}
		price, err := hold.PriceOf(ctx, tx, seats)
		if err != nil {
			return err
		}
		ref.AmountCents = min(price, o.total-o.refunded-o.pending)
		if r.reason == ByCancellation {
			ref.AmountCents = o.total - o.refunded - o.pending // all the money left
		}
		chargeID = o.chargeID
		if err := insertRefund(ctx, tx, &ref, r); err != nil || ref.Reason != ByCancellation {
			return err
		}
		return notifyCancelled(ctx, tx, ref.OrderID, ref.TicketIDs, ref.AmountCents)
	})
	return ref, chargeID, err
}

// windowClosed is ErrRefundWindowClosed saying when it closed.
func windowClosed(w event.Window) error {
	if w.Until == nil {
		return fmt.Errorf("%w: this event offers no refunds; ask its organizer", ErrRefundWindowClosed)
	}
	return fmt.Errorf("%w: they closed at %s; ask the event's organizer", ErrRefundWindowClosed, w.Until.Format(time.RFC3339))
}

// insertRefund writes a refund begun, pending, with its lease: the request
// sends it to Payrail at once (one attempt counted).
func insertRefund(ctx context.Context, tx pgx.Tx, ref *OrderRefund, r refundStart) error {
	var by, key *string
	var hash []byte
	if r.by != "" {
		by = &r.by
	}
	if r.key != nil {
		key, hash = &r.key.key, r.key.hash
	}
	tag, err := tx.Exec(ctx, `
		INSERT INTO refunds (id, order_id, reason, ticket_ids, amount_cents, requested_by, request_key, request_hash,
		                     lease_until, attempts, next_attempt_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, now() + $9::bigint * interval '1 microsecond',
		        CASE WHEN $5::bigint > 0 THEN 1 ELSE 0 END, now() + interval '1 second')
		ON CONFLICT (requested_by, request_key) WHERE request_key IS NOT NULL DO NOTHING`,
		ref.ID, ref.OrderID, ref.Reason, ref.TicketIDs, ref.AmountCents, by, key, hash, micros(r.lease))
	if err == nil && tag.RowsAffected() == 0 {
		return errKeyTaken
	}
	ref.CreatedAt = time.Now().UTC()
	return err
}

// refundOfKey finds the refund a client's key wrote, with its request's hash.
func (s store) refundOfKey(ctx context.Context, by, key string) (OrderRefund, []byte, bool, error) {
	var hash []byte
	ref, err := scanRefund(s.db.QueryRow(ctx, `SELECT `+refundColumns+`, request_hash FROM refunds
		WHERE requested_by = $1 AND request_key = $2`, by, key), &hash)
	if errors.Is(err, pgx.ErrNoRows) {
		return OrderRefund{}, nil, false, nil
	}
	if err != nil {
		return OrderRefund{}, nil, false, fmt.Errorf("checkout: read refund of a key: %w", err)
	}
	return ref, hash, true, nil
}

const refundColumns = `id::text, order_id::text, reason, ticket_ids::text[], amount_cents, status, created_at, settled_at`

// scanRefund reads a row of refundColumns, then extra.
func scanRefund(row pgx.Row, extra ...any) (OrderRefund, error) {
	var r OrderRefund
	err := row.Scan(append([]any{&r.ID, &r.OrderID, &r.Reason, &r.TicketIDs, &r.AmountCents, &r.Status, &r.CreatedAt, &r.SettledAt}, extra...)...)
	r.CreatedAt = r.CreatedAt.UTC()
	if r.SettledAt != nil {
		t := r.SettledAt.UTC()
		r.SettledAt = &t
	}
	return r, err
}

// settleRefund writes Payrail's answer to a pending refund in one
// transaction: succeeded (refused nil; payrailID names Payrail's refund, ""
// for a refund of nothing) with its tickets refunded, their seats back on
// sale and its order's refunded_cents and status; or failed, its tickets
// valid again. errNotPending when it was settled already.
func (s store) settleRefund(ctx context.Context, refundID, payrailID string, refused error) error {
	return s.inTx(ctx, func(tx pgx.Tx) error {
		_, err := settleRefundIn(ctx, tx, refundID, payrailID, refused)
		return err
	})
}

// settleRefundIn is settleRefund's work, in tx; it returns the refund's
// reason. It locks the refund's order first, as a refund's beginning does,
// so that the two never deadlock on the tickets.
func settleRefundIn(ctx context.Context, tx pgx.Tx, refundID, payrailID string, refused error) (string, error) {
	if _, err := tx.Exec(ctx, `SELECT FROM orders WHERE id = (SELECT order_id FROM refunds WHERE id = $1) FOR UPDATE`, refundID); err != nil {
		return "", err
	}
	status, lastError := RefundSucceeded, ""
	if refused != nil {
		status, lastError = RefundFailed, refused.Error()
	}
	var orderID, reason string
	var ticketIDs []string
	var amount int64
	err := tx.QueryRow(ctx, `
		UPDATE refunds SET status = $2, payrail_refund_id = NULLIF($3, ''), last_error = NULLIF($4, ''),
		                   settled_at = now(), lease_until = NULL
		WHERE id = $1 AND status = 'pending'
		RETURNING order_id::text, ticket_ids::text[], amount_cents, reason`, refundID, status, payrailID, lastError).
		Scan(&orderID, &ticketIDs, &amount, &reason)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", errNotPending
	}
	if err != nil {
		return "", err
	}
	held, err := scan.EndRefund(ctx, tx, ticketIDs, refused == nil)
	if err != nil || refused != nil {
		return reason, err
	}
	return reason, refunded(ctx, tx, orderID, amount, held)
}

// refunded records money and tickets given back on their order, in tx: the
// seats of the tickets refunded go back on sale, refunded_cents grows by
// amount, the order is refunded once all its money is back and none of its
// tickets admits (else partially_refunded), and the buyer's notice is
// written.
func refunded(ctx context.Context, tx pgx.Tx, orderID string, amount int64, tickets []scan.Held) error {
	seats, ticketIDs := make([]string, len(tickets)), make([]string, len(tickets))
	for i, t := range tickets {
		seats[i], ticketIDs[i] = t.SeatID, t.ID
	}
	if err := notifyRefunded(ctx, tx, orderID, ticketIDs, amount); err != nil {
		return err
	}
	if _, err := hold.Resell(ctx, tx, seats); err != nil {
		return err
	}
	live, err := scan.LiveTickets(ctx, tx, orderID)
	if err != nil {
		return err
	}
	_, err = tx.Exec(ctx, `
		UPDATE orders SET refunded_cents = refunded_cents + $2,
		       status = CASE WHEN $3 AND refunded_cents + $2 >= total_cents THEN 'refunded' ELSE 'partially_refunded' END,
		       refunded_at = CASE WHEN $3 AND refunded_cents + $2 >= total_cents THEN now() END
		WHERE id = $1 AND status IN ('confirmed', 'partially_refunded')`, orderID, amount, live == 0)
	return err
}

// refundUnanswered notes that Payrail's answer to a refund is unknown (or
// could not be written): its lease ends, so that the refund pass takes it
// when its next attempt is due. A failure here only delays that until the
// lease lapses.
func (s store) refundUnanswered(ctx context.Context, refundID string, cause error) {
	_, _ = s.db.Exec(ctx, `UPDATE refunds SET lease_until = NULL, last_error = $2 WHERE id = $1 AND status = 'pending'`,
		refundID, cause.Error())
}

// dueRefunds claims up to limit pending refunds whose attempt is due and on
// which no request works, oldest first: each gets a lease, one more attempt
// counted, and its next attempt put off (1 s, doubling, at most a minute).
// It returns them with the charges to refund.
func (s store) dueRefunds(ctx context.Context, limit int, lease time.Duration) ([]OrderRefund, []string, error) {
	rows, err := s.db.Query(ctx, `
		WITH due AS (
		    SELECT id FROM refunds
		    WHERE status = 'pending' AND (lease_until IS NULL OR lease_until < now())
		      AND (next_attempt_at IS NULL OR next_attempt_at <= now())
		    ORDER BY created_at LIMIT $1 FOR UPDATE SKIP LOCKED
		), claimed AS (
		    UPDATE refunds r SET attempts = r.attempts + 1, lease_until = now() + $2::bigint * interval '1 microsecond',
		           next_attempt_at = now() + least(interval '1 second' * power(2, least(r.attempts, 6)), interval '1 minute')
		    FROM due WHERE r.id = due.id
		    RETURNING r.*
		)
		SELECT c.id::text, c.order_id::text, c.reason, c.ticket_ids::text[], c.amount_cents, c.status, c.created_at, c.settled_at,
		       coalesce(o.charge_id, '')
		FROM claimed c JOIN orders o ON o.id = c.order_id
		ORDER BY c.created_at`, limit, micros(lease))
	if err != nil {
		return nil, nil, fmt.Errorf("checkout: claim due refunds: %w", err)
	}
	var refs []OrderRefund
	var charges []string
	for rows.Next() {
		var charge string
		ref, err := scanRefund(rows, &charge)
		if err != nil {
			rows.Close()
			return nil, nil, fmt.Errorf("checkout: claim due refunds: %w", err)
		}
		refs, charges = append(refs, ref), append(charges, charge)
	}
	if err := rows.Err(); err != nil {
		return nil, nil, fmt.Errorf("checkout: claim due refunds: %w", err)
	}
	return refs, charges, nil
}

// refundsOf reads the refunds of orders, oldest first, by order.
func (s store) refundsOf(ctx context.Context, orderIDs []string) (map[string][]OrderRefund, error) {
	out := map[string][]OrderRefund{}
	if len(orderIDs) == 0 {
		return out, nil
	}
	rows, err := s.db.Query(ctx, `SELECT `+refundColumns+` FROM refunds WHERE order_id = ANY($1::uuid[])
		ORDER BY created_at, id`, orderIDs)
	if err != nil {
		return nil, fmt.Errorf("checkout: read refunds: %w", err)
	}
	refs, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (OrderRefund, error) { return scanRefund(row) })
	if err != nil {
		return nil, fmt.Errorf("checkout: read refunds: %w", err)
	}
	for _, r := range refs {
		out[r.OrderID] = append(out[r.OrderID], r)
	}
	return out, nil
}
