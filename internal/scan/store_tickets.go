package scan

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/stagedoor/stagedoor/internal/errkind"
)

// The SQL of tickets as issued, listed and revoked, and of the audit's purge
// (tickets.go and offline.go have the rules).

// ticketColumns are the columns of a Ticket (of tickets t joined with their
// seats s) a read selects, in the order of Ticket.fields.
const ticketColumns = `t.id::text, t.order_id::text, t.event_id::text, t.seat_id::text, s.section, s.row_label = '',
	t.code, t.reference, t.scanned_at, t.revoked_at IS NOT NULL, t.transferred_at IS NOT NULL, coalesce(t.refund_status, '')`

// fields are where a row of ticketColumns is read into.
func (t *Ticket) fields() []any {
	return []any{&t.ID, &t.OrderID, &t.EventID, &t.SeatID, &t.Section, &t.GeneralAdmission,
		&t.Code, &t.Reference, &t.ScannedAt, &t.Revoked, &t.Transferred, &t.RefundStatus}
}

// ticketsOf reads the buyer's tickets, oldest first; only those of orderID
// when it is not empty.
func ticketsOf(ctx context.Context, q Querier, buyerID, orderID string) ([]Ticket, error) {
	rows, err := q.Query(ctx, `
		SELECT `+ticketColumns+`
		FROM tickets t JOIN seats s ON s.id = t.seat_id
		WHERE t.buyer_id = $1 AND ($2 = '' OR t.order_id::text = $2)
		ORDER BY t.created_at, t.id`, buyerID, orderID)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (Ticket, error) {
		var t Ticket
		err := row.Scan(t.fields()...)
		return t, err
	})
}

// seatOrder orders the rows of tickets t joined with their seats s as the
// seat map does: by the seat's position in its event.
const seatOrder = `s.position`

// ticketsOfOrders reads the orders' tickets with their holders and seats, by
// order, then seat, then issue (a ticket transferred before its successor).
func (s store) ticketsOfOrders(ctx context.Context, orderIDs []string) ([]OrderTicket, error) {
	rows, err := s.db.Query(ctx, `
		SELECT `+ticketColumns+`, t.buyer_id::text, s.section, s.row_label, s.number
		FROM tickets t JOIN seats s ON s.id = t.seat_id
		WHERE t.order_id = ANY($1::uuid[])
		ORDER BY t.order_id, `+seatOrder+`, t.created_at`, orderIDs)
	if err != nil {
		return nil, fmt.Errorf("scan: list the orders' tickets: %w", err)
	}
	tickets, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (OrderTicket, error) {
		var t OrderTicket
		err := row.Scan(append(t.fields(), &t.HolderID, &t.Seat.Section, &t.Seat.Row, &t.Seat.Number)...)
		return t, err
	})
	if err != nil {
		return nil, fmt.Errorf("scan: list the orders' tickets: %w", err)
	}
	return tickets, nil
}

// attendees reads the event's live tickets with their holders' emails and
// their seats, and calls each for every one as it arrives.
func (s store) attendees(ctx context.Context, eventID string, each func(Attendee) error) error {
	rows, err := s.db.Query(ctx, `
		SELECT t.id::text, t.order_id::text, a.email, s.section, s.row_label, s.number, t.scanned_at
		FROM tickets t JOIN seats s ON s.id = t.seat_id JOIN accounts a ON a.id = t.buyer_id
		WHERE t.event_id = $1 AND t.revoked_at IS NULL AND t.refund_status IS NULL
		ORDER BY `+seatOrder, eventID)
	if err != nil {
		return err
	}
	var a Attendee
	_, err = pgx.ForEachRow(rows, []any{&a.TicketID, &a.OrderID, &a.HolderEmail, &a.Seat.Section, &a.Seat.Row, &a.Seat.Number, &a.ScannedAt},
		func() error { return each(a) })
	return err
}

// revoke revokes the organizer's ticket and lists its revocation, in one
// transaction; once only. errkind.NotFound for another organizer's ticket.
func (s store) revoke(ctx context.Context, organizerID, ticketID string) error {
	return pgx.BeginFunc(ctx, s.db, func(tx pgx.Tx) error {
		var eventID string
		var revoked bool
		err := tx.QueryRow(ctx, `
			SELECT t.event_id::text, t.revoked_at IS NOT NULL FROM tickets t JOIN events e ON e.id = t.event_id
			WHERE t.id = $1 AND e.organizer_id = $2 FOR UPDATE OF t`, ticketID, organizerID).Scan(&eventID, &revoked)
		if errors.Is(err, pgx.ErrNoRows) {
			return errkind.NotFoundf("no such ticket of yours")
		}
		if err != nil || revoked {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE tickets SET revoked_at = now() WHERE id = $1`, ticketID); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `INSERT INTO ticket_revocations (ticket_id, event_id) VALUES ($1, $2)`, ticketID, eventID)
		return err
	})
}

// revocations reads the revocations after the one numbered after that the
// scanner's key may see, at most limit.
func (s store) revocations(ctx context.Context, sc Scanner, after int64, limit int) ([]Revocation, error) {
	rows, err := s.db.Query(ctx, `
		SELECT r.id, r.ticket_id::text, r.event_id::text, r.revoked_at
		FROM ticket_revocations r JOIN events e ON e.id = r.event_id
		WHERE r.id > $1 AND e.organizer_id = $2 AND ($3::text = '' OR r.event_id = NULLIF($3::text, '')::uuid)
		ORDER BY r.id LIMIT $4`, after, sc.OrganizerID, sc.EventID, limit)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (Revocation, error) {
		var v Revocation
		err := r.Scan(&v.ID, &v.TicketID, &v.EventID, &v.RevokedAt)
		return v, err
	})
}

// purgeJunk deletes at most batch audit rows that name no ticket: those of no
// event first, then those older than retention.
func (s store) purgeJunk(ctx context.Context, batch int, retention time.Duration) (int64, error) {
	tag, err := s.db.Exec(ctx, `
		DELETE FROM scans WHERE id IN (
		    SELECT id FROM scans WHERE ticket_id IS NULL AND event_id IS NULL LIMIT $1)`, batch)
	if err != nil {
		return 0, fmt.Errorf("scan: purge scans of no event: %w", err)
	}
	n := tag.RowsAffected()
	if n >= int64(batch) {
		return n, nil
	}
	tag, err = s.db.Exec(ctx, `
		DELETE FROM scans WHERE id IN (
		    SELECT id FROM scans WHERE ticket_id IS NULL AND received_at < now() - make_interval(secs => $2)
		    ORDER BY received_at LIMIT $1)`, int64(batch)-n, retention.Seconds())
	if err != nil {
		return n, fmt.Errorf("scan: purge old scans of no ticket: %w", err)
	}
	return n + tag.RowsAffected(), nil
}

// listed reads the admitting tickets after the ticket id after that the
// scanner's key may see: of its event when bound, else of its organizer's.
func (s store) listed(ctx context.Context, sc Scanner, after string, limit int) ([]Listed, error) {
	rows, err := s.db.Query(ctx, `
		SELECT t.id::text, t.event_id::text, t.reference, s.section, s.row_label, s.number
		FROM tickets t JOIN events e ON e.id = t.event_id JOIN seats s ON s.id = t.seat_id
		WHERE e.organizer_id = $1 AND ($2::text = '' OR t.event_id = NULLIF($2::text, '')::uuid)
		  AND t.revoked_at IS NULL AND t.refund_status IS NULL
		  AND t.id > coalesce(NULLIF($3::text, '')::uuid, '00000000-0000-0000-0000-000000000000')
		ORDER BY t.id LIMIT $4`, sc.OrganizerID, sc.EventID, after, limit)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (Listed, error) {
		var l Listed
		err := r.Scan(&l.TicketID, &l.EventID, &l.Reference, &l.Seat.Section, &l.Seat.Row, &l.Seat.Number)
		return l, err
	})
}
