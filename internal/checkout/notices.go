package checkout

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/stagedoor/stagedoor/internal/auth"
	"github.com/stagedoor/stagedoor/internal/event"
	"github.com/stagedoor/stagedoor/internal/hold"
	"github.com/stagedoor/stagedoor/internal/mail"
	"github.com/stagedoor/stagedoor/internal/scan"
)

// notifyConfirmed writes the buyer's e-mail of a confirmed order (its
// tickets: seat or place, code, QR image, reference) to the outbox, in tx: the
// transaction that confirms the order, so that the e-mail goes out exactly
// when the order is confirmed. The buyer, the event and the seats are read
// through their owners (internal/auth, event, hold) in tx. Sending is
// internal/mail's Sender's, later: the checkout never waits for the mail
// server, nor fails because of it.
func notifyConfirmed(ctx context.Context, tx pgx.Tx, o Order) error {
	buyer, err := auth.AccountByID(ctx, tx, o.BuyerID)
	if err != nil {
		return err
	}
	ev, err := event.SummaryOf(ctx, tx, o.EventID)
	if err != nil {
		return err
	}
	seatIDs := make([]string, len(o.Tickets))
	for i, t := range o.Tickets {
		seatIDs[i] = t.SeatID
	}
	places, err := hold.PlacesOf(ctx, tx, seatIDs)
	if err != nil {
		return err
	}
	ticketOf := make(map[string]Ticket, len(o.Tickets))
	for _, t := range o.Tickets {
		ticketOf[t.SeatID] = t
	}
	tickets := make([]mail.Ticket, len(places)) // in the seat map's order
	for i, p := range places {
		t := ticketOf[p.SeatID]
		tickets[i] = mail.Ticket{ID: t.ID, Section: p.Section, Row: p.Row, Number: p.Number,
			GeneralAdmission: p.GeneralAdmission(), Code: t.Code, Reference: scan.ShowReference(t.Reference)}
	}
	return mail.Enqueue(ctx, tx, mail.OrderConfirmed{
		To:         mail.Recipient{Name: buyer.Name, Email: buyer.Email},
		OrderID:    o.ID,
		Event:      mail.Event{ID: ev.ID, Name: ev.Name, Venue: ev.Venue, StartsAt: ev.StartsAt},
		Tickets:    tickets,
		TotalCents: o.TotalCents,
		Currency:   o.Currency,
	})
}
