package hold

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/stagedoor/stagedoor/internal/event"
	"github.com/stagedoor/stagedoor/internal/testenv"
)

// fixture is a database with one organizer's event of three seats on sale, and
// one buyer.
type fixture struct {
	db      *pgxpool.Pool
	holds   *Service
	eventID string
	seats   []string
	buyer   string
}

func newFixture(t *testing.T) fixture {
	t.Helper()
	ctx := context.Background()
	db := testenv.Postgres(t)
	account := func(kind string) string { return newAccount(t, db, kind) }
	events := event.NewService(db, CreateSeats)
	ev, err := events.Create(ctx, event.Draft{
		OrganizerID: account("organizer"), Name: "E", Venue: "V", StartsAt: time.Now().Add(time.Hour),
		Sections: []event.Section{{Name: "S", Rows: 1, SeatsPerRow: 3, PriceCents: 100}},
	})
	if err != nil {
		t.Fatal(err)
	}
	f := fixture{db: db, holds: NewService(db, events, time.Minute, 10), eventID: ev.ID, buyer: account("buyer")}
	if f.seats = seatsOf(t, db, ev.ID); len(f.seats) != 3 {
		t.Fatalf("seats %v", f.seats)
	}
	return f
}

// seatsOf is the event's seats (not its places), in seat-map order.
func seatsOf(t testing.TB, db *pgxpool.Pool, eventID string) []string {
	t.Helper()
	rows, _ := db.Query(context.Background(), `SELECT id::text FROM seats WHERE event_id = $1 AND row_label <> '' ORDER BY position`, eventID)
	seats, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	return seats
}

// place holds the seats for the fixture's buyer.
func (f fixture) place(seats ...string) (Hold, error) { return f.placeAs(f.buyer, seats...) }

// placeAs holds the seats for buyer, planned then placed.
func (f fixture) placeAs(buyer string, seats ...string) (Hold, error) {
	ctx := context.Background()
	p, err := f.holds.Plan(ctx, buyer, f.eventID, seats)
	if err != nil {
		return Hold{}, err
	}
	return f.holds.Place(ctx, p)
}

// mustPlace is place, failing the test on its error.
func (f fixture) mustPlace(t *testing.T, seats ...string) Hold {
	t.Helper()
	h, err := f.place(seats...)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// TestPlacementDecidesOnTheSeatsNewestState: a placement whose seats all look
// free locks them, waiting for another transaction that holds a seat's row
// lock, and judges the seat as that transaction left it, not as it was when
// the placement began: taken meanwhile, the refusal names it and nothing is
// held. A seat that is already taken when the placement starts is refused at
// once, from a read, without waiting for any lock (TestRefusalsTakeNoLock).
func TestPlacementDecidesOnTheSeatsNewestState(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name      string
		before    string // the seat's state when the placement starts
		commit    string // what the locking transaction leaves
		wantTaken bool
	}{
		{"taken while waiting", `held_until = NULL`, `held_until = now() + interval '1 hour'`, false},
		{"left free while waiting", `held_until = NULL`, `held_until = NULL`, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			ctx := context.Background()
			if _, err := f.db.Exec(ctx, `UPDATE seats SET `+tt.before+` WHERE id = $1`, f.seats[1]); err != nil {
				t.Fatal(err)
			}
			h, err := behindALock(t, f.db, `UPDATE seats SET `+tt.commit+` WHERE id = $1`, []any{f.seats[1]}, true,
				func() (Hold, error) { return f.place(f.seats[2], f.seats[1], f.seats[0]) })

			var held int
			if err := f.db.QueryRow(ctx, `SELECT count(*) FROM seats WHERE hold_id IS NOT NULL`).Scan(&held); err != nil {
				t.Fatal(err)
			}
			var unavailable *UnavailableError
			switch {
			case tt.wantTaken && (err != nil || h.TotalCents != 300 || held != 3):
				t.Errorf("placement = %+v, %v with %d seats held; want a hold of all 3", h, err, held)
			case !tt.wantTaken && (!errors.As(err, &unavailable) || len(unavailable.SeatIDs) != 1 ||
				unavailable.SeatIDs[0] != f.seats[1] || !errors.Is(err, ErrSeatsUnavailable) || held != 0):
				t.Errorf("placement = %v with %d seats held; want ErrSeatsUnavailable naming only %s, nothing held",
					err, held, f.seats[1])
			}
		})
	}
}

// TestRefusalsTakeNoLock: a placement that asks for a seat already held is
// refused at once from its read, even while another transaction holds that
// seat's row lock: a refusal never queues on a hot seat.
func TestRefusalsTakeNoLock(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	f.mustPlace(t, f.seats[1])
	tx, err := f.db.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `SELECT 1 FROM seats WHERE id = $1 FOR UPDATE`, f.seats[1]); err != nil {
		t.Fatal(err)
	}
	refused := make(chan error, 1)
	go func() {
		_, err := f.place(f.seats[0], f.seats[1])
		refused <- err
	}()
	select {
	case err := <-refused:
		var unavailable *UnavailableError
		if !errors.As(err, &unavailable) || len(unavailable.SeatIDs) != 1 || unavailable.SeatIDs[0] != f.seats[1] {
			t.Errorf("placement = %v, want ErrSeatsUnavailable naming %s", err, f.seats[1])
		}
	case <-time.After(3 * time.Second):
		t.Fatal("the refused placement waited for the seat's row lock")
	}
	var locked int
	if err := f.db.QueryRow(ctx, `SELECT count(*) FROM seats WHERE id = $1 AND hold_id IS NOT NULL`, f.seats[0]).Scan(&locked); err != nil || locked != 0 {
		t.Errorf("the free seat of the refused placement was taken (%d, %v)", locked, err)
	}
}

// behindALock runs place while another transaction, which ran update (with
// args), holds its row locks; once place waits for them, that transaction
// commits (or rolls back), and behindALock returns what place returned.
func behindALock(t *testing.T, db *pgxpool.Pool, update string, args []any, commit bool, place func() (Hold, error)) (Hold, error) {
	t.Helper()
	ctx := context.Background()
	tx, err := db.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, update, args...); err != nil {
		t.Fatal(err)
	}
	type result struct {
		h   Hold
		err error
	}
	done := make(chan result, 1)
	go func() {
		h, err := place()
		done <- result{h, err}
	}()
	waitForLockWait(t, db)
	if commit {
		err = tx.Commit(ctx)
	} else {
		err = tx.Rollback(ctx)
	}
	if err != nil {
		t.Fatal(err)
	}
	r := <-done
	return r.h, r.err
}

// waitForLockWait returns once a session of this database waits for a lock.
func waitForLockWait(t *testing.T, db *pgxpool.Pool) {
	t.Helper()
	testenv.Eventually(t, 5*time.Second, func() bool { return lockWaiters(t, db) > 0 },
		"the placement to wait for the locked seat")
}

// lockWaiters counts the sessions of this database that wait for a lock.
func lockWaiters(t *testing.T, db *pgxpool.Pool) int {
	t.Helper()
	var waiting int
	if err := db.QueryRow(context.Background(), `SELECT count(*) FROM pg_stat_activity
		WHERE datname = current_database() AND wait_event_type = 'Lock'`).Scan(&waiting); err != nil {
		t.Error(err)
	}
	return waiting
}

func TestSweepMarksOnlyExpiredActiveHolds(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	expiring := f.mustPlace(t, f.seats[0])
	lasting := f.mustPlace(t, f.seats[1])
	if _, err := f.db.Exec(ctx, `UPDATE holds SET expires_at = now() - interval '1 second' WHERE id = $1`, expiring.ID); err != nil {
		t.Fatal(err)
	}
	if n, err := f.holds.Sweep(ctx); n != 1 || err != nil {
		t.Fatalf("Sweep = %d, %v; want 1", n, err)
	}
	if n, err := f.holds.Sweep(ctx); n != 0 || err != nil {
		t.Errorf("a second Sweep = %d, %v; want 0", n, err)
	}
	for id, want := range map[string]Status{expiring.ID: Expired, lasting.ID: Active} {
		if h, err := f.holds.Get(ctx, f.buyer, id); err != nil || h.Status != want {
			t.Errorf("hold %s = %s (%v), want %s", id, h.Status, err, want)
		}
	}
}
