package seatstream_test

import (
	"context"
	"testing"
	"time"

	"github.com/stagedoor/stagedoor/internal/event"
	"github.com/stagedoor/stagedoor/internal/hold"
	"github.com/stagedoor/stagedoor/internal/ids"
	"github.com/stagedoor/stagedoor/internal/seatstream"
	"github.com/stagedoor/stagedoor/internal/testenv"
)

// TestAHoldReachesTheWatchersOfItsEvent watches a real event's seat map
// (event.Service's snapshots on PostgreSQL): a hold placed and released
// reaches the watcher as two changes of that seat alone, and a watcher of
// another event hears nothing of it.
func TestAHoldReachesTheWatchersOfItsEvent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testenv.Postgres(t)
	account := func(kind string) string {
		var id string
		if err := db.QueryRow(ctx, `INSERT INTO accounts (id, kind, email, name, password_hash)
			VALUES (gen_random_uuid(), $1, $2, 'T', 'x') RETURNING id::text`, kind, ids.New()+"@example.com").Scan(&id); err != nil {
			t.Fatal(err)
		}
		return id
	}
	events := event.NewService(db, hold.CreateSeats)
	organizer, buyer := account("organizer"), account("buyer")
	draft := event.Draft{OrganizerID: organizer, Name: "E", Venue: "V", StartsAt: time.Now().Add(time.Hour),
		Sections: []event.Section{{Name: "S", Rows: 1, SeatsPerRow: 3, PriceCents: 100}}}
	watched, err := events.Create(ctx, draft)
	if err != nil {
		t.Fatal(err)
	}
	other, err := events.Create(ctx, draft)
	if err != nil {
		t.Fatal(err)
	}
	hub := seatstream.New(events, seatstream.Options{Every: 50 * time.Millisecond})
	defer hub.Close()
	sub, err := hub.Subscribe(ctx, watched.ID)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	elsewhere, err := hub.Subscribe(ctx, other.ID)
	if err != nil {
		t.Fatal(err)
	}
	defer elsewhere.Close()
	first, _ := next(t, sub)
	all := seats(t, first)
	if len(all) != 3 {
		t.Fatalf("the snapshot lists %d seats, want 3", len(all))
	}
	next(t, elsewhere)
	var seat string
	for id := range all {
		seat = id
		break
	}

	holds := hold.NewService(db, events, time.Minute, 10)
	p, err := holds.Plan(ctx, buyer, watched.ID, []string{seat})
	if err != nil {
		t.Fatal(err)
	}
	h, err := holds.Place(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	m, _ := next(t, sub)
	if got := seats(t, m); len(got) != 1 || got[seat] != event.Held {
		t.Fatalf("after the hold: %s %s, want seat %s held, alone", kind(m), statusesOf(m), seat)
	}
	if err := holds.Release(ctx, buyer, h.ID); err != nil {
		t.Fatal(err)
	}
	m, _ = next(t, sub)
	if got := seats(t, m); len(got) != 1 || got[seat] != event.Available {
		t.Fatalf("after the release: %s %s, want seat %s available, alone", kind(m), statusesOf(m), seat)
	}
	select {
	case m := <-elsewhere.C:
		t.Errorf("the other event's watcher got %s %s", kind(m), statusesOf(m))
	default:
	}
}
