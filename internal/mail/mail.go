// Package mail sends Stagedoor's e-mail through an outbox. A notice (an order
// confirmed, a refund, a ticket transferred, an event cancelled) is written to
// the outbox by Enqueue in the caller's transaction, the one that makes what it
// announces, so that a notice exists exactly when its cause committed. A
// Sender, on one instance at a time, sends what is due in order, retrying with
// backoff while the mail server is away: the caller never waits for the mail
// server nor fails because of it.
//
// It owns the table mail_outbox and reads no other. The notices are plain
// structs filled by their callers (internal/checkout and the others), so that
// this package imports no domain package and any of them can import it.
package mail

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/stagedoor/stagedoor/internal/ids"
)

// The kinds of message, as the outbox's kind column names them.
const (
	KindOrderConfirmed = "order_confirmed" // OrderConfirmed, to the buyer
	KindRefunded       = "refunded"        // Refunded, to the buyer
	KindTicketGiven    = "ticket_given"    // TicketTransferred, to the giver
	KindTicketReceived = "ticket_received" // TicketTransferred, to the receiver
	KindEventCancelled = "event_cancelled" // EventCancelled, to each buyer
)

// Recipient is who a message goes to (or who gave a ticket).
type Recipient struct {
	Name  string `json:"name"`
	Email string `json:"email"`
}

// Event is the event a notice is about, as the message shows it.
type Event struct {
	ID       string    `json:"id"`
	Name     string    `json:"name"`
	Venue    string    `json:"venue"`
	StartsAt time.Time `json:"starts_at"`
}

// Ticket is one ticket as a message shows it: its seat (Section, Row, Number)
// or its place of general admission (GeneralAdmission, Section), and its code.
type Ticket struct {
	ID               string `json:"id"`
	Section          string `json:"section"`
	Row              string `json:"row,omitempty"`
	Number           int    `json:"number,omitempty"`
	GeneralAdmission bool   `json:"general_admission,omitempty"`
	// Code is the ticket's door code, shown as text and as a QR image where
	// the recipient holds the ticket (OrderConfirmed, the receiver's
	// TicketTransferred); the other messages never show it, given or not.
	Code string `json:"code,omitempty"`
	// Reference is the ticket's short reference as people read it
	// (7KQ4-M2X9-PA), shown with its code: the door can type it.
	Reference string `json:"reference,omitempty"`
}

// OrderConfirmed tells a buyer that their order is confirmed: every ticket
// with its seat or place, its code and its QR image.
type OrderConfirmed struct {
	To         Recipient `json:"to"`
	OrderID    string    `json:"order_id"`
	Event      Event     `json:"event"`
	Tickets    []Ticket  `json:"tickets"`
	TotalCents int64     `json:"total_cents"`
	Currency   string    `json:"currency"`
}

// Refunded tells a buyer that money of an order was returned: the amount and
// the tickets refunded, which no longer admit.
type Refunded struct {
	To          Recipient `json:"to"`
	OrderID     string    `json:"order_id"`
	Event       Event     `json:"event"`
	Tickets     []Ticket  `json:"tickets"`
	AmountCents int64     `json:"amount_cents"`
	Currency    string    `json:"currency"`
}

// TicketTransferred is two messages: to the giver (From), that the ticket is
// no longer theirs and its old code no longer admits; to the receiver (To),
// the ticket with its new code and QR image.
type TicketTransferred struct {
	From   Recipient `json:"from"`
	To     Recipient `json:"to"`
	Event  Event     `json:"event"`
	Ticket Ticket    `json:"ticket"` // the new ticket, with its new code
}

// EventCancelled tells a buyer that an event is cancelled and how much of
// their order will be refunded.
type EventCancelled struct {
	To          Recipient `json:"to"`
	OrderID     string    `json:"order_id"`
	Event       Event     `json:"event"`
	RefundCents int64     `json:"refund_cents"`
	Currency    string    `json:"currency"`
}

// Notice is what Enqueue writes: an OrderConfirmed, Refunded,
// TicketTransferred or EventCancelled.
type Notice interface {
	letters() []letter
}

// letter is one message of a notice: its kind and its recipient.
type letter struct {
	kind string
	to   Recipient
}

func (n OrderConfirmed) letters() []letter { return []letter{{KindOrderConfirmed, n.To}} }
func (n Refunded) letters() []letter       { return []letter{{KindRefunded, n.To}} }
func (n EventCancelled) letters() []letter { return []letter{{KindEventCancelled, n.To}} }
func (n TicketTransferred) letters() []letter {
	return []letter{{KindTicketGiven, n.From}, {KindTicketReceived, n.To}}
}

// Enqueue writes the notice's messages to the outbox in tx, the caller's, so
// that they are sent exactly when tx commits (and never when it rolls back).
// It fails only when the database does: a notice that cannot be sent (no
// address, say) is written anyway and given up by the Sender, so that no
// e-mail can stop what it announces.
func Enqueue(ctx context.Context, tx pgx.Tx, n Notice) error {
	body, err := json.Marshal(n)
	if err != nil {
		return fmt.Errorf("mail: enqueue: %w", err)
	}
	for _, l := range n.letters() {
		if err := insert(ctx, tx, ids.New(), l.kind, l.to.Email, body); err != nil {
			return fmt.Errorf("mail: enqueue %s: %w", l.kind, err)
		}
	}
	return nil
}
