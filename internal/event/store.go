package event

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
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
		WaitingRoom: d.WaitingRoom, Sections: d.Sections, Status: Scheduled,
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

	var (
		names        []string
		rows, perRow []int32
		prices       []int64
		seats        []NewSeat
	)
	for _, sec := range d.Sections {
		names = append(names, sec.Name)
		rows = append(rows, int32(sec.Rows))
		perRow = append(perRow, int32(sec.SeatsPerRow))
		prices = append(prices, sec.PriceCents)
		for r := range sec.Rows {
			label := RowLabel(r)
			for n := 1; n <= sec.SeatsPerRow; n++ {
				seats = append(seats, NewSeat{Section: sec.Name, Row: label, Number: n, PriceCents: sec.PriceCents})
			}
		}
	}
	if _, err := tx.Exec(ctx, `
		INSERT INTO event_sections (event_id, position, name, rows, seats_per_row, price_cents)
		SELECT $1, t.p - 1, t.name, t.rows, t.per_row, t.price
		FROM unnest($2::text[], $3::int[], $4::int[], $5::bigint[])
		     WITH ORDINALITY AS t(name, rows, per_row, price, p)`,
		e.ID, names, rows, perRow, prices); err != nil {
		return Event{}, fmt.Errorf("event: create sections: %w", err)
	}
	if err := s.createSeats(ctx, tx, e.ID, seats); err != nil {
		return Event{}, fmt.Errorf("event: create seats: %w", err)
	}
	if err := tx.Commit(ctx); err != nil {
		return Event{}, fmt.Errorf("event: create: %w", err)
	}
	e.SeatsTotal, e.SeatsAvailable = len(seats), len(seats)
	e.StartsAt, e.OnSaleAt, e.CreatedAt = e.StartsAt.UTC(), e.OnSaleAt.UTC(), e.CreatedAt.UTC()
	return e, nil
}

// selectEvents reads events with their seat counts; a WHERE clause and ORDER BY
// follow it.
const selectEvents = `
	SELECT e.id::text, e.organizer_id::text, e.name, e.venue, e.starts_at, e.on_sale_at,
	       e.currency, e.admit_per_second, e.created_at, e.description, e.refunds_until, e.status, e.cancelled_at,
	       c.total, c.available, c.held, c.sold
	FROM events e
	CROSS JOIN LATERAL (
		SELECT count(*) AS total,
		       count(*) FILTER (WHERE s.sold_at IS NULL AND (s.held_until IS NULL OR s.held_until <= now())) AS available,
		       count(*) FILTER (WHERE s.sold_at IS NULL AND s.held_until > now()) AS held,
		       count(*) FILTER (WHERE s.sold_at IS NOT NULL) AS sold
		FROM seats s WHERE s.event_id = e.id
	) c`

func scanEvent(row pgx.Row) (Event, error) {
	var e Event
	var admit *int32
	err := row.Scan(&e.ID, &e.OrganizerID, &e.Name, &e.Venue, &e.StartsAt, &e.OnSaleAt,
		&e.Currency, &admit, &e.CreatedAt, &e.Description, &e.RefundsUntil, &e.Status, &e.CancelledAt,
		&e.SeatsTotal, &e.SeatsAvailable, &e.SeatsHeld, &e.SeatsSold)
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

// get returns one event with its sections, or an errkind.NotFound error.
func (s store) get(ctx context.Context, id string) (Event, error) {
	e, err := scanEvent(s.db.QueryRow(ctx, selectEvents+" WHERE e.id = $1", id))
	if errors.Is(err, pgx.ErrNoRows) {
		return Event{}, errNotFound
	}
	if err != nil {
		return Event{}, fmt.Errorf("event: get: %w", err)
	}
	rows, err := s.db.Query(ctx, `
		SELECT name, rows, seats_per_row, price_cents FROM event_sections
		WHERE event_id = $1 ORDER BY position`, id)
	if err != nil {
		return Event{}, fmt.Errorf("event: get sections: %w", err)
	}
	e.Sections, err = pgx.CollectRows(rows, pgx.RowToStructByPos[Section])
	if err != nil {
		return Event{}, fmt.Errorf("event: get sections: %w", err)
	}
	return e, nil
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
	return in, nil
}

// seatMap reads every seat of the event in seat-map order; nil when the event
// does not exist (an event always has seats).
func (s store) seatMap(ctx context.Context, id string) (*SeatMap, error) {
	asOf := time.Now().UTC()
	rows, err := s.db.Query(ctx, `
		SELECT id::text, section, row_label, number, price_cents,
		       CASE WHEN sold_at IS NOT NULL THEN 'sold'
		            WHEN held_until > now() THEN 'held'
		            ELSE 'available' END
		FROM seats WHERE event_id = $1 ORDER BY position`, id)
	if err != nil {
		return nil, fmt.Errorf("event: seat map: %w", err)
	}
	seats, err := pgx.CollectRows(rows, pgx.RowToStructByPos[Seat])
	if err != nil {
		return nil, fmt.Errorf("event: seat map: %w", err)
	}
	if len(seats) == 0 {
		return nil, nil
	}
	return &SeatMap{EventID: id, AsOf: asOf, Seats: seats}, nil
}
