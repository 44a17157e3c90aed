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

func draft(organizer string) Draft {
	return Draft{OrganizerID: organizer, Name: "Night", Venue: "Hall", StartsAt: time.Now().Add(time.Hour),
		Currency: "EUR", Sections: []Section{
			{Name: "Floor", Rows: 2, SeatsPerRow: 3, PriceCents: 5000},
			{Name: "Balcony", Rows: 1, SeatsPerRow: 2, PriceCents: 2500},
		}}
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
	e, err := events.Create(ctx, draft(organizer))
	if err != nil {
		t.Fatal(err)
	}
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
	clock := newClock()
	events.seatMaps.now = clock.Now
	ctx := context.Background()
	e, err := events.Create(ctx, draft(organizer))
	if err != nil {
		t.Fatal(err)
	}
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
