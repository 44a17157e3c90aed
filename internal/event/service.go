package event

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/stagedoor/stagedoor/internal/errkind"
	"github.com/stagedoor/stagedoor/internal/ids"
	"github.com/stagedoor/stagedoor/internal/paging"
)

// SnapshotMaxAge is the oldest a seat map, an event or the event list is served:
// The contract allows a seat map up to 1 second old, and an event's seats_available
// is no fresher than its seat map.
const SnapshotMaxAge = time.Second

// Service creates and reads events and serves seat maps from snapshots.
type Service struct {
	store    store
	now      func() time.Time
	seatMaps *snapshots[string, *SeatMap]
	events   *snapshots[string, *Event]
	lists    *snapshots[ListQuery, Page]
	infos    *snapshots[string, *Info]
	queries  atomic.Int64
}

// CreateSeats stores a new event's seats, in order, in tx, the transaction that
// stores the event: the seats table is internal/hold's (hold.CreateSeats).
type CreateSeats func(ctx context.Context, tx pgx.Tx, eventID string, seats []NewSeat) error

// NewSeat is a generated seat, or place, of a new event, stored by
// CreateSeats.
type NewSeat struct {
	Section    string
	Row        string // RowLabel of its row; "" for a place of general admission
	Number     int    // 1..SeatsPerRow; a place's 1..Capacity
	PriceCents int64
}

// NewService returns a Service on db whose events' seats are stored by
// createSeats (hold.CreateSeats).
func NewService(db *pgxpool.Pool, createSeats CreateSeats) *Service {
	s := &Service{store: store{db: db, createSeats: createSeats}, now: time.Now}
	s.seatMaps = newSnapshots(SnapshotMaxAge, func(ctx context.Context, id string) (*SeatMap, error) {
		s.queries.Add(1)
		return s.store.seatMap(ctx, id)
	})
	s.events = newSnapshots(SnapshotMaxAge, func(ctx context.Context, id string) (*Event, error) {
		e, err := s.store.get(ctx, id)
		if errors.Is(err, errkind.NotFound) {
			return nil, nil // kept, like any snapshot: an unknown id stays unknown
		}
		if err != nil {
			return nil, err
		}
		return &e, nil
	})
	s.lists = newSnapshots(SnapshotMaxAge, s.store.page)
	s.infos = newSnapshots(SnapshotMaxAge, func(ctx context.Context, id string) (*Info, error) {
		in, err := s.store.info(ctx, id)
		if errors.Is(err, errkind.NotFound) {
			return nil, nil // kept, like any snapshot: an unknown id stays unknown
		}
		if err != nil {
			return nil, err
		}
		return &in, nil
	})
	return s
}

// SeatMapQueries is how many seat-map queries this Service has sent to the
// database (tests and benchmarks use it to show the snapshots at work).
func (s *Service) SeatMapQueries() int64 { return s.queries.Load() }

// Create validates the draft and stores the event with its generated seats:
// for each seated section, rows A, B, … numbered 1..SeatsPerRow; for each
// section of general admission, its Capacity places. It returns an error of
// kind errkind.Invalid that says what is wrong, and then stores nothing.
func (s *Service) Create(ctx context.Context, d Draft) (Event, error) {
	if err := d.normalize(s.now()); err != nil {
		return Event{}, err
	}
	if _, ok := ids.Parse(d.OrganizerID); !ok {
		return Event{}, fmt.Errorf("event: organizer id %q is not a UUID", d.OrganizerID)
	}
	return s.store.create(ctx, d)
}

// List returns a page of the public event list with their available seats,
// soonest first, from a snapshot at most SnapshotMaxAge old: events yet to
// start unless q.IncludePast. It does not fill Sections. An errkind.Invalid
// error for a limit out of range or a cursor this API did not give.
func (s *Service) List(ctx context.Context, q ListQuery) (Page, error) {
	var err error
	if q.Limit, err = paging.Limit(q.Limit); err != nil {
		return Page{}, err
	}
	if q.After != "" {
		if _, err := paging.Parse(q.After); err != nil {
			return Page{}, err
		}
	}
	return s.lists.get(ctx, q)
}

// ListByOrganizer returns the organizer's own events with their seats held and
// sold, read now. It does not fill Sections.
func (s *Service) ListByOrganizer(ctx context.Context, organizerID string) ([]Event, error) {
	id, ok := ids.Parse(organizerID)
	if !ok {
		return nil, nil
	}
	return s.store.list(ctx, "WHERE e.organizer_id = $1 ORDER BY e.starts_at, e.id", id)
}

// Get returns one event with its sections and seat counts (each section's
// Available, and the event's counts, places included), from a snapshot at
// most SnapshotMaxAge old, or an errkind.NotFound error. Its Sections are shared with other
// readers of the snapshot: never modify them.
func (s *Service) Get(ctx context.Context, eventID string) (Event, error) {
	id, ok := ids.Parse(eventID)
	if !ok {
		return Event{}, errNotFound
	}
	e, err := s.events.get(ctx, id)
	if err != nil {
		return Event{}, err
	}
	if e == nil {
		return Event{}, errNotFound
	}
	return *e, nil
}

// SeatMap returns every seat of the event with its status, from a snapshot at
// most SnapshotMaxAge old: however many read it at once, this instance sends
// about one query a second per event. An errkind.NotFound error when there is no such event.
func (s *Service) SeatMap(ctx context.Context, eventID string) (*SeatMap, error) {
	id, ok := ids.Parse(eventID)
	if !ok {
		return nil, errNotFound
	}
	m, err := s.seatMaps.get(ctx, id)
	if err != nil {
		return nil, err
	}
	if m == nil {
		return nil, errNotFound
	}
	return m, nil
}

// Info returns what a hold needs of an event (its organizer, sale opening,
// start, currency, waiting room, status, sections), from a snapshot at most
// SnapshotMaxAge old: a change or a cancellation reaches every instance
// within it. An errkind.NotFound error when there is no such event.
func (s *Service) Info(ctx context.Context, eventID string) (Info, error) {
	id, ok := ids.Parse(eventID)
	if !ok {
		return Info{}, errNotFound
	}
	in, err := s.infos.get(ctx, id)
	if err != nil {
		return Info{}, err
	}
	if in == nil {
		return Info{}, errNotFound
	}
	return *in, nil
}

// Own returns one of the organizer's events with its sections and seat
// counts, read now (not from a snapshot: its organizer sees a change at
// once), or an errkind.NotFound error for another organizer's event or none.
func (s *Service) Own(ctx context.Context, organizerID, eventID string) (Event, error) {
	id, ok := ids.Parse(eventID)
	if !ok {
		return Event{}, errNotYours
	}
	e, err := s.store.get(ctx, id)
	if errors.Is(err, errkind.NotFound) || err == nil && e.OrganizerID != organizerID {
		return Event{}, errNotYours
	}
	return e, err
}
