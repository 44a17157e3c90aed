// Package hold places, reads, releases and expires holds: a buyer's claim on 1
// to 10 seats and places of general admission of one event for a limited
// time. A hold takes all its seats in one conditional write or none of them, so
// two holds never own one seat, and no lock wider than the seats asked for is
// ever taken. A place is a row of the seats table too (row label ""), which a
// hold asks for by section and quantity and the placement chooses, skipping
// the places others have locked (store_places.go); everything after the hold
// treats it as a seat.
//
// It owns the holds and seats tables: a placement reads and takes its seats
// and writes its hold in one statement, so the seats are this package's.
// internal/event generates an event's seats and stores them through
// CreateSeats, in the event's transaction, and reads them for its seat maps.
// Checkout moves a hold through its checkout with BeginCheckout and
// EndCheckout, in checkout's own transaction. Its SQL reads events (a
// placement's and a checkout's start, by the database's clock) and orders (a
// hold that went to checkout never cools nor is purged), each inside the one
// statement that needs it, and writes neither (docs/design.md, "Where each
// rule lives"; internal/archtest checks it). store.go and store_checkout.go hold
// its SQL.
package hold

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/stagedoor/stagedoor/internal/errkind"
	"github.com/stagedoor/stagedoor/internal/event"
)

// Errors returned by this package; internal/httpapi maps them to problems.
// Besides these, a request that is malformed (seat count, malformed or
// duplicate ids, an unknown event, a seat of another event) is an
// errkind.Invalid error saying what is wrong, and nothing is held; a hold that
// is not the buyer's is errkind.NotFound (another buyer's are not revealed).
var (
	errNotFound = errkind.NotFoundf("no such hold")

	// ErrSeatsUnavailable is what an *UnavailableError is: some seats were held
	// or sold, and nothing was held.
	ErrSeatsUnavailable = errors.New("seats unavailable")
	// ErrNotOnSale: the event's sale has not opened.
	ErrNotOnSale = errors.New("the event is not on sale yet")
	// ErrEventStarted: the event has started (its starts_at has passed), and
	// its seats are no longer held or sold: neither a new hold nor the checkout
	// of an earlier one. It is event.ErrStarted.
	ErrEventStarted = event.ErrStarted
	// ErrEventCancelled: the event was cancelled, and its seats are no longer
	// held or sold: neither a new hold nor the checkout of an earlier one. It
	// is event.ErrCancelled.
	ErrEventCancelled = event.ErrCancelled
	// ErrNotActive: the hold cannot do what was asked in its state: it expired,
	// was released, is being checked out or was converted into an order. The
	// error's text says which.
	ErrNotActive = errors.New("the hold is not active")
)

// UnavailableError lists exactly the seats that were held or sold when the hold
// was tried. errors.Is(err, ErrSeatsUnavailable) holds for it.
type UnavailableError struct {
	SeatIDs []string
}

func (e *UnavailableError) Error() string {
	return fmt.Sprintf("%d of the seats asked for are held or sold (%s); nothing was held",
		len(e.SeatIDs), strings.Join(e.SeatIDs, ", "))
}

// Is makes errors.Is(err, ErrSeatsUnavailable) true.
func (e *UnavailableError) Is(target error) bool { return target == ErrSeatsUnavailable }

// ErrTooManyHeld is what a *TooManyHeldError is: the hold would take the buyer
// past their cap of held seats for the event, and nothing was held.
var ErrTooManyHeld = errors.New("too many seats held")

// TooManyHeldError says how far a refused hold was over the buyer's cap of
// seats held at once for one event (STAGEDOOR_MAX_HELD_SEATS). Seats in a
// checkout count; seats bought do not.
type TooManyHeldError struct {
	Max, Held, Asked int
}

func (e *TooManyHeldError) Error() string {
	return fmt.Sprintf("you hold %d seats of this event and asked for %d more; at most %d may be held at once: "+
		"release a hold or check out first", e.Held, e.Asked, e.Max)
}

// Is makes errors.Is(err, ErrTooManyHeld) true.
func (e *TooManyHeldError) Is(target error) bool { return target == ErrTooManyHeld }

// ErrReholdCooldown is what a *CooldownError is: the buyer asked again, too
// soon, for seats a hold of theirs gave back, and nothing was held.
var ErrReholdCooldown = errors.New("seats given back too recently")

// CooldownError lists the seats asked for that a hold of the same buyer
// released or let expire less than the cooldown ago
// (STAGEDOOR_REHOLD_COOLDOWN), and how long until the last of them may be
// held by that buyer again. Anyone else may hold them now: the cooldown keeps
// one buyer from keeping seats off sale by releasing (or letting expire) and
// holding them again. A hold that went to checkout does not count.
type CooldownError struct {
	SeatIDs    []string
	RetryAfter time.Duration
}

// Error says it in words for the buyer (the seats' ids are the problem's
// cooldown_seat_ids).
func (e *CooldownError) Error() string {
	return fmt.Sprintf("you gave back %d of these seats moments ago: you may hold them again in %s, "+
		"and anyone else may hold them now; nothing was held",
		len(e.SeatIDs), max(e.RetryAfter.Round(time.Second), time.Second))
}

// Is makes errors.Is(err, ErrReholdCooldown) true.
func (e *CooldownError) Is(target error) bool { return target == ErrReholdCooldown }

// ErrSoldOut is what a *SoldOutError is: a section of general admission has
// fewer places left than asked for, and nothing was held.
var ErrSoldOut = errors.New("sold out")

// SoldOutError lists the sections of general admission that had fewer places
// left than the hold asked for, in the order asked. Nothing was held.
type SoldOutError struct {
	Sections []Short
}

// Short is a section of general admission short of places: Available is how
// many of its places were neither held nor sold when the placement looked
// (docs/design.md, "General admission: places taken with SKIP LOCKED", says
// exactly when), fewer than Asked.
type Short struct {
	SectionID, Section string
	Asked, Available   int
}

// Error says it in words for the buyer.
func (e *SoldOutError) Error() string {
	parts := make([]string, len(e.Sections))
	for i, s := range e.Sections {
		switch s.Available {
		case 0:
			parts[i] = fmt.Sprintf("%s is sold out", s.Section)
		case 1:
			parts[i] = fmt.Sprintf("%s has 1 place left, and %d were asked for", s.Section, s.Asked)
		default:
			parts[i] = fmt.Sprintf("%s has %d places left, and %d were asked for", s.Section, s.Available, s.Asked)
		}
	}
	return strings.Join(parts, "; ") + "; nothing was held"
}

// Is makes errors.Is(err, ErrSoldOut) true.
func (e *SoldOutError) Is(target error) bool { return target == ErrSoldOut }

// MaxSeats is the most seats and places one hold takes.
const MaxSeats = 10

// Status is a hold's state. The set is complete: the holds table's CHECK
// constraint allows exactly these (a test compares the two).
type Status string

// The states of a hold. Only CheckingOut is not part of the HTTP contract,
// which shows it as active (the hold is still the buyer's while they pay).
const (
	Active      Status = "active"
	CheckingOut Status = "checking_out" // a checkout is paying for it; see BeginCheckout
	Expired     Status = "expired"
	Released    Status = "released"
	Converted   Status = "converted"
)

// Hold is a buyer's hold on seats, places of general admission, or both.
type Hold struct {
	ID      string
	EventID string
	BuyerID string
	// SeatIDs are its seats, in the order asked for, then its places: a place
	// is a row of the seats table too, so checkout, tickets and the door treat
	// it as a seat.
	SeatIDs    []string
	General    []SectionPlaces // its places, by section, in the order asked for
	Status     Status
	TotalCents int64
	Currency   string
	ExpiresAt  time.Time
	CreatedAt  time.Time
}

// General asks for Quantity places of one section of general admission.
type General struct {
	SectionID string
	Quantity  int
}

// SectionPlaces are some places of one section of general admission.
type SectionPlaces struct {
	SectionID string
	Section   string // its name
	Quantity  int
}

// Plan is a checked hold request, ready to place once the limits allow it.
type Plan struct {
	BuyerID string
	SeatIDs []string        // canonical, distinct
	General []SectionPlaces // distinct sections of general admission, in the order asked for
	// Event is the event's unchanging facts; Event.OrganizerID keys the
	// hold-organizer limit.
	Event event.Info
}

// size is how many seats and places the plan asks for.
func (p Plan) size() int {
	n := len(p.SeatIDs)
	for _, g := range p.General {
		n += g.Quantity
	}
	return n
}

func invalid(format string, args ...any) error { return errkind.Invalidf(format, args...) }

// errCancelledEvent is ErrEventCancelled, said for a hold or its checkout.
var errCancelledEvent = fmt.Errorf("%w: its seats are no longer held or sold", ErrEventCancelled)

// startedError is ErrEventStarted, saying when the event started.
func startedError(startsAt time.Time) error {
	return fmt.Errorf("%w: it started at %s, and its seats are no longer held or sold", ErrEventStarted,
		startsAt.UTC().Format(time.RFC3339))
}
