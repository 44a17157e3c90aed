package event

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/stagedoor/stagedoor/internal/ids"
)

// store is the SQL of events and sections, and the reads of their seats (the
// seat map, the counts). Ids reaching it are valid UUIDs (checked with
// ids.Parse), so PostgreSQL never sees a malformed one.
type store struct {
	db          *pgxpool.Pool
	createSeats CreateSeats // the seats table's owner's (hold.CreateSeats)
}

// create stores the event, its sections and (through createSeats) its seats
// in one transaction.
func (s store) create(ctx context.Context, d Draft) (Event, error) {
	tx, err := s.db.Begin(ctx)
	if err != nil {
		return Event{}, fmt.Errorf("event: create: %w", err)
	}
	defer tx.Rollback(ctx)

	e := Event{
		OrganizerID: d.OrganizerID, Name: d.Name, Venue: d.Venue, Description: d.Description,
		StartsAt: d.StartsAt, OnSaleAt: d.OnSaleAt, RefundsUntil: d.RefundsUntil, Currency: d.Currency,
		WaitingRoom: d.WaitingRoom, Status: Scheduled,
	}
	var admit *int
	if d.WaitingRoom != nil {
		admit = &d.WaitingRoom.AdmitPerSecond
	}
	err = tx.QueryRow(ctx, `
		INSERT INTO events (id, organizer_id, name, venue, starts_at, on_sale_at, currency, admit_per_second,
		                    description, refunds_until)
		VALUES (gen_random_uuid(), $1, $2, $3, $4, $5, $6, $7, $8, $9)
		RETURNING id::text, created_at`,
		d.OrganizerID, d.Name, d.Venue, d.StartsAt, d.OnSaleAt, d.Currency, admit, d.Description, d.RefundsUntil).
		Scan(&e.ID, &e.CreatedAt)
	if err != nil {
		return Event{}, fmt.Errorf("event: create: %w", err)
	}

	e.Sections = make([]Section, len(d.Sections))
	copy(e.Sections, d.Sections)
	if err := insertSections(ctx, tx, e.ID, e.Sections); err != nil {
		return Event{}, err
	}
	seats := newSeats(e.Sections)
	if err := s.createSeats(ctx, tx, e.ID, seats); err != nil {
		return Event{}, fmt.Errorf("event: create seats: %w", err)
	}
	if err := tx.Commit(ctx); err != nil {
		return Event{}, fmt.Errorf("event: create: %w", err)
	}
	e.SeatsTotal, e.SeatsAvailable = len(seats), len(seats)
	e.FromPriceCents = lowestPrice(e.Sections)
	e.StartsAt, e.OnSaleAt, e.CreatedAt = e.StartsAt.UTC(), e.OnSaleAt.UTC(), e.CreatedAt.UTC()
	return e, nil
}

// lowestPrice is the lowest price of the sections; nil when there are none.
func lowestPrice(sections []Section) *int64 {
	var low *int64
	for i := range sections {
		if p := sections[i].PriceCents; low == nil || p < *low {
			low = &p
		}
	}
	return low
}

// insertSections stores the event's sections in tx, giving each its id, and
// sets each one's Available to its capacity.
func insertSections(ctx context.Context, tx pgx.Tx, eventID string, sections []Section) error {
	n := len(sections)
	sectionIDs, names, general := make([]string, n), make([]string, n), make([]bool, n)
	rows, perRow := make([]*int32, n), make([]*int32, n)
	capacity, prices := make([]int32, n), make([]int64, n)
	for i := range sections {
		sec := &sections[i]
		sec.ID, sec.Available = ids.New(), sec.Capacity
		sectionIDs[i], names[i], general[i] = sec.ID, sec.Name, sec.GeneralAdmission
		capacity[i], prices[i] = int32(sec.Capacity), sec.PriceCents
		if !sec.GeneralAdmission {
			r, p := int32(sec.Rows), int32(sec.SeatsPerRow)
			rows[i], perRow[i] = &r, &p
		}
	}
	if _, err := tx.Exec(ctx, `
		INSERT INTO event_sections (id, event_id, position, name, general_admission, rows, seats_per_row, capacity, price_cents)
		SELECT t.id, $1, t.p - 1, t.name, t.general, t.rows, t.per_row, t.capacity, t.price
		FROM unnest($2::uuid[], $3::text[], $4::bool[], $5::int[], $6::int[], $7::int[], $8::bigint[])
		     WITH ORDINALITY AS t(id, name, general, rows, per_row, capacity, price, p)`,
		eventID, sectionIDs, names, general, rows, perRow, capacity, prices); err != nil {
		return fmt.Errorf("event: create sections: %w", err)
	}
	return nil
}

// newSeats generates the sections' seats, in seat-map order: for a seated
// section rows A, B, … numbered 1..SeatsPerRow; for a general-admission one
// its places, row "" numbered 1..Capacity.
func newSeats(sections []Section) []NewSeat {
	var seats []NewSeat
	for _, sec := range sections {
		if sec.GeneralAdmission {
			for n := 1; n <= sec.Capacity; n++ {
				seats = append(seats, NewSeat{Section: sec.Name, Number: n, PriceCents: sec.PriceCents})
			}
			continue
		}
		for r := range sec.Rows {
			label := RowLabel(r)
			for n := 1; n <= sec.SeatsPerRow; n++ {
				seats = append(seats, NewSeat{Section: sec.Name, Row: label, Number: n, PriceCents: sec.PriceCents})
			}
		}
	}
	return seats
}

// seatCounts counts the seats (and places) s as available, held and sold.
const seatCounts = `
	count(*) FILTER (WHERE s.sold_at IS NULL AND (s.held_until IS NULL OR s.held_until <= now())) AS available,
	count(*) FILTER (WHERE s.sold_at IS NULL AND s.held_until > now()) AS held,
	count(*) FILTER (WHERE s.sold_at IS NOT NULL) AS sold`

// eventColumns are an event's own columns, as scanEvent reads them before its
// counts, with its lowest section price (a subquery on the sections' event_id
// index, in the same statement: no query an event) and its image's ETag and
// size (eventsFrom joins event_images).
const eventColumns = `e.id::text, e.organizer_id::text, e.name, e.venue, e.starts_at, e.on_sale_at,
	       e.currency, e.admit_per_second, e.created_at, e.description, e.refunds_until, e.status, e.cancelled_at,
	       (SELECT min(es.price_cents) FROM event_sections es WHERE es.event_id = e.id) AS from_price,
	       ei.etag, coalesce(ei.width, 0), coalesce(ei.height, 0)`

// eventsFrom is the FROM of eventColumns: events and their images, if any.
const eventsFrom = `events e LEFT JOIN event_images ei ON ei.event_id = e.id`

// selectEvents reads events with their seat counts (places included); a WHERE
// clause and ORDER BY follow it.
const selectEvents = `
	SELECT ` + eventColumns + `,
	       c.total, c.available, c.held, c.sold
	FROM ` + eventsFrom + `
	CROSS JOIN LATERAL (
		SELECT count(*) AS total,` + seatCounts + `
		FROM seats s WHERE s.event_id = e.id
	) c`

func scanEvent(row pgx.Row) (Event, error) {
	var e Event
	var admit *int32
	err := row.Scan(&e.ID, &e.OrganizerID, &e.Name, &e.Venue, &e.StartsAt, &e.OnSaleAt,
		&e.Currency, &admit, &e.CreatedAt, &e.Description, &e.RefundsUntil, &e.Status, &e.CancelledAt,
		&e.FromPriceCents, &e.Image.ETag, &e.Image.Width, &e.Image.Height, &e.SeatsTotal, &e.SeatsAvailable, &e.SeatsHeld, &e.SeatsSold)
	if err != nil {
		return Event{}, err
	}
	if admit != nil {
		e.WaitingRoom = &WaitingRoom{AdmitPerSecond: int(*admit)}
	}
	e.StartsAt, e.OnSaleAt, e.CreatedAt = e.StartsAt.UTC(), e.OnSaleAt.UTC(), e.CreatedAt.UTC()
	e.RefundsUntil, e.CancelledAt = utc(e.RefundsUntil), utc(e.CancelledAt)
	return e, nil
}

// list reads events; tail is their WHERE, ORDER BY and LIMIT.
func (s store) list(ctx context.Context, tail string, args ...any) ([]Event, error) {
	rows, err := s.db.Query(ctx, selectEvents+" "+tail, args...)
	if err != nil {
		return nil, fmt.Errorf("event: list: %w", err)
	}
	events, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Event, error) { return scanEvent(r) })
	if err != nil {
		return nil, fmt.Errorf("event: list: %w", err)
	}
	return events, nil
}

// get returns one event with its sections, or an errkind.NotFound error. One
// read of the event's seats counts them by section (the event's counts are
// their sums).
func (s store) get(ctx context.Context, id string) (Event, error) {
	e, err := scanEvent(s.db.QueryRow(ctx, `SELECT `+eventColumns+`, 0, 0, 0, 0 FROM `+eventsFrom+` WHERE e.id = $1`, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return Event{}, errNotFound
	}
	if err != nil {
		return Event{}, fmt.Errorf("event: get: %w", err)
	}
	rows, err := s.db.Query(ctx, `
		SELECT es.id::text, es.name, es.general_admission, coalesce(es.rows, 0), coalesce(es.seats_per_row, 0),
		       es.capacity, es.price_cents, coalesce(c.available, 0), coalesce(c.held, 0), coalesce(c.sold, 0)
		FROM event_sections es
		LEFT JOIN (
		    SELECT s.section,`+seatCounts+`
		    FROM seats s WHERE s.event_id = $1 GROUP BY s.section
		) c ON c.section = es.name
		WHERE es.event_id = $1 ORDER BY es.position`, id)
	if err != nil {
		return Event{}, fmt.Errorf("event: get sections: %w", err)
	}
	e.Sections, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (Section, error) {
		var sec Section
		var held, sold int
		err := row.Scan(&sec.ID, &sec.Name, &sec.GeneralAdmission, &sec.Rows, &sec.SeatsPerRow,
			&sec.Capacity, &sec.PriceCents, &sec.Available, &held, &sold)
		e.SeatsTotal += sec.Capacity
		e.SeatsAvailable += sec.Available
		e.SeatsHeld += held
		e.SeatsSold += sold
		return sec, err
	})
	if err != nil {
		return Event{}, fmt.Errorf("event: get sections: %w", err)
	}
	return e, nil
}

// sections reads the event's sections, in order, without their counts.
func (s store) sections(ctx context.Context, id string) ([]Section, error) {
	rows, err := s.db.Query(ctx, `
		SELECT id::text, name, general_admission, coalesce(rows, 0), coalesce(seats_per_row, 0), capacity, price_cents
		FROM event_sections WHERE event_id = $1 ORDER BY position`, id)
	if err != nil {
		return nil, fmt.Errorf("event: sections: %w", err)
	}
	sections, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (Section, error) {
		var sec Section
		err := row.Scan(&sec.ID, &sec.Name, &sec.GeneralAdmission, &sec.Rows, &sec.SeatsPerRow, &sec.Capacity, &sec.PriceCents)
		return sec, err
	})
	if err != nil {
		return nil, fmt.Errorf("event: sections: %w", err)
	}
	return sections, nil
}

// info returns what a hold needs of an event, or an errkind.NotFound error.
func (s store) info(ctx context.Context, id string) (Info, error) {
	in := Info{ID: id}
	var admit *int32
	err := s.db.QueryRow(ctx, `
		SELECT organizer_id::text, on_sale_at, starts_at, currency, admit_per_second, status FROM events WHERE id = $1`, id).
		Scan(&in.OrganizerID, &in.OnSaleAt, &in.StartsAt, &in.Currency, &admit, &in.Status)
	if errors.Is(err, pgx.ErrNoRows) {
		return Info{}, errNotFound
	}
	if err != nil {
		return Info{}, fmt.Errorf("event: info: %w", err)
	}
	if admit != nil {
		in.WaitingRoom = &WaitingRoom{AdmitPerSecond: int(*admit)}
	}
	in.OnSaleAt, in.StartsAt = in.OnSaleAt.UTC(), in.StartsAt.UTC()
	if in.Sections, err = s.sections(ctx, id); err != nil {
		return Info{}, err
	}
	return in, nil
}

// seatMap reads every seat of the event in seat-map order, not its places
// (row label ""); nil when the event does not exist. An event of general
// admission alone has an empty seat map.
func (s store) seatMap(ctx context.Context, id string) (*SeatMap, error) {
	asOf := time.Now().UTC()
	rows, err := s.db.Query(ctx, `
		SELECT id::text, section, row_label, number, price_cents,
		       CASE WHEN sold_at IS NOT NULL THEN 'sold'
		            WHEN held_until > now() THEN 'held'
		            ELSE 'available' END
		FROM seats WHERE event_id = $1 AND row_label <> '' ORDER BY position`, id)
	if err != nil {
		return nil, fmt.Errorf("event: seat map: %w", err)
	}
	seats, err := pgx.CollectRows(rows, pgx.RowToStructByPos[Seat])
	if err != nil {
		return nil, fmt.Errorf("event: seat map: %w", err)
	}
	if len(seats) == 0 {
		var exists bool
		if err := s.db.QueryRow(ctx, `SELECT EXISTS (SELECT FROM events WHERE id = $1)`, id).Scan(&exists); err != nil || !exists {
			return nil, err
		}
		seats = []Seat{}
	}
	return &SeatMap{EventID: id, AsOf: asOf, Seats: seats}, nil
}
