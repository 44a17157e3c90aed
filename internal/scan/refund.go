package scan

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/stagedoor/stagedoor/internal/errkind"
	"github.com/stagedoor/stagedoor/internal/mail"
)

// A refund of tickets is internal/checkout's, run in its transactions; the
// tickets' side of it is here, because an admission is one conditional write
// of the ticket's row:
//
//	valid ──HoldForRefund──▶ refund_pending ──EndRefund(refunded)──▶ refunded (revoked, listed for the doors)
//	                                        ──EndRefund(not)──────▶ valid again
//
// A ticket pending a refund admits no one (the admission's write skips it, as
// it skips a revoked one) and cannot be refunded again; a scanned one cannot
// be held for a refund (unless a cancellation refunds it). The two writes
// lock the ticket's row, so a refund and a scan racing for one ticket are
// decided by whichever takes the row first: exactly one wins.

// ErrNotRefundable is what a *NotRefundableError is: some tickets asked for
// cannot be refunded, and nothing was held.
var ErrNotRefundable = errors.New("the tickets cannot be refunded")

// NotRefundableError lists the tickets asked for that cannot be refunded, and
// why, in words for the buyer.
type NotRefundableError struct {
	TicketIDs []string
	Reasons   []string // one a ticket, in the same order
}

func (e *NotRefundableError) Error() string {
	if len(e.TicketIDs) == 0 {
		return ErrNotRefundable.Error() + ": no ticket of the order is left to refund; nothing was refunded"
	}
	parts := make([]string, len(e.TicketIDs))
	for i, id := range e.TicketIDs {
		parts[i] = id + " " + e.Reasons[i]
	}
	return ErrNotRefundable.Error() + ": " + strings.Join(parts, "; ") + "; nothing was refunded"
}

// Is makes errors.Is(err, ErrNotRefundable) true.
func (e *NotRefundableError) Is(target error) bool { return target == ErrNotRefundable }

// RefundRule says which of an order's tickets a refund may take.
type RefundRule struct {
	// Holder, when set, is the only account whose tickets may be refunded:
	// the order's buyer cannot refund a ticket that moved to someone else.
	Holder string
	// Scanned lets a scanned ticket be refunded: an event's cancellation
	// gives every ticket's money back, the door's admissions too.
	Scanned bool
}

// Held is a ticket held for a refund: its seat goes back on sale when the
// refund succeeds.
type Held struct {
	ID, SeatID string
}

// HoldForRefund holds the order's tickets for a refund, in tx, the caller's:
// those of ticketIDs, every one of which must be refundable by rule, or, when
// ticketIDs is empty, every ticket of the order that is. A ticket is
// refundable when it is live (neither revoked nor pending a refund), not
// scanned (unless rule.Scanned) and held by rule.Holder (when set). It returns
// the tickets held, in id order, or a *NotRefundableError (errors.Is
// ErrNotRefundable) when some ticket asked for, or every one of the order,
// cannot be refunded; an id that is no ticket of the order is an
// errkind.Invalid error. Nothing is held when it fails.
func HoldForRefund(ctx context.Context, tx pgx.Tx, orderID string, ticketIDs []string, rule RefundRule) ([]Held, error) {
	rows, err := tx.Query(ctx, `
		SELECT id::text, seat_id::text, buyer_id::text, scanned_at IS NOT NULL, revoked_at IS NOT NULL, coalesce(refund_status, '')
		FROM tickets WHERE order_id = $1 AND (coalesce(cardinality($2::uuid[]), 0) = 0 OR id = ANY($2::uuid[]))
		ORDER BY id FOR UPDATE`, orderID, ticketIDs)
	if err != nil {
		return nil, fmt.Errorf("scan: hold tickets for a refund: %w", err)
	}
	type row struct {
		held             Held
		holder           string
		scanned, revoked bool
		refund           string
	}
	found, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (row, error) {
		var t row
		err := r.Scan(&t.held.ID, &t.held.SeatID, &t.holder, &t.scanned, &t.revoked, &t.refund)
		return t, err
	})
	if err != nil {
		return nil, fmt.Errorf("scan: hold tickets for a refund: %w", err)
	}
	for _, id := range ticketIDs {
		if !slices.ContainsFunc(found, func(t row) bool { return t.held.ID == id }) {
			return nil, errkind.Invalidf("ticket_ids lists %s, which is no ticket of this order", id)
		}
	}
	var held []Held
	refused := &NotRefundableError{}
	for _, t := range found {
		reason := ""
		switch {
		case t.refund == "refunded":
			reason = "is refunded already"
		case t.refund == "pending":
			reason = "is being refunded already"
		case t.revoked:
			reason = "was revoked or given to someone else"
		case t.scanned && !rule.Scanned:
			reason = "was scanned at the door"
		case rule.Holder != "" && t.holder != rule.Holder:
			reason = "was given to someone else"
		}
		if reason == "" {
			held = append(held, t.held)
			continue
		}
		refused.TicketIDs, refused.Reasons = append(refused.TicketIDs, t.held.ID), append(refused.Reasons, reason)
	}
	if len(held) == 0 || len(ticketIDs) > 0 && len(refused.TicketIDs) > 0 {
		if len(ticketIDs) == 0 {
			refused = &NotRefundableError{} // the order's own tickets: say it whole
		}
		return nil, refused
	}
	heldIDs := make([]string, len(held))
	for i, h := range held {
		heldIDs[i] = h.ID
	}
	if _, err := tx.Exec(ctx, `UPDATE tickets SET refund_status = 'pending' WHERE id = ANY($1::uuid[])`, heldIDs); err != nil {
		return nil, fmt.Errorf("scan: hold tickets for a refund: %w", err)
	}
	return held, nil
}

// EndRefund ends the refund of tickets HoldForRefund held, in tx, the
// caller's: refunded, they are revoked (admitting no one online at once, and
// offline once a door has synced the revocations list) and marked refunded;
// otherwise they are valid again. Tickets not pending a refund are left as
// they are. It returns the tickets it refunded.
func EndRefund(ctx context.Context, tx pgx.Tx, ticketIDs []string, refunded bool) ([]Held, error) {
	if !refunded {
		_, err := tx.Exec(ctx, `
			UPDATE tickets SET refund_status = NULL WHERE id = ANY($1::uuid[]) AND refund_status = 'pending'`, ticketIDs)
		if err != nil {
			return nil, fmt.Errorf("scan: end the refund of tickets: %w", err)
		}
		return nil, nil
	}
	return refundTickets(ctx, tx, `id = ANY($1::uuid[]) AND refund_status = 'pending'`, ticketIDs)
}

// refundTickets marks the tickets where says refunded and revoked, lists
// their revocations, and returns them.
func refundTickets(ctx context.Context, tx pgx.Tx, where string, arg any) ([]Held, error) {
	rows, err := tx.Query(ctx, `
		WITH refunded AS (
		    UPDATE tickets SET refund_status = 'refunded', revoked_at = now()
		    WHERE `+where+`
		    RETURNING id, event_id, seat_id
		), listed AS (
		    INSERT INTO ticket_revocations (ticket_id, event_id) SELECT id, event_id FROM refunded
		)
		SELECT id::text, seat_id::text FROM refunded ORDER BY id`, arg)
	if err != nil {
		return nil, fmt.Errorf("scan: refund tickets: %w", err)
	}
	held, err := pgx.CollectRows(rows, pgx.RowToStructByPos[Held])
	if err != nil {
		return nil, fmt.Errorf("scan: refund tickets: %w", err)
	}
	return held, nil
}

// RefundOrder refunds every live ticket of the order at once, in tx, the
// caller's, whatever its state (scanned, or pending a refund of its own that
// this overtakes): a refund of the whole charge made at Payrail by someone
// else. It returns the tickets it refunded.
func RefundOrder(ctx context.Context, tx pgx.Tx, orderID string) ([]Held, error) {
	return refundTickets(ctx, tx, `order_id = $1 AND revoked_at IS NULL`, orderID)
}

// LiveTickets counts the order's tickets that are not revoked, in tx.
func LiveTickets(ctx context.Context, tx pgx.Tx, orderID string) (int, error) {
	var n int
	if err := tx.QueryRow(ctx, `SELECT count(*) FROM tickets WHERE order_id = $1 AND revoked_at IS NULL`, orderID).Scan(&n); err != nil {
		return 0, fmt.Errorf("scan: count the live tickets of order %s: %w", orderID, err)
	}
	return n, nil
}

// Described is what a message says of some tickets: their event and, for
// each, its seat or place (no code: the tickets a message describes this way
// admit no one any more).
type Described struct {
	Event   mail.Event
	Tickets []mail.Ticket
}

// Describe reads the tickets' event and seats through q (a pool, or the
// caller's transaction: internal/checkout writes a refund's notice in the
// transaction that refunds it), in seat order. The tickets are of one event;
// none is an empty Described.
func Describe(ctx context.Context, q Querier, ticketIDs []string) (Described, error) {
	var d Described
	rows, err := q.Query(ctx, `
		SELECT t.id::text, e.id::text, e.name, e.venue, e.starts_at, s.section, s.row_label, s.number
		FROM tickets t JOIN events e ON e.id = t.event_id JOIN seats s ON s.id = t.seat_id
		WHERE t.id = ANY($1::uuid[]) ORDER BY s.position, t.id`, ticketIDs)
	if err != nil {
		return d, fmt.Errorf("scan: describe tickets: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var t mail.Ticket
		if err := rows.Scan(&t.ID, &d.Event.ID, &d.Event.Name, &d.Event.Venue, &d.Event.StartsAt, &t.Section, &t.Row, &t.Number); err != nil {
			return d, fmt.Errorf("scan: describe tickets: %w", err)
		}
		t.GeneralAdmission = t.Row == ""
		d.Tickets = append(d.Tickets, t)
	}
	d.Event.StartsAt = d.Event.StartsAt.UTC()
	return d, rows.Err()
}
