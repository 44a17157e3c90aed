// Package event holds events, their sections and generated seats, and seat-map
// snapshots: a stampede of seat-map reads costs about one query a second per
// event and instance. An event never changes once created.
//
// It owns the events and event_sections tables. The seats it generates are
// stored by the seats table's owner, internal/hold (the CreateSeats given to
// NewService), in the transaction that stores the event; its SQL reads seats
// for the seat map and an event's counts, and never writes them
// (docs/design.md, "Where each rule lives"; internal/archtest checks it).
package event

import (
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
	StartsAt    time.Time
	OnSaleAt    time.Time // zero: on sale at once
	Currency    string    // empty: DefaultCurrency
	Sections    []Section
	WaitingRoom *WaitingRoom
}

// Event is an event with its seat counts as of when it was read.
type Event struct {
	ID          string
	OrganizerID string
	Name, Venue string
	StartsAt    time.Time
	OnSaleAt    time.Time
	Currency    string
	WaitingRoom *WaitingRoom
	CreatedAt   time.Time
	// Sections is filled by Create and Get, not by the lists.
	Sections []Section

	SeatsTotal, SeatsAvailable, SeatsHeld, SeatsSold int
}

// Info is what never changes about an event and what placing a hold needs; it
// is cached per instance for good.
type Info struct {
	ID          string
	OrganizerID string
	OnSaleAt    time.Time
	StartsAt    time.Time // holds and checkouts close then
	Currency    string
	WaitingRoom *WaitingRoom
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
	switch {
	case d.StartsAt.IsZero():
		return invalid("starts_at is required")
	case !d.StartsAt.After(now):
		return invalid("starts_at must be in the future")
	}
	if d.OnSaleAt.IsZero() {
		d.OnSaleAt = now
	}
	if d.OnSaleAt.After(d.StartsAt) {
		return invalid("on_sale_at must not be after starts_at")
	}
	d.StartsAt, d.OnSaleAt = d.StartsAt.UTC(), d.OnSaleAt.UTC()
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
