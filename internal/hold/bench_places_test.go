package hold

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/stagedoor/stagedoor/internal/event"
	"github.com/stagedoor/stagedoor/internal/testenv"
)

// BenchmarkPlaceAndRelease places a hold of two and releases it, again and
// again, by one buyer at a time on a few connections: two random seats of a
// seated section of 2,000, or two places of a section of general admission of
// 2,000, on the same database, in turn.
func BenchmarkPlaceAndRelease(b *testing.B) {
	ctx := context.Background()
	f := newBenchFixture(b)
	b.SetParallelism(2)
	for _, kind := range []string{"seated", "general"} {
		b.Run(kind, func(b *testing.B) {
			b.RunParallel(func(pb *testing.PB) {
				buyer := newAccount(b, f.db, "buyer")
				for pb.Next() {
					var p Plan
					var err error
					if kind == "seated" {
						i, j := rand.IntN(len(f.seats)), rand.IntN(len(f.seats))
						if i == j {
							j = (j + 1) % len(f.seats)
						}
						p, err = f.holds.Plan(ctx, buyer, f.eventID, []string{f.seats[i], f.seats[j]})
					} else {
						p, err = f.holds.Plan(ctx, buyer, f.eventID, nil, General{SectionID: f.lawn, Quantity: 2})
					}
					if err != nil {
						b.Fatal(err)
					}
					h, err := f.holds.Place(ctx, p)
					if err != nil {
						continue
					}
					if err := f.holds.Release(ctx, buyer, h.ID); err != nil {
						b.Fatal(err)
					}
				}
			})
		})
	}
}

// benchFixture is an event of a seated section of 2,000 seats and a section of
// general admission, Lawn, of 2,000 places, with holds capped at 10.
type benchFixture struct {
	db      *pgxpool.Pool
	holds   *Service
	eventID string
	lawn    string
	seats   []string
}

func newBenchFixture(b *testing.B) benchFixture {
	ctx := context.Background()
	db, err := pgxpool.New(ctx, testenv.DatabaseURL(b)+"&pool_max_conns=8")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(db.Close)
	events := event.NewService(db, CreateSeats)
	ev, err := events.Create(ctx, event.Draft{
		OrganizerID: newAccount(b, db, "organizer"), Name: "E", Venue: "V", StartsAt: time.Now().Add(time.Hour),
		Sections: []event.Section{
			{Name: "S", Rows: 20, SeatsPerRow: 100, PriceCents: 100},
			{Name: "Lawn", GeneralAdmission: true, Capacity: 2000, PriceCents: 100},
		},
	})
	if err != nil {
		b.Fatal(err)
	}
	f := benchFixture{db: db, holds: NewService(db, events, time.Minute, 10), eventID: ev.ID, lawn: ev.Sections[1].ID}
	f.seats = seatsOf(b, db, ev.ID)
	return f
}
