package hold

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/stagedoor/stagedoor/internal/ids"
)

// TestRacingBuyersNeverShareASeat: buyers race for overlapping sets of the
// same three seats, all at once. A placed hold owns every one of its seats,
// no seat is owned by two holds, and every other placement is refused as
// unavailable, having taken nothing.
func TestRacingBuyersNeverShareASeat(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	sets := [][]string{
		{f.seats[0], f.seats[1]}, {f.seats[1], f.seats[2]}, {f.seats[0], f.seats[2]},
		{f.seats[0]}, {f.seats[1]}, {f.seats[2]}, {f.seats[0], f.seats[1], f.seats[2]},
	}
	const rounds = 3
	var (
		wg     sync.WaitGroup
		start  = make(chan struct{})
		mu     sync.Mutex
		placed []Hold
	)
	for i := range len(sets) * rounds {
		buyer := f.newBuyer(t)
		seats := sets[i%len(sets)]
		wg.Go(func() {
			p, err := f.holds.Plan(ctx, buyer, f.eventID, seats)
			if err != nil {
				t.Error(err)
				return
			}
			<-start
			h, err := f.holds.Place(ctx, p)
			var unavailable *UnavailableError
			switch {
			case err == nil:
				mu.Lock()
				placed = append(placed, h)
				mu.Unlock()
			case !errors.As(err, &unavailable):
				t.Errorf("a racing placement: %v, want placed or unavailable", err)
			}
		})
	}
	close(start)
	wg.Wait()
	owner := map[string]string{}
	for _, h := range placed {
		for _, s := range h.SeatIDs {
			if other, ok := owner[s]; ok {
				t.Errorf("seat %s placed in two holds, %s and %s", s, other, h.ID)
			}
			owner[s] = h.ID
		}
	}
	if len(owner) == 0 {
		t.Fatal("no placement won: the race proves nothing")
	}
	rows, err := f.db.Query(ctx, `SELECT id::text, coalesce(hold_id::text, '') FROM seats WHERE event_id = $1`, f.eventID)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var seat, holdID string
		if err := rows.Scan(&seat, &holdID); err != nil {
			t.Fatal(err)
		}
		if holdID != owner[seat] {
			t.Errorf("seat %s is held by %q, but the placements say %q", seat, holdID, owner[seat])
		}
	}
	var holds int
	if err := f.db.QueryRow(ctx, `SELECT count(*) FROM holds WHERE event_id = $1`, f.eventID).Scan(&holds); err != nil {
		t.Fatal(err)
	}
	if holds != len(placed) {
		t.Errorf("%d holds stored, %d placed: a refused placement wrote one", holds, len(placed))
	}
}

// TestRacingPlacementsOfOneBuyerKeepTheCap: one buyer places holds of one
// seat each, all at once, with a cap of one held seat: exactly one is placed,
// the others are refused as too many seats held.
func TestRacingPlacementsOfOneBuyerKeepTheCap(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	capped := NewService(f.db, f.holds.events, time.Minute, 1)
	var (
		wg     sync.WaitGroup
		start  = make(chan struct{})
		mu     sync.Mutex
		placed int
	)
	for _, seat := range f.seats {
		wg.Go(func() {
			p, err := capped.Plan(ctx, f.buyer, f.eventID, []string{seat})
			if err != nil {
				t.Error(err)
				return
			}
			<-start
			_, err = capped.Place(ctx, p)
			var tooMany *TooManyHeldError
			switch {
			case err == nil:
				mu.Lock()
				placed++
				mu.Unlock()
			case !errors.As(err, &tooMany) || tooMany.Max != 1 || tooMany.Held != 1:
				t.Errorf("a placement past the cap: %v, want too many seats held (1 of 1)", err)
			}
		})
	}
	close(start)
	wg.Wait()
	if placed != 1 {
		t.Errorf("%d placements of one buyer under a cap of one seat, want 1", placed)
	}
}

// newBuyer is another buyer's account.
func (f fixture) newBuyer(t *testing.T) string { return newAccount(t, f.db, "buyer") }

// newAccount stores an account of kind (its password no one's).
func newAccount(t testing.TB, db *pgxpool.Pool, kind string) string {
	t.Helper()
	var id string
	if err := db.QueryRow(context.Background(), `INSERT INTO accounts (id, kind, email, name, password_hash)
		VALUES (gen_random_uuid(), $1, $2, 'T', 'x') RETURNING id::text`, kind, ids.New()+"@example.com").Scan(&id); err != nil {
		t.Fatal(err)
	}
	return id
}
