// Package checkout turns a hold into an order and tickets by charging through
// Payrail: a pending order before the charge, a confirmed one after, and no
// database connection held while Payrail answers. A crash between the two is
// settled later by asking Payrail (Recover). It also keeps Idempotency-Keys.
package checkout

import (
	"errors"
	"time"
)

// Errors returned by this package; internal/httpapi maps them to problems.
// ErrPaymentDeclined and ErrPaymentUnavailable are in payments.go.
var (
	// ErrInvalidInput wraps a description of what is wrong with the request.
	ErrInvalidInput = errors.New("invalid checkout request")
	// ErrNotFound: no such order for this buyer (another buyer's are not
	// revealed). A hold that is not the buyer's is hold.ErrNotFound, and one
	// that cannot be checked out hold.ErrNotActive.
	ErrNotFound = errors.New("not found")
)

// Order statuses.
const (
	Pending   = "pending"
	Confirmed = "confirmed"
	Declined  = "declined"
	Failed    = "failed"
	Released  = "released"
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
	Tickets    []Ticket
}

// Ticket admits one seat once.
type Ticket struct {
	ID        string
	OrderID   string
	EventID   string
	SeatID    string
	Code      string
	ScannedAt *time.Time
}

// Status is "valid" until the ticket is scanned, then "scanned".
func (t Ticket) Status() string {
	if t.ScannedAt != nil {
		return "scanned"
	}
	return "valid"
}
