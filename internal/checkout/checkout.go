// Package checkout turns a hold into an order and tickets by charging through
// Payrail, and never misleads the buyer about their money.
//
// An attempt writes a pending order before the charge (with the hold moved to
// checking_out by internal/hold, in the same transaction), charges with the
// order's id as Payrail's idempotency key and no database connection held, then
// settles the order: confirmed with tickets, declined or failed with the hold
// active again, or left pending when the outcome is unknown. The checkout holds
// a lease on its order while it works; writing a known outcome is retried until
// the lease ends.
//
// An Idempotency-Key belongs to the order its request wrote, for 24 hours: a
// retry answers that order's current state, whatever happened to the first
// request (a timeout, a crash, a lost connection). While a request works on a
// key its lease says so; a dead instance's lease lapses by itself.
//
// Recovery (one instance at a time) settles orders left pending: confirmed when
// Payrail has the charge, declined when Payrail declined it, released only when
// Payrail's ledger proves there is none; anything else waits, counted.
// Reconciliation reads Payrail's charges and refunds any that belong to an
// order that was not confirmed; and it reads Payrail's refunds, so that a
// confirmed order whose charge was refunded at Payrail becomes refunded, its
// tickets revoked (through internal/scan, in the same transaction).
//
// It owns the orders, idempotency_keys, payment_reconciliation and
// refund_reconciliation tables; its SQL names no other. Tickets are
// internal/scan's (an admission is one statement of a ticket and its audit
// row): a confirmed order's are issued through scan.IssueTickets and a
// refunded order's revoked through scan.RevokeOrder, in this package's
// transaction, and listed through scan.TicketsOf. It changes holds and seats
// only through internal/hold, in its own transactions, and reaches Payrail
// only over HTTP, as it would a real provider. The transaction that confirms
// an order also writes the buyer's e-mail of its tickets to internal/mail's
// outbox (mail.Enqueue), reading the buyer, the event and the seats through
// auth.AccountByID, event.SummaryOf and hold.PlacesOf: the e-mail exists
// exactly when the order is confirmed, and is sent later, never waited for.
package checkout

import (
	"errors"
	"time"

	"github.com/stagedoor/stagedoor/internal/errkind"
	"github.com/stagedoor/stagedoor/internal/scan"
)

// Errors returned by this package; internal/httpapi maps them to problems.
// ErrPaymentDeclined and ErrPaymentUnavailable are in payments.go, the
// Idempotency-Key errors in keys.go. A malformed request is an errkind.Invalid
// error, an order that is not the buyer's errkind.NotFound; a hold that is not
// the buyer's is hold's errkind.NotFound, and one that cannot be checked out
// hold.ErrNotActive.
var (
	// errNotFound: no such order for this buyer (another buyer's are not
	// revealed).
	errNotFound = errkind.NotFoundf("no such order")
	// ErrOrderReleased: the order's payment could not be confirmed, Payrail
	// proved there was no charge, and the order was released with its hold:
	// the seats went back on sale. Nothing stays charged (a charge that arrives
	// later is refunded).
	ErrOrderReleased = errors.New("the order was released: no charge was found for it, and its seats went back on sale")
	// ErrOrderRefunded: the order was paid, then its charge was refunded at
	// Payrail; its tickets admit no one.
	ErrOrderRefunded = errors.New("the order's payment was refunded, and its tickets admit no one")
)

// OrderError is the failure of a checkout that wrote an order: errors.Is
// matches Err, and OrderID names the order, so the buyer can look it up.
type OrderError struct {
	OrderID string
	Err     error
}

func (e *OrderError) Error() string { return e.Err.Error() + " (order " + e.OrderID + ")" }

// Unwrap returns Err.
func (e *OrderError) Unwrap() error { return e.Err }

// Order statuses.
const (
	Pending   = "pending"   // the charge's outcome is not known yet
	Confirmed = "confirmed" // charged; seats sold, tickets issued
	Declined  = "declined"  // Payrail declined; the hold is active again
	Failed    = "failed"    // Payrail certainly made no charge; the hold is active again
	Released  = "released"  // found uncharged by recovery; the hold released
	Refunded  = "refunded"  // confirmed, then its charge was refunded at Payrail; its tickets revoked
)

// Order is a buyer's purchase of a hold's seats.
type Order struct {
	ID         string
	BuyerID    string
	HoldID     string
	EventID    string
	Status     string
	TotalCents int64
	Currency   string
	CreatedAt  time.Time
	// RefundedAt is set when the order's charge was refunded: a charge that
	// reached Payrail for an order that was not confirmed (refunded by
	// reconciliation), or the charge of a Refunded order.
	RefundedAt *time.Time
	Tickets    []Ticket
}

// settledError is the error that describes a settled, unsuccessful order, or
// nil for a confirmed or pending one.
func (o Order) settledError() error {
	var err error
	switch o.Status {
	case Declined:
		err = ErrPaymentDeclined
	case Failed:
		err = ErrPaymentUnavailable
	case Released:
		err = ErrOrderReleased
	case Refunded:
		err = ErrOrderRefunded
	default:
		return nil
	}
	return &OrderError{OrderID: o.ID, Err: err}
}

// Ticket admits one seat once: the ticket internal/scan issued, and whether
// its order was refunded.
type Ticket struct {
	scan.Ticket
	// Refunded: the ticket's order was refunded; it admits no one.
	Refunded bool
}

// Status is "valid" until the ticket is scanned, then "scanned"; "refunded"
// once its order was refunded, scanned or not; "transferred" once its holder
// gave it to another buyer (who holds a new ticket for its seat).
func (t Ticket) Status() string {
	switch {
	case t.Transferred:
		return "transferred"
	case t.Refunded:
		return "refunded"
	case t.ScannedAt != nil:
		return "scanned"
	}
	return "valid"
}
