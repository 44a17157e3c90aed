// Package event holds events, their sections and generated seats, and seat-map
// snapshots: a stampede of seat-map reads costs about one query a second per
// event and instance. Its organizer may change an event's name, venue,
// description, start and refund window (Update, within rules that keep the
// promises of tickets sold) and cancel it (CancelIn, in internal/checkout's
// transaction that starts its refunds); its sections, seats, sale opening and
// currency never change. What a hold needs of an event (Info) is cached per
// instance for at most SnapshotMaxAge, so that a change reaches every instance
// within a second; the statements that hold and check out read the event
// anew themselves.
//
// It owns the events and event_sections tables. The seats it generates are
// stored by the seats table's owner, internal/hold (the CreateSeats given to
// NewService), in the transaction that stores the event; its SQL reads seats
// for the seat map and an event's counts, and never writes them
// (docs/design.md, "Where each rule lives"; internal/archtest checks it).
package event

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/stagedoor/stagedoor/internal/errkind"
	"github.com/stagedoor/stagedoor/internal/text"
)

// Errors returned by this package; internal/httpapi maps them to problems.
var (
	// errNotFound: no event has this id (a malformed id included).
	errNotFound = errkind.NotFoundf("no such event")
	// errNotYours: no event of this organizer has this id (another's are not
	// revealed).
	errNotYours = errkind.NotFoundf("no such event of yours")

	// ErrCancelled: the event was cancelled; nothing of it is held, sold or
	// changed any more.
	ErrCancelled = errors.New("the event was cancelled")
	// ErrStarted: the event has started (its starts_at has passed).
	ErrStarted = errors.New("the event has started")
	// ErrBreaksTickets is what a *BreaksTicketsError is: a change that would
	// break a promise made to the buyers of its tickets; nothing changed.
	ErrBreaksTickets = errors.New("the change would break a promise made to the event's ticket buyers")
)

// The states of an event.
const (
	Scheduled = "scheduled"
	Cancelled = "cancelled"
)

// Bounds of a new event. MaxSeats bounds the seats and the places of all its
// sections together (docs/design.md, "General admission: places taken with
// SKIP LOCKED", says why it was kept at 10,000 when places came).
const (
	MaxSections    = 50
	MaxRows        = 100 // rows A … Z, AA … CV
	MaxSeatsPerRow = 1000
	MaxSeats       = 10_000 // seats and places, in all sections together
	MaxPriceCents  = 100_000_000
	maxNameRunes   = 200
	// MaxDescriptionRunes bounds an event's description.
	MaxDescriptionRunes = 4000
)

// DefaultCurrency is an event's currency when its organizer names none.
const DefaultCurrency = "USD"

// Section is a priced part of an event: either seated, rows A, B, … each
// numbered 1..SeatsPerRow, or of general admission, Capacity places without
// row or number (each a row of the seats table all the same, with row label ""
// and a number 1..Capacity, which no buyer is shown).
type Section struct {
	ID               string // set once stored
	Name             string
	GeneralAdmission bool
	Rows             int // seated only
	SeatsPerRow      int // seated only
	// Capacity is how many places a general-admission section has, or
	// Rows × SeatsPerRow seats (filled in by Create).
	Capacity   int
	PriceCents int64
	// Available is how many of its seats or places are neither held nor sold,
	// as of the snapshot Get read (Create: all of them; Info: not filled).
	Available int
}

// WaitingRoom is an event's waiting room; holds on the event need an admission
// (enforced by the waiting room, a later feature).
type WaitingRoom struct {
	AdmitPerSecond int
}

// Draft is a new event as its organizer describes it.
type Draft struct {
	OrganizerID string
	Name, Venue string
	Description string // optional; several lines allowed (text.Paragraphs)
	StartsAt    time.Time
	OnSaleAt    time.Time // zero: on sale at once
	// RefundsUntil, when set, is when buyers' refunds close: in the future,
	// not after StartsAt. Nil: buyers cannot ask for refunds.
	RefundsUntil *time.Time
	Currency     string // empty: DefaultCurrency
	Sections     []Section
	WaitingRoom  *WaitingRoom
}

// Event is an event with its seat counts as of when it was read.
type Event struct {
	ID          string
	OrganizerID string
	Name, Venue string
	Description string
	StartsAt    time.Time
	OnSaleAt    time.Time
	// RefundsUntil is when buyers' refunds close; nil: they cannot ask.
	RefundsUntil *time.Time
	Currency     string
	WaitingRoom  *WaitingRoom
	Status       string     // Scheduled or Cancelled
	CancelledAt  *time.Time // set when Cancelled
	CreatedAt    time.Time
	// Sections is filled by Create and Get, not by the lists.
	Sections []Section
	// FromPriceCents is the lowest price of its sections; nil when it has none.
	FromPriceCents *int64
	// Image is its image's ETag and size (no data); ETag nil: it has none.
	Image ImageRef

	SeatsTotal, SeatsAvailable, SeatsHeld, SeatsSold int
}

// Info is what placing a hold needs of an event; it is cached per instance
// for at most SnapshotMaxAge (its start may move, and the event be
// cancelled).
type Info struct {
	ID          string
	OrganizerID string
	OnSaleAt    time.Time
	StartsAt    time.Time // holds and checkouts close then
	Currency    string
	WaitingRoom *WaitingRoom
	Status      string    // Scheduled or Cancelled
	Sections    []Section // in order, without Available; shared: never modify
}

// Section returns the event's section of that id (a canonical UUID).
func (in Info) Section(id string) (Section, bool) {
	for _, s := range in.Sections {
		if s.ID == id {
			return s, true
		}
	}
	return Section{}, false
}

// SeatStatus is a seat's state on the seat map.
type SeatStatus string

// The states of a seat.
const (
	Available SeatStatus = "available"
	Held      SeatStatus = "held"
	Sold      SeatStatus = "sold"
)

// Seat is one seat on the seat map.
type Seat struct {
	ID         string
	Section    string
	Row        string
	Number     int
	PriceCents int64
	Status     SeatStatus
}

// SeatMap is every seat of one event as of AsOf. A SeatMap is shared by all the
// readers of one snapshot: never modify it.
type SeatMap struct {
	EventID string
	AsOf    time.Time
	Seats   []Seat
}

// RowLabel is the label of the row at index i (0-based): A … Z, AA, AB, …
func RowLabel(i int) string {
	var b []byte
	for i++; i > 0; i = (i - 1) / 26 {
		b = append([]byte{byte('A' + (i-1)%26)}, b...)
	}
	return string(b)
}

func invalid(format string, args ...any) error {
	return errkind.Invalidf(format, args...)
}

// normalize trims the draft's text and puts it in NFC, fills its defaults and
// checks every field.
func (d *Draft) normalize(now time.Time) error {
	var err error
	if d.Name, err = checkText("name", d.Name); err != nil {
		return err
	}
	if d.Venue, err = checkText("venue", d.Venue); err != nil {
		return err
	}
	if d.Description, err = checkDescription(d.Description); err != nil {
		return err
	}
	if err := checkStart(d.StartsAt, now); err != nil {
		return err
	}
	if d.OnSaleAt.IsZero() {
		d.OnSaleAt = now
	}
	if d.OnSaleAt.After(d.StartsAt) {
		return invalid("on_sale_at must not be after starts_at")
	}
	if err := checkRefundsUntil(d.RefundsUntil, d.StartsAt, now); err != nil {
		return err
	}
	d.StartsAt, d.OnSaleAt, d.RefundsUntil = d.StartsAt.UTC(), d.OnSaleAt.UTC(), utc(d.RefundsUntil)
	if d.Currency == "" {
		d.Currency = DefaultCurrency
	}
	if !isCurrencyCode(d.Currency) {
		return invalid("currency %s must be an ISO 4217 code of three upper-case letters, such as USD", text.Describe(d.Currency))
	}
	if d.WaitingRoom != nil && (d.WaitingRoom.AdmitPerSecond < 1 || d.WaitingRoom.AdmitPerSecond > 100_000) {
		return invalid("waiting_room.admit_per_second must be between 1 and 100000")
	}
	return d.checkSections()
}

func (d *Draft) checkSections() error {
	if len(d.Sections) == 0 {
		return invalid("sections must list at least one section")
	}
	if len(d.Sections) > MaxSections {
		return invalid("an event has at most %d sections", MaxSections)
	}
	// Checking fills in each section's Capacity: a copy, so that the caller's
	// sections stay as given (a Draft may be created again).
	d.Sections = slices.Clone(d.Sections)
	names := make(map[string]bool, len(d.Sections))
	total := 0
	for i := range d.Sections {
		s := &d.Sections[i]
		field := fmt.Sprintf("sections[%d]", i)
		var err error
		if s.Name, err = checkText(field+".name", s.Name); err != nil {
			return err
		}
		if names[s.Name] {
			return invalid("%s.name %q is used by another section", field, s.Name)
		}
		names[s.Name] = true
		if err := s.checkSize(field); err != nil {
			return err
		}
		if s.PriceCents < 0 || s.PriceCents > MaxPriceCents {
			return invalid("%s.price_cents must be between 0 and %d", field, MaxPriceCents)
		}
		total += s.Capacity
	}
	if total > MaxSeats {
		return invalid("the sections hold %d seats and places; an event has at most %d", total, MaxSeats)
	}
	return nil
}

// checkSize checks a seated section's rows and seats per row, or a
// general-admission section's capacity, and fills in Capacity.
func (s *Section) checkSize(field string) error {
	if s.GeneralAdmission {
		switch {
		case s.Rows != 0 || s.SeatsPerRow != 0:
			return invalid("%s is of general admission: it has a capacity, not rows or seats_per_row", field)
		case s.Capacity < 1 || s.Capacity > MaxSeats:
			return invalid("%s.capacity must be between 1 and %d", field, MaxSeats)
		}
		return nil
	}
	switch {
	case s.Capacity != 0:
		return invalid("%s is seated: its capacity is rows × seats_per_row; give capacity only with general_admission true", field)
	case s.Rows < 1 || s.Rows > MaxRows:
		return invalid("%s.rows must be between 1 and %d", field, MaxRows)
	case s.SeatsPerRow < 1 || s.SeatsPerRow > MaxSeatsPerRow:
		return invalid("%s.seats_per_row must be between 1 and %d", field, MaxSeatsPerRow)
	}
	s.Capacity = s.Rows * s.SeatsPerRow
	return nil
}

// checkText returns the text to store (trimmed, in NFC), or an errkind.Invalid error.
func checkText(field, value string) (string, error) {
	return text.Name(field, value, maxNameRunes)
}

// checkDescription returns the description to store, or an errkind.Invalid
// error.
func checkDescription(value string) (string, error) {
	return text.Paragraphs("description", value, MaxDescriptionRunes)
}

// checkStart reports an errkind.Invalid error unless startsAt is set and
// after now.
func checkStart(startsAt, now time.Time) error {
	switch {
	case startsAt.IsZero():
		return invalid("starts_at is required")
	case !startsAt.After(now):
		return invalid("starts_at must be in the future")
	}
	return nil
}

// checkRefundsUntil reports an errkind.Invalid error unless the refund
// window, when there is one, closes in the future and not after the start.
func checkRefundsUntil(until *time.Time, startsAt, now time.Time) error {
	switch {
	case until == nil:
		return nil
	case !until.After(now):
		return invalid("refunds_until must be in the future")
	case until.After(startsAt):
		return invalid("refunds_until must not be after starts_at")
	}
	return nil
}

// utc is t in UTC, or nil.
func utc(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

func isCurrencyCode(s string) bool {
	if len(s) != 3 {
		return false
	}
	for _, c := range []byte(s) {
		if c < 'A' || c > 'Z' {
			return false
		}
	}
	return true
}
