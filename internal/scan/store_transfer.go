package scan

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/stagedoor/stagedoor/internal/auth"
	"github.com/stagedoor/stagedoor/internal/errkind"
	"github.com/stagedoor/stagedoor/internal/mail"
)

// The SQL of transfers (transfer.go has the rules).

// eventOfTicket reads the event of the holder's ticket, or errNoTicket. A
// ticket's holder and event never change, so it needs no lock.
func (s store) eventOfTicket(ctx context.Context, holderID, ticketID string) (string, error) {
	var eventID string
	err := s.db.QueryRow(ctx, `SELECT event_id::text FROM tickets WHERE id = $1 AND buyer_id = $2`,
		ticketID, holderID).Scan(&eventID)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", errNoTicket
	}
	if err != nil {
		return "", fmt.Errorf("scan: read ticket %s: %w", ticketID, err)
	}
	return eventID, nil
}

// transfer moves the holder's ticket to the buyer with email in one
// transaction, issuing next (its id and code) for the ticket's seat and order,
// and writes the notices to the giver and the receiver (internal/mail) in it.
// The ticket's row is locked by the first statement, which reads its event
// and seat for the notices too.
func (s store) transfer(ctx context.Context, holderID, ticketID, email string, next NewTicket) (Transferred, error) {
	var out Transferred
	err := pgx.BeginFunc(ctx, s.db, func(tx pgx.Tx) error {
		old := Ticket{ID: ticketID}
		var transferred bool
		var ev mail.Event
		var seat Seat
		err := tx.QueryRow(ctx, `
			SELECT t.order_id::text, t.event_id::text, t.seat_id::text, t.scanned_at,
			       t.revoked_at IS NOT NULL OR t.refund_status IS NOT NULL,
			       t.transferred_at IS NOT NULL, t.reference, e.name, e.venue, e.starts_at, s.section, s.row_label, s.number
			FROM tickets t JOIN events e ON e.id = t.event_id JOIN seats s ON s.id = t.seat_id
			WHERE t.id = $1 AND t.buyer_id = $2 FOR UPDATE OF t`, ticketID, holderID).
			Scan(&old.OrderID, &old.EventID, &old.SeatID, &old.ScannedAt, &old.Revoked, &transferred, &old.Reference,
				&ev.Name, &ev.Venue, &ev.StartsAt, &seat.Section, &seat.Row, &seat.Number)
		if errors.Is(err, pgx.ErrNoRows) {
			return errNoTicket
		}
		if err != nil {
			return err
		}
		switch {
		case transferred:
			return &NotTransferableError{TicketID: ticketID, Reason: ReasonTransferred}
		case old.ScannedAt != nil:
			return &NotTransferableError{TicketID: ticketID, Reason: ReasonScanned}
		case old.Revoked:
			return &NotTransferableError{TicketID: ticketID, Reason: ReasonRevoked}
		}
		receiver, err := auth.BuyerByEmail(ctx, tx, email)
		if err != nil {
			return err
		}
		if receiver.ID == holderID {
			return errkind.Invalidf("the ticket is yours already: give the email of the buyer it goes to")
		}
		var at time.Time
		if err := tx.QueryRow(ctx, `
			UPDATE tickets SET revoked_at = now(), transferred_at = now(), transferred_to = $2
			WHERE id = $1 RETURNING transferred_at`, ticketID, receiver.ID).Scan(&at); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO ticket_revocations (ticket_id, event_id) VALUES ($1, $2)`,
			ticketID, old.EventID); err != nil {
			return err
		}
		// A new reference, as a new code: the old one admits no one.
		issued := []newTicketRow{{NewTicket: NewTicket{ID: next.ID, SeatID: old.SeatID, Code: next.Code}, TransferredFrom: ticketID}}
		if err := insertTickets(ctx, tx, old.OrderID, receiver.ID, old.EventID, issued); err != nil {
			return err
		}
		next.Reference = issued[0].Reference
		giver, err := auth.AccountByID(ctx, tx, holderID)
		if err != nil {
			return err
		}
		ev.ID = old.EventID
		if err := mail.Enqueue(ctx, tx, mail.TicketTransferred{
			From: mail.Recipient{Name: giver.Name, Email: giver.Email}, To: mail.Recipient{Name: receiver.Name, Email: receiver.Email},
			Event: ev, Ticket: mail.Ticket{ID: next.ID, Section: seat.Section, Row: seat.Row, Number: seat.Number,
				GeneralAdmission: seat.Row == "", Code: next.Code, Reference: ShowReference(next.Reference)},
		}); err != nil {
			return err
		}
		old.Revoked, old.Transferred = true, true
		old.Section, old.GeneralAdmission = seat.Section, seat.Row == ""
		out = Transferred{Old: old, GiverID: holderID, ReceiverID: receiver.ID, ReceiverEmail: receiver.Email, At: at,
			New: Ticket{ID: next.ID, OrderID: old.OrderID, EventID: old.EventID, SeatID: old.SeatID,
				Section: old.Section, GeneralAdmission: old.GeneralAdmission, Code: next.Code, Reference: next.Reference}}
		return nil
	})
	var refused *NotTransferableError
	switch {
	case err == nil:
		return out, nil
	case errors.As(err, &refused), errors.Is(err, errkind.NotFound), errors.Is(err, errkind.Invalid), errors.Is(err, auth.ErrNoSuchBuyer):
		return Transferred{}, err
	}
	return Transferred{}, fmt.Errorf("scan: transfer ticket %s: %w", ticketID, err)
}
