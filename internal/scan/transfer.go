package scan

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/stagedoor/stagedoor/internal/auth"
	"github.com/stagedoor/stagedoor/internal/errkind"
	"github.com/stagedoor/stagedoor/internal/ids"
)

// A transfer gives a ticket to another buyer. The ticket itself never changes
// hands: its row is revoked (listed in ticket_revocations, so that a door
// refuses its code online at once and offline once synced) and marked
// transferred, and a new ticket for the same seat and order is issued to the
// receiver, with a new id and a new signed code, in the same transaction. So
// the code its giver kept admits no one, and the door's formats (a code names
// its ticket, revocations are by ticket) stay as they are.

// Transfer asks to give the holder's ticket to the buyer with Email.
type Transfer struct {
	HolderID string // the buyer who holds the ticket
	TicketID string
	Email    string // the receiving buyer's, normalized as at signup
}

// Transferred is a transfer made.
type Transferred struct {
	// Old is the ticket as its giver lists it now: revoked and transferred,
	// without its code.
	Old Ticket
	// New is the receiver's ticket: the same seat, order and event, a new id
	// and a new code.
	New           Ticket
	GiverID       string
	ReceiverID    string
	ReceiverEmail string // normalized
	At            time.Time
}

// ErrNotTransferable: the ticket was scanned, transferred already or revoked
// (its order refunded, or by its organizer); only a valid ticket moves. A
// *NotTransferableError matches it and says which.
var ErrNotTransferable = errors.New("the ticket cannot be transferred")

// Why a ticket cannot be transferred: the Reason of a *NotTransferableError,
// the ticket_status member of its problem.
const (
	ReasonScanned     = "scanned"
	ReasonTransferred = "transferred"
	ReasonRevoked     = "revoked"
)

// NotTransferableError is a refused transfer of a ticket that is not valid.
type NotTransferableError struct {
	TicketID string
	Reason   string // ReasonScanned, ReasonTransferred or ReasonRevoked
}

func (e *NotTransferableError) Error() string {
	switch e.Reason {
	case ReasonScanned:
		return "the ticket was scanned at the door, so it cannot be transferred"
	case ReasonTransferred:
		return "the ticket was transferred already; it is no longer yours to give"
	}
	return "the ticket was revoked (its order refunded, or by its organizer) and admits no one, so it cannot be transferred"
}

// Is lets errors.Is match ErrNotTransferable.
func (e *NotTransferableError) Is(target error) bool { return target == ErrNotTransferable }

// errNoTicket: no ticket of this holder has the id (another buyer's is not
// revealed).
var errNoTicket = errkind.NotFoundf("no such ticket")

// Transfer gives the holder's ticket to the buyer account with t.Email, as one
// transaction: the ticket row locked and checked (valid: not scanned, not
// revoked, not transferred), the receiver looked up through internal/auth in
// the same transaction, the old ticket revoked and marked transferred, its
// revocation listed, the new ticket issued, and the notices to the giver and
// the receiver written to the outbox (internal/mail). Of many transfers and scans of
// one ticket at once, exactly one succeeds: each waits for the row's lock and
// reads it again.
//
// Errors, each changing nothing: errkind.Invalid for a malformed email or the
// holder's own; errkind.NotFound for a ticket that is not the holder's;
// auth.ErrNoSuchBuyer for an email of no buyer account (an organizer's
// included); a *NotTransferableError (ErrNotTransferable).
func (s *Service) Transfer(ctx context.Context, t Transfer) (Transferred, error) {
	ticketID, ok := ids.Parse(t.TicketID)
	if !ok {
		return Transferred{}, errNoTicket
	}
	email, err := auth.ParseEmail(t.Email)
	if err != nil {
		return Transferred{}, err
	}
	eventID, err := s.store.eventOfTicket(ctx, t.HolderID, ticketID)
	if err != nil {
		return Transferred{}, err
	}
	code, err := CodeMaker(ctx, s.keys, eventID)
	if err != nil {
		return Transferred{}, fmt.Errorf("scan: transfer ticket %s: %w", ticketID, err)
	}
	newID := ids.New()
	newCode, err := code(newID)
	if err != nil {
		return Transferred{}, fmt.Errorf("scan: transfer ticket %s: %w", ticketID, err)
	}
	return s.store.transfer(ctx, t.HolderID, ticketID, email, NewTicket{ID: newID, Code: newCode})
}
