package hold

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/stagedoor/stagedoor/internal/testenv"
)

// racePools are, on a fresh database, a pool of as many connections as an
// instance has (STAGEDOOR_DB_POOL), so that racing placements run at once
// rather than queue for testenv's few connections, and a small one for the
// test's own statements while they race.
func racePools(t *testing.T) (racers, watcher *pgxpool.Pool) {
	t.Helper()
	url := testenv.DatabaseURL(t)
	pool := func(size string) *pgxpool.Pool {
		db, err := pgxpool.New(context.Background(), url+"&pool_max_conns="+size)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(db.Close)
		return db
	}
	return pool("24"), pool("2")
}

// raceResult is one racer's: what it asked for and what it was told.
type raceResult struct {
	seats []string
	asked int // places of Lawn
	hold  Hold
	err   error
}

// race has each of the requests placed by a buyer of its own, all at once,
// and while they run calls during (when not nil) with the count of those
// answered so far.
func race(t *testing.T, f placesFixture, requests []raceResult, during func(answered *atomic.Int64)) []raceResult {
	t.Helper()
	buyers := make([]string, len(requests))
	for i := range buyers {
		buyers[i] = f.newBuyer(t)
	}
	start := make(chan struct{})
	var wg sync.WaitGroup
	var answered atomic.Int64
	for i := range requests {
		r := &requests[i]
		wg.Go(func() {
			defer answered.Add(1)
			ctx := context.Background()
			var general []General
			if r.asked > 0 {
				general = []General{{SectionID: f.lawn, Quantity: r.asked}}
			}
			p, err := f.holds.Plan(ctx, buyers[i], f.eventID, r.seats, general...)
			if err != nil {
				r.err = err
				return
			}
			<-start
			r.hold, r.err = f.holds.Place(ctx, p)
		})
	}
	close(start)
	if during != nil {
		during(&answered)
	}
	wg.Wait()
	return requests
}

// checkOwners fails the test unless every seat and place is owned by at most
// one of the holds placed, and the database says each one's owner is exactly
// the hold the placements say; it returns how many places the holds took.
func checkOwners(t *testing.T, f placesFixture, results []raceResult) int {
	t.Helper()
	owner := map[string]string{}
	places := 0
	for _, r := range results {
		if r.err != nil {
			continue
		}
		for _, s := range r.hold.SeatIDs {
			if other, ok := owner[s]; ok {
				t.Errorf("%s is in two holds, %s and %s", s, other, r.hold.ID)
			}
			owner[s] = r.hold.ID
		}
		places += len(r.hold.SeatIDs) - len(r.seats)
	}
	rows, err := f.db.Query(context.Background(), `SELECT id::text, coalesce(hold_id::text, '') FROM seats
		WHERE event_id = $1 AND held_until > now()`, f.eventID)
	if err != nil {
		t.Fatal(err)
	}
	held := 0
	for rows.Next() {
		var seat, holdID string
		if err := rows.Scan(&seat, &holdID); err != nil {
			t.Fatal(err)
		}
		held++
		if owner[seat] != holdID {
			t.Errorf("%s is held by %q, the placements say %q", seat, holdID, owner[seat])
		}
	}
	if rows.Err() != nil || held != len(owner) {
		t.Errorf("%d seats and places held, the placements took %d (%v)", held, len(owner), rows.Err())
	}
	return places
}

// TestFiveHundredBuyersRaceForTheLastPlaces: 500 buyers, each asking for 1 to
// 3 places of Lawn, race for its last 50 (the others sold), while a slow
// placement holds the row locks of 5 of them, and rolls back only once every
// racer has been answered or waits for a lock (the pool's 24 connections
// waiting, or the rest answered). Exactly the 50 are held, none twice, by
// holds of exactly the quantities asked; every other buyer is told sold out,
// with fewer places left than they asked for, and nothing else; once a buyer
// asking for 1 is refused, none was left, so the winners' places are the 50:
// the 5 too, which no racer could take without waiting.
func TestFiveHundredBuyersRaceForTheLastPlaces(t *testing.T) {
	t.Parallel()
	const capacity, left, buyers = 400, 50, 500
	racers, watcher := racePools(t)
	f := newPlacesFixture(t, racers, capacity, 10)
	ctx := context.Background()
	if _, err := f.db.Exec(ctx, `UPDATE seats SET sold_at = now() WHERE id IN (
		SELECT id FROM seats WHERE event_id = $1 AND row_label = '' ORDER BY random() LIMIT $2)`, f.eventID, capacity-left); err != nil {
		t.Fatal(err)
	}
	slow, err := watcher.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Rollback(ctx)
	if _, err := slow.Exec(ctx, `SELECT id FROM seats WHERE event_id = $1 AND row_label = '' AND sold_at IS NULL
		ORDER BY random() LIMIT 5 FOR NO KEY UPDATE`, f.eventID); err != nil {
		t.Fatal(err)
	}
	requests := make([]raceResult, buyers)
	for i := range requests {
		requests[i].asked = 1 + rand.IntN(3)
	}
	results := race(t, f, requests, func(answered *atomic.Int64) {
		testenv.Eventually(t, time.Minute, func() bool {
			waiting := lockWaiters(t, watcher)
			return waiting >= 24 || int(answered.Load())+waiting >= buyers
		}, "every racer answered or waiting for a lock")
		if err := slow.Rollback(ctx); err != nil {
			t.Error(err)
		}
	})

	winners, oneRefused := 0, false
	for _, r := range results {
		var sold *SoldOutError
		switch {
		case r.err == nil:
			winners++
			if len(r.hold.SeatIDs) != r.asked || len(r.hold.General) != 1 || r.hold.General[0].Quantity != r.asked {
				t.Errorf("a winner asked for %d places and holds %+v", r.asked, r.hold)
			}
		case !errors.As(r.err, &sold):
			t.Errorf("a racer: %v, want a hold or sold out", r.err)
		case sold.Sections[0].Available >= r.asked || sold.Sections[0].Available < 0:
			t.Errorf("a racer asking for %d was told sold out with %d left", r.asked, sold.Sections[0].Available)
		default:
			oneRefused = oneRefused || r.asked == 1
		}
	}
	places := checkOwners(t, f, results)
	if !oneRefused {
		t.Fatal("no buyer asking for 1 place was refused: the race proves nothing")
	}
	if places != left || f.free(t) != 0 {
		t.Errorf("%d winners hold %d places and %d are free; want the %d that were left, held", winners, places, f.free(t), left)
	}
	var sold int
	if err := f.db.QueryRow(ctx, `SELECT count(*) FROM seats WHERE event_id = $1 AND sold_at IS NOT NULL`, f.eventID).Scan(&sold); err != nil || sold != capacity-left {
		t.Errorf("%d places sold, want %d untouched (%v)", sold, capacity-left, err)
	}
}

// TestPlacesAndSeatsRaceTogether: 300 buyers ask at once for a seat of S (3
// seats), places of Lawn (20), or both. No seat or place is in two holds; a
// refusal says seats taken or sold out, and nothing else; a hold of both is
// all or nothing (a refused one took neither, checked by the owners); Lawn's
// 20 places are all held once a buyer asking for 1 place alone was refused,
// and each seat once a buyer asking for it alone was.
func TestPlacesAndSeatsRaceTogether(t *testing.T) {
	t.Parallel()
	racers, _ := racePools(t)
	f := newPlacesFixture(t, racers, 20, 10)
	requests := make([]raceResult, 300)
	for i := range requests {
		r := &requests[i]
		switch i % 3 {
		case 0:
			r.seats = []string{f.seats[rand.IntN(3)]}
		case 1:
			r.asked = 1 + rand.IntN(3)
		default:
			r.seats, r.asked = []string{f.seats[rand.IntN(3)]}, 1+rand.IntN(2)
		}
	}
	results := race(t, f, requests, nil)
	onePlaceRefused := false
	seatRefused := map[string]bool{}
	for _, r := range results {
		var sold *SoldOutError
		var unavailable *UnavailableError
		switch {
		case r.err == nil:
		case errors.As(r.err, &sold):
			if r.asked == 0 || sold.Sections[0].Available >= r.asked {
				t.Errorf("sold out for a hold of %d places, with %d left", r.asked, sold.Sections[0].Available)
			}
			onePlaceRefused = onePlaceRefused || r.asked == 1 && len(r.seats) == 0
		case errors.As(r.err, &unavailable):
			if len(r.seats) == 0 {
				t.Errorf("seats unavailable for a hold of places alone: %v", r.err)
			}
			if r.asked == 0 {
				seatRefused[r.seats[0]] = true
			}
		default:
			t.Errorf("a racer: %v, want a hold, seats unavailable or sold out", r.err)
		}
	}
	places := checkOwners(t, f, results)
	if !onePlaceRefused || len(seatRefused) != 3 {
		t.Fatalf("refused: a buyer of 1 place %v, buyers of %d seats alone: the race proves nothing", onePlaceRefused, len(seatRefused))
	}
	if places != 20 || f.free(t) != 0 {
		t.Errorf("the holds took %d places of Lawn and %d are free; want all 20 held", places, f.free(t))
	}
	var freeSeats int
	if err := f.db.QueryRow(context.Background(), `SELECT count(*) FROM seats WHERE event_id = $1 AND row_label <> ''
		AND held_until IS NULL`, f.eventID).Scan(&freeSeats); err != nil || freeSeats != 0 {
		t.Errorf("%d seats of S free after buyers of each were refused (%v)", freeSeats, err)
	}
}
