// Package boxoffice is the organizer's box office: an event's orders, each
// with its buyer's email and its tickets, a page at a time, the event's
// attendee list as CSV (csv.go), and its sales at a glance (sales.go).
//
// It owns no table and has no SQL: it reads each table through its owner
// (events through internal/event, orders internal/checkout, tickets
// internal/scan, accounts internal/auth, seats internal/hold; docs/design.md, "Where each rule
// lives") and keeps the rules that are its own: only an event's organizer
// reads these (anyone else: errkind.NotFound, as if there were no event), how
// the owners' answers are put together, and what a spreadsheet must not take
// for a formula.
package boxoffice

import (
	"context"

	"github.com/stagedoor/stagedoor/internal/checkout"
	"github.com/stagedoor/stagedoor/internal/errkind"
	"github.com/stagedoor/stagedoor/internal/event"
	"github.com/stagedoor/stagedoor/internal/hold"
	"github.com/stagedoor/stagedoor/internal/scan"
)

// Events tells who organizes an event (*event.Service).
type Events interface {
	Info(ctx context.Context, eventID string) (event.Info, error)
}

// Orders reads an event's orders (*checkout.Service).
type Orders interface {
	EventOrders(ctx context.Context, eventID string, limit int, after string) (checkout.OrderPage, error)
	Sales(ctx context.Context, eventID string) (checkout.OrderSales, error)
}

// Tickets reads orders' tickets and an event's attendees (*scan.Service).
type Tickets interface {
	TicketsOfOrders(ctx context.Context, orderIDs []string) ([]scan.OrderTicket, error)
	Attendees(ctx context.Context, eventID string, each func(scan.Attendee) error) error
	CheckIns(ctx context.Context, eventID string) (scan.CheckIns, error)
}

// Seats reads how an event's seats stand, by section (*hold.Service).
type Seats interface {
	SalesBySection(ctx context.Context, eventID string) (map[string]hold.SectionSales, error)
}

// Accounts reads accounts' emails (*auth.Service).
type Accounts interface {
	Emails(ctx context.Context, accountIDs []string) (map[string]string, error)
}

// Service answers an event's organizer about its orders and attendees.
type Service struct {
	events   Events
	orders   Orders
	tickets  Tickets
	accounts Accounts
	seats    Seats
}

// New returns a Service reading through the tables' owners.
func New(events Events, orders Orders, tickets Tickets, accounts Accounts, seats Seats) *Service {
	return &Service{events: events, orders: orders, tickets: tickets, accounts: accounts, seats: seats}
}

// Order is an order as its event's organizer sees it: the order (its own
// Tickets left empty), its buyer's email, and its tickets.
type Order struct {
	checkout.Order
	BuyerEmail string
	Tickets    []Ticket
}

// Ticket is a ticket of an order, as its event's organizer sees it (never its
// code, which admits at the door).
type Ticket struct {
	ID        string
	Reference string // its short reference, which the door can type
	Seat      scan.Seat
	Status    string // valid, scanned, refund_pending, refunded or transferred (checkout.Ticket's)
	// HolderEmail is who holds it: the order's buyer, or whom it was
	// transferred to.
	HolderEmail string
}

// Page is a page of an event's orders, newest first; NextAfter, when not
// empty, is the after of the next (older) page.
type Page struct {
	Orders    []Order
	NextAfter string
}

// errNoEvent: no event of this organizer has the id.
var errNoEvent = errkind.NotFoundf("no such event of yours")

// organizers checks that the event is the organizer's.
func (s *Service) organizers(ctx context.Context, organizerID, eventID string) error {
	info, err := s.events.Info(ctx, eventID)
	if err != nil {
		return err
	}
	if info.OrganizerID != organizerID {
		return errNoEvent
	}
	return nil
}

// Orders returns a page of the organizer's event's orders, newest first (see
// checkout.Service.EventOrders for limit and after, and which orders), each
// with its buyer's email and its tickets by seat, those transferred included.
// errkind.NotFound for an event that is not the organizer's.
func (s *Service) Orders(ctx context.Context, organizerID, eventID string, limit int, after string) (Page, error) {
	if err := s.organizers(ctx, organizerID, eventID); err != nil {
		return Page{}, err
	}
	page, err := s.orders.EventOrders(ctx, eventID, limit, after)
	if err != nil || len(page.Orders) == 0 {
		return Page{Orders: []Order{}, NextAfter: page.NextAfter}, err
	}
	orderIDs := make([]string, len(page.Orders))
	accountIDs := make([]string, 0, len(page.Orders))
	for i, o := range page.Orders {
		orderIDs[i] = o.ID
		accountIDs = append(accountIDs, o.BuyerID)
	}
	tickets, err := s.tickets.TicketsOfOrders(ctx, orderIDs)
	if err != nil {
		return Page{}, err
	}
	for _, t := range tickets {
		accountIDs = append(accountIDs, t.HolderID)
	}
	emails, err := s.accounts.Emails(ctx, accountIDs)
	if err != nil {
		return Page{}, err
	}
	byOrder := make(map[string][]scan.OrderTicket, len(orderIDs))
	for _, t := range tickets {
		byOrder[t.OrderID] = append(byOrder[t.OrderID], t)
	}
	out := Page{Orders: make([]Order, len(page.Orders)), NextAfter: page.NextAfter}
	for i, o := range page.Orders {
		out.Orders[i] = Order{Order: o, BuyerEmail: emails[o.BuyerID], Tickets: make([]Ticket, 0, len(byOrder[o.ID]))}
		for _, t := range byOrder[o.ID] {
			status := checkout.Ticket{Ticket: t.Ticket}.Status()
			out.Orders[i].Tickets = append(out.Orders[i].Tickets,
				Ticket{ID: t.ID, Reference: t.Reference, Seat: t.Seat, Status: status, HolderEmail: emails[t.HolderID]})
		}
	}
	return out, nil
}
