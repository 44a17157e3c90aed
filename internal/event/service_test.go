package event

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/stagedoor/stagedoor/internal/errkind"
	"github.com/stagedoor/stagedoor/internal/ids"
	"github.com/stagedoor/stagedoor/internal/testenv"
)

// newEvents is a Service on a fresh database, its seats stored as
// hold.CreateSeats does (hold imports this package), and an organizer.
func newEvents(t *testing.T) (*Service, *pgxpool.Pool, string) {
	t.Helper()
	db := testenv.Postgres(t)
	var organizer string
	if err := db.QueryRow(context.Background(), `INSERT INTO accounts (id, kind, email, name, password_hash)
		VALUES (gen_random_uuid(), 'organizer', $1, 'O', 'x') RETURNING id::text`, ids.New()+"@example.com").Scan(&organizer); err != nil {
		t.Fatal(err)
	}
	return NewService(db, createSeats), db, organizer
}

// createSeats stores seats as hold.CreateSeats does.
func createSeats(ctx context.Context, tx pgx.Tx, eventID string, seats []NewSeat) error {
	for i, s := range seats {
		if _, err := tx.Exec(ctx, `
			INSERT INTO seats (id, event_id, position, section, row_label, number, price_cents)
			VALUES (gen_random_uuid(), $1, $2, $3, $4, $5, $6)`, eventID, i, s.Section, s.Row, s.Number, s.PriceCents); err != nil {
			return err
		}
	}
	return nil
}

// draft is an event an hour away with two seated sections: Floor, 2 rows of 3
// at 5000, and Balcony, 1 row of 2 at 2500.
func draft(organizer string) Draft {
	return Draft{OrganizerID: organizer, Name: "Night", Venue: "Hall", StartsAt: time.Now().Add(time.Hour),
		Currency: "EUR", Sections: []Section{
			{Name: "Floor", Rows: 2, SeatsPerRow: 3, PriceCents: 5000},
			{Name: "Balcony", Rows: 1, SeatsPerRow: 2, PriceCents: 2500},
		}}
}

// create is events.Create(d), failing the test on its error.
func create(t *testing.T, events *Service, d Draft) Event {
	t.Helper()
	e, err := events.Create(context.Background(), d)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// snapshotClock is a new clock that events' snapshots, of events and of seat
// maps, age by.
func snapshotClock(events *Service) *testenv.Clock {
	clock := newClock()
	events.events.now, events.seatMaps.now = clock.Now, clock.Now
	return clock
}

// TestCreateRefusesADraftAndStoresNothing: each wrong draft is errkind.Invalid
// and leaves no event, section or seat behind.
func TestCreateRefusesADraftAndStoresNothing(t *testing.T) {
	t.Parallel()
	events, db, organizer := newEvents(t)
	for name, change := range map[string]func(*Draft){
		"no start":              func(d *Draft) { d.StartsAt = time.Time{} },
		"started":               func(d *Draft) { d.StartsAt = time.Now().Add(-time.Minute) },
		"on sale after start":   func(d *Draft) { d.OnSaleAt = d.StartsAt.Add(time.Minute) },
		"lower-case currency":   func(d *Draft) { d.Currency = "eur" },
		"no section":            func(d *Draft) { d.Sections = nil },
		"two sections one name": func(d *Draft) { d.Sections[1].Name = d.Sections[0].Name },
		"no rows":               func(d *Draft) { d.Sections[0].Rows = 0 },
		"too many seats a row":  func(d *Draft) { d.Sections[0].SeatsPerRow = MaxSeatsPerRow + 1 },
		"a negative price":      func(d *Draft) { d.Sections[1].PriceCents = -1 },
		"a still waiting room":  func(d *Draft) { d.WaitingRoom = &WaitingRoom{AdmitPerSecond: 0} },
		"a place-less GA":       func(d *Draft) { d.Sections[1] = Section{Name: "Lawn", GeneralAdmission: true, PriceCents: 1} },
		"GA past the bound": func(d *Draft) {
			d.Sections[1] = Section{Name: "Lawn", GeneralAdmission: true, Capacity: MaxSeats + 1, PriceCents: 1}
		},
		"GA with rows": func(d *Draft) {
			d.Sections[1] = Section{Name: "Lawn", GeneralAdmission: true, Capacity: 5, Rows: 1, PriceCents: 1}
		},
		"seated with a capacity": func(d *Draft) { d.Sections[0].Capacity = 6 },
		"seats and places past the bound": func(d *Draft) {
			d.Sections[1] = Section{Name: "Lawn", GeneralAdmission: true, Capacity: MaxSeats - 5, PriceCents: 1}
		},
	} {
		d := draft(organizer)
		change(&d)
		if _, err := events.Create(context.Background(), d); !errors.Is(err, errkind.Invalid) {
			t.Errorf("%s: %v, want errkind.Invalid", name, err)
		}
	}
	var n int
	if err := db.QueryRow(context.Background(),
		`SELECT (SELECT count(*) FROM events) + (SELECT count(*) FROM event_sections) + (SELECT count(*) FROM seats)`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Errorf("refused drafts left %d rows", n)
	}
}

// TestCreateGeneratesSeatsRowByRow: each section's rows A, B, … numbered from
// 1, in the sections' order, at the section's price, all available; the
// event counts them.
func TestCreateGeneratesSeatsRowByRow(t *testing.T) {
	t.Parallel()
	events, _, organizer := newEvents(t)
	ctx := context.Background()
	e := create(t, events, draft(organizer))
	if e.SeatsTotal != 8 || e.SeatsAvailable != 8 {
		t.Errorf("created: %d seats, %d available; want 8, 8", e.SeatsTotal, e.SeatsAvailable)
	}
	m, err := events.SeatMap(ctx, e.ID)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"Floor A1", "Floor A2", "Floor A3", "Floor B1", "Floor B2", "Floor B3", "Balcony A1", "Balcony A2"}
	if len(m.Seats) != len(want) {
		t.Fatalf("%d seats, want %d", len(m.Seats), len(want))
	}
	for i, s := range m.Seats {
		got := s.Section + " " + s.Row + string(rune('0'+s.Number))
		price := int64(5000)
		if s.Section == "Balcony" {
			price = 2500
		}
		if got != want[i] || s.PriceCents != price || s.Status != Available {
			t.Errorf("seat %d: %s at %d, %s; want %s at %d, available", i, got, s.PriceCents, s.Status, want[i], price)
		}
	}
	got, err := events.Get(ctx, e.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Sections) != 2 || got.Sections[1].Name != "Balcony" || got.SeatsTotal != 8 || got.Currency != "EUR" {
		t.Errorf("Get = %+v", got)
	}
	if _, err := events.Get(ctx, ids.New()); !errors.Is(err, errkind.NotFound) {
		t.Errorf("Get(unknown) = %v, want errkind.NotFound", err)
	}
}

// TestASeatMapIsReadOnceASnapshot: a crowd of readers of one seat map costs
// one query, however many; the next one comes once the snapshot is
// SnapshotMaxAge old, and shows what changed meanwhile.
func TestASeatMapIsReadOnceASnapshot(t *testing.T) {
	t.Parallel()
	events, db, organizer := newEvents(t)
	clock := snapshotClock(events)
	ctx := context.Background()
	e := create(t, events, draft(organizer))
	var wg sync.WaitGroup
	for range 50 {
		wg.Go(func() {
			if m, err := events.SeatMap(ctx, e.ID); err != nil || len(m.Seats) != 8 {
				t.Errorf("SeatMap = %v, %v", m, err)
			}
		})
	}
	wg.Wait()
	if n := events.SeatMapQueries(); n != 1 {
		t.Fatalf("50 readers sent %d queries, want 1", n)
	}
	if _, err := db.Exec(ctx, `UPDATE seats SET sold_at = now() WHERE event_id = $1 AND position = 0`, e.ID); err != nil {
		t.Fatal(err)
	}
	clock.Add(SnapshotMaxAge - time.Millisecond)
	if m, _ := events.SeatMap(ctx, e.ID); m.Seats[0].Status != Available || events.SeatMapQueries() != 1 {
		t.Errorf("a snapshot younger than SnapshotMaxAge was read again")
	}
	clock.Add(time.Millisecond)
	if m, _ := events.SeatMap(ctx, e.ID); m.Seats[0].Status != Sold || events.SeatMapQueries() != 2 {
		t.Errorf("a snapshot SnapshotMaxAge old was served again: seat 0 %s, %d queries", m.Seats[0].Status, events.SeatMapQueries())
	}
	if m, err := events.SeatMap(ctx, ids.New()); err == nil && m != nil {
		t.Errorf("an unknown event's seat map: %v", m)
	}
}

// TestAGeneralAdmissionSectionHasPlacesNotSeats: a section of general
// admission stores its capacity of places, at its price, which the seat map
// does not list; the event counts them with its seats, and Get gives every
// section its id, kind, capacity and what is available of it, as of its
// snapshot.
func TestAGeneralAdmissionSectionHasPlacesNotSeats(t *testing.T) {
	t.Parallel()
	events, db, organizer := newEvents(t)
	clock := snapshotClock(events)
	ctx := context.Background()
	d := draft(organizer)
	d.Sections[1] = Section{Name: "Lawn", GeneralAdmission: true, Capacity: 5, PriceCents: 1500}
	e := create(t, events, d)
	if e.SeatsTotal != 11 || len(e.Sections) != 2 || e.Sections[1].ID == "" || e.Sections[1].Available != 5 || e.Sections[0].Capacity != 6 {
		t.Fatalf("created %+v", e)
	}
	var places, numbers int
	if err := db.QueryRow(ctx, `SELECT count(*), coalesce(sum(number), 0) FROM seats
		WHERE event_id = $1 AND section = 'Lawn' AND row_label = '' AND price_cents = 1500`, e.ID).Scan(&places, &numbers); err != nil {
		t.Fatal(err)
	}
	if places != 5 || numbers != 15 {
		t.Errorf("%d places numbered to a sum of %d, want 5 numbered 1 to 5", places, numbers)
	}
	if d.Sections[0].Capacity != 0 {
		t.Errorf("Create changed the draft's sections: %+v", d.Sections[0])
	}
	if _, err := events.Create(ctx, d); err != nil {
		t.Errorf("the same draft again: %v", err)
	}
	m, err := events.SeatMap(ctx, e.ID)
	if err != nil || len(m.Seats) != 6 {
		t.Fatalf("the seat map lists %d seats (%v), want the 6 of Floor", len(m.Seats), err)
	}
	// Two places held, one sold, a seat held: Get shows them once its
	// snapshot is SnapshotMaxAge old.
	if _, err := db.Exec(ctx, `
		UPDATE seats SET held_until = CASE WHEN number < 3 THEN now() + interval '1 hour' END,
		                 sold_at = CASE WHEN number = 3 THEN now() END
		WHERE event_id = $1 AND (row_label = '' AND number <= 3 OR position = 0)`, e.ID); err != nil {
		t.Fatal(err)
	}
	before, err := events.Get(ctx, e.ID)
	if err != nil {
		t.Fatal(err)
	}
	if before.Sections[1].Available != 2 {
		t.Fatalf("the first Get saw %d places of Lawn available, want 2", before.Sections[1].Available)
	}
	if _, err := db.Exec(ctx, `UPDATE seats SET held_until = NULL WHERE event_id = $1 AND row_label = ''`, e.ID); err != nil {
		t.Fatal(err)
	}
	clock.Add(SnapshotMaxAge - time.Millisecond)
	if got, _ := events.Get(ctx, e.ID); got.Sections[1].Available != 2 {
		t.Errorf("a snapshot younger than SnapshotMaxAge was read again")
	}
	clock.Add(time.Millisecond)
	got, err := events.Get(ctx, e.ID)
	if err != nil {
		t.Fatal(err)
	}
	lawn, floor := got.Sections[1], got.Sections[0]
	if lawn.ID != e.Sections[1].ID || !lawn.GeneralAdmission || lawn.Capacity != 5 || lawn.Available != 4 || lawn.Rows != 0 {
		t.Errorf("Lawn as read: %+v; want general admission, 5 places, 4 available", lawn)
	}
	if floor.GeneralAdmission || floor.Rows != 2 || floor.SeatsPerRow != 3 || floor.Capacity != 6 || floor.Available != 5 {
		t.Errorf("Floor as read: %+v; want 2 rows of 3, 5 available", floor)
	}
	if got.SeatsTotal != 11 || got.SeatsAvailable != 9 || got.SeatsSold != 1 || got.SeatsHeld != 1 {
		t.Errorf("the event counts %d, %d available, %d sold, %d held; want 11, 9, 1, 1",
			got.SeatsTotal, got.SeatsAvailable, got.SeatsSold, got.SeatsHeld)
	}
	in, err := events.Info(ctx, e.ID)
	if s, ok := in.Section(lawn.ID); err != nil || !ok || s.Name != "Lawn" || !s.GeneralAdmission || s.Capacity != 5 {
		t.Errorf("Info's section %s: %+v, %v, %v", lawn.ID, s, ok, err)
	}
}

// TestAnEventOfPlacesAloneHasAnEmptySeatMap: its seat map is empty, not
// missing.
func TestAnEventOfPlacesAloneHasAnEmptySeatMap(t *testing.T) {
	t.Parallel()
	events, _, organizer := newEvents(t)
	ctx := context.Background()
	d := draft(organizer)
	d.Sections = []Section{{Name: "Field", GeneralAdmission: true, Capacity: 3}}
	e := create(t, events, d)
	m, err := events.SeatMap(ctx, e.ID)
	if err != nil || m == nil || len(m.Seats) != 0 {
		t.Errorf("SeatMap = %+v, %v; want an empty map", m, err)
	}
}
