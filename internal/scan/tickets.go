package scan

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// The tickets table is this package's: a ticket is issued by internal/checkout
// in the transaction that confirms its order (IssueTickets), admitted here (a
// scan), revoked here (by its organizer), and refunded in
// internal/checkout's transactions (refund.go).

// NewTicket is a ticket to issue: one seat of a confirmed order.
type NewTicket struct {
	ID     string
	SeatID string
	Code   string // its door code: signed (ticketsign) or 160 random bits
	// Reference is its short reference (reference.go), drawn as it is issued.
	Reference string
}

// Ticket is an issued ticket, as its holder lists it.
type Ticket struct {
	ID      string
	OrderID string
	EventID string
	SeatID  string
	Section string // its seat's section
	// GeneralAdmission: its seat is a place of general admission, which has no
	// row or number a buyer is shown.
	GeneralAdmission bool
	Code             string
	Reference        string // its short reference, as stored (ShowReference groups it)
	ScannedAt        *time.Time
	Revoked          bool // by its organizer, because it was refunded, or transferred
	// Transferred: its holder gave it to another buyer (Transfer), who holds
	// a new ticket for its seat; it admits no one and its code is void.
	Transferred bool
	// RefundStatus is RefundPending while a refund of it waits for Payrail,
	// Refunded once refunded, "" otherwise.
	RefundStatus string
}

// The refund states of a ticket (Ticket.RefundStatus).
const (
	RefundPending = "pending"
	Refunded      = "refunded"
)

// IssueTickets issues the tickets of the order in tx, the caller's:
// internal/checkout issues them in the transaction that confirms the order and
// sells its seats. It draws each ticket's reference and sets it in tickets.
func IssueTickets(ctx context.Context, tx pgx.Tx, orderID, buyerID, eventID string, tickets []NewTicket) error {
	rows := make([]newTicketRow, len(tickets))
	for i, t := range tickets {
		rows[i] = newTicketRow{NewTicket: t}
	}
	if err := insertTickets(ctx, tx, orderID, buyerID, eventID, rows); err != nil {
		return fmt.Errorf("scan: issue the tickets of order %s: %w", orderID, err)
	}
	for i := range tickets {
		tickets[i].Reference = rows[i].Reference
	}
	return nil
}

// Querier is a pool or a transaction.
type Querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// TicketsOf returns the buyer's tickets, oldest first; only those of orderID
// when it is not empty.
func TicketsOf(ctx context.Context, q Querier, buyerID, orderID string) ([]Ticket, error) {
	tickets, err := ticketsOf(ctx, q, buyerID, orderID)
	if err != nil {
		return nil, fmt.Errorf("scan: list tickets: %w", err)
	}
	return tickets, nil
}

// OrderTicket is a ticket as its event's organizer lists it: with its
// holder (the order's buyer, or whom it was transferred to) and its seat.
type OrderTicket struct {
	Ticket
	HolderID string
	Seat     Seat
}

// TicketsOfOrders returns the tickets of the orders, those transferred
// included, by order, then seat (as on the seat map), then issue.
func (s *Service) TicketsOfOrders(ctx context.Context, orderIDs []string) ([]OrderTicket, error) {
	return s.store.ticketsOfOrders(ctx, orderIDs)
}

// Attendee is a ticket that admits, as its event's organizer exports it.
type Attendee struct {
	TicketID    string
	OrderID     string
	HolderEmail string // its holder's: the buyer, or whom it was transferred to
	Seat        Seat   // a place of general admission has no row
	ScannedAt   *time.Time
}

// Attendees calls each for every live ticket of the event (neither revoked,
// transferred nor being refunded: valid, or scanned already), in seat order, as one
// statement reads them: one snapshot of the list however long it takes to
// send, never the whole list in memory. It stops at the first error of each,
// and returns it.
func (s *Service) Attendees(ctx context.Context, eventID string, each func(Attendee) error) error {
	if err := s.store.attendees(ctx, eventID, each); err != nil {
		return fmt.Errorf("scan: the attendees of event %s: %w", eventID, err)
	}
	return nil
}
