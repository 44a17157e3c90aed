package hold

import (
	"context"
	"errors"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/stagedoor/stagedoor/internal/errkind"
	"github.com/stagedoor/stagedoor/internal/ids"
)

// TestStatusesMatchTheCheckConstraint: the Go set of statuses is exactly what
// the CHECK constraint of holds.status's domain (hold_status) allows.
func TestStatusesMatchTheCheckConstraint(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	var def string
	if err := f.db.QueryRow(context.Background(), `
		SELECT pg_get_constraintdef(c.oid) FROM pg_constraint c
		JOIN pg_attribute a ON a.attrelid = 'holds'::regclass AND a.attname = 'status'
		WHERE c.contypid = a.atttypid AND c.contype = 'c'`).
		Scan(&def); err != nil {
		t.Fatal(err)
	}
	var inDB []string
	for _, m := range regexp.MustCompile(`'([a-z_]+)'`).FindAllStringSubmatch(def, -1) {
		inDB = append(inDB, m[1])
	}
	var inGo []string
	for _, s := range Statuses {
		inGo = append(inGo, string(s))
	}
	slices.Sort(inDB)
	slices.Sort(inGo)
	if !slices.Equal(inDB, inGo) {
		t.Errorf("CHECK allows %v, hold.Statuses is %v (constraint: %s)", inDB, inGo, def)
	}
}

// TestHoldsRefuseWhatTheirDomainsForbid: the domains of holds' columns keep
// what their CHECK constraints kept: a status of Statuses, 1 to 10 seats, a
// total that is not negative, on an update as on an insert.
func TestHoldsRefuseWhatTheirDomainsForbid(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	p, err := f.holds.Plan(ctx, f.buyer, f.eventID, f.seats[:1])
	if err != nil {
		t.Fatal(err)
	}
	h, err := f.holds.Place(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	eleven := make([]string, 11)
	for i := range eleven {
		eleven[i] = ids.New()
	}
	for name, write := range map[string]func() error{
		"an unknown status": func() error {
			_, err := f.db.Exec(ctx, `UPDATE holds SET status = 'lost' WHERE id = $1`, h.ID)
			return err
		},
		"no seats": func() error {
			_, err := f.db.Exec(ctx, `UPDATE holds SET seat_ids = '{}' WHERE id = $1`, h.ID)
			return err
		},
		"a negative total": func() error {
			_, err := f.db.Exec(ctx, `UPDATE holds SET total_cents = -1 WHERE id = $1`, h.ID)
			return err
		},
		"eleven seats": func() error {
			_, err := f.db.Exec(ctx, `
				INSERT INTO holds (id, event_id, buyer_id, seat_ids, total_cents, currency, expires_at)
				VALUES ($1, $2, $3, $4::uuid[], 0, 'EUR', now())`, ids.New(), f.eventID, f.buyer, eleven)
			return err
		},
	} {
		var pgErr *pgconn.PgError
		if err := write(); !errors.As(err, &pgErr) || pgErr.Code != "23514" {
			t.Errorf("a hold with %s: %v, want a check violation (23514)", name, err)
		}
	}
}

// inTx runs fn in a transaction that commits when fn succeeds.
func (f fixture) inTx(t *testing.T, fn func(pgx.Tx) error) error {
	t.Helper()
	return pgx.BeginFunc(context.Background(), f.db, fn)
}

// seatStates returns, for each of the fixture's seats, "sold", "held",
// "held-forever" or "free".
func (f fixture) seatStates(t *testing.T) []string {
	t.Helper()
	rows, err := f.db.Query(context.Background(), `
		SELECT CASE WHEN sold_at IS NOT NULL THEN 'sold'
		            WHEN held_until = 'infinity' THEN 'held-forever'
		            WHEN held_until > now() THEN 'held'
		            ELSE 'free' END
		FROM seats WHERE event_id = $1 ORDER BY position`, f.eventID)
	if err != nil {
		t.Fatal(err)
	}
	states, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	return states
}

func TestCheckoutTransitions(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		to         Status
		wantSeats  string // of seats 0 and 1, after EndCheckout
		wantStatus Status
	}{
		{Converted, "sold sold", Converted},
		{Active, "held held", Active},
		{Released, "free free", Released},
	} {
		t.Run(string(tt.to), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			f := newFixture(t)
			h := f.mustPlace(t, f.seats[0], f.seats[1])
			if err := f.inTx(t, func(tx pgx.Tx) error {
				got, err := BeginCheckout(ctx, tx, f.buyer, h.ID)
				if err == nil && (got.Status != CheckingOut || len(got.SeatIDs) != 2 || got.TotalCents != 200) {
					t.Errorf("BeginCheckout = %+v", got)
				}
				return err
			}); err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(f.seatStates(t)[:2], " "); got != "held-forever held-forever" {
				t.Errorf("seats in checkout are %s, want held without end", got)
			}
			if err := f.holds.Release(ctx, f.buyer, h.ID); !errors.Is(err, ErrNotActive) {
				t.Errorf("releasing a hold in checkout = %v, want ErrNotActive", err)
			}
			if err := f.inTx(t, func(tx pgx.Tx) error {
				_, err := BeginCheckout(ctx, tx, f.buyer, h.ID)
				return err
			}); !errors.Is(err, ErrNotActive) {
				t.Errorf("a second BeginCheckout = %v, want ErrNotActive", err)
			}

			if err := f.inTx(t, func(tx pgx.Tx) error {
				seats, err := EndCheckout(ctx, tx, h.ID, tt.to)
				if err == nil && len(seats) != 2 {
					t.Errorf("EndCheckout returned seats %v", seats)
				}
				return err
			}); err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(f.seatStates(t)[:2], " "); got != tt.wantSeats {
				t.Errorf("seats after ending in %s are %s, want %s", tt.to, got, tt.wantSeats)
			}
			if got, _ := f.holds.Get(ctx, f.buyer, h.ID); got.Status != tt.wantStatus {
				t.Errorf("hold is %s, want %s", got.Status, tt.wantStatus)
			}
			if err := f.inTx(t, func(tx pgx.Tx) error {
				_, err := EndCheckout(ctx, tx, h.ID, tt.to)
				return err
			}); err == nil {
				t.Error("ending a checkout twice succeeded")
			}
		})
	}
}

func TestBeginCheckoutRefusals(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	begin := func(buyer, holdID string) error {
		return f.inTx(t, func(tx pgx.Tx) error {
			_, err := BeginCheckout(ctx, tx, buyer, holdID)
			return err
		})
	}
	h := f.mustPlace(t, f.seats[2])
	other := newFixture(t).buyer // an id that is no buyer of this database
	if err := begin(other, h.ID); !errors.Is(err, errkind.NotFound) {
		t.Errorf("another buyer's hold = %v, want errkind.NotFound", err)
	}
	// Its time runs out (as it would after the hold's TTL).
	if _, err := f.db.Exec(ctx, `
		WITH h AS (UPDATE holds SET expires_at = now() - interval '1 second' WHERE id = $1 RETURNING seat_ids)
		UPDATE seats SET held_until = now() - interval '1 second' WHERE id = ANY((SELECT seat_ids FROM h)::uuid[])`, h.ID); err != nil {
		t.Fatal(err)
	}
	if err := begin(f.buyer, h.ID); !errors.Is(err, ErrNotActive) || !strings.Contains(err.Error(), "expired") {
		t.Errorf("an expired hold = %v, want ErrNotActive saying it expired", err)
	}
	if got := f.seatStates(t)[2]; got != "free" {
		t.Errorf("the refused checkout left the seat %s", got)
	}
}
