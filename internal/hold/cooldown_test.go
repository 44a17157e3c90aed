package hold

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stagedoor/stagedoor/internal/ids"
)

// otherBuyer adds a buyer account to the fixture's database.
func (f fixture) otherBuyer(t *testing.T) string {
	t.Helper()
	var id string
	if err := f.db.QueryRow(context.Background(), `INSERT INTO accounts (id, kind, email, name, password_hash)
		VALUES (gen_random_uuid(), 'buyer', $1, 'T', 'x') RETURNING id::text`, ids.New()+"@example.com").Scan(&id); err != nil {
		t.Fatal(err)
	}
	return id
}

// coolingFixture is a fixture whose released seats cool for a minute, with
// its buyer Ada and another buyer Bob.
func coolingFixture(t *testing.T) (f fixture, ada, bob string) {
	t.Helper()
	f = newFixture(t)
	f.holds.WithReholdCooldown(time.Minute)
	return f, f.buyer, f.otherBuyer(t)
}

// age moves the end of every hold of buyer that ended back by d in the
// database, as if d had passed.
func (f fixture) age(t *testing.T, buyer string, d time.Duration) {
	t.Helper()
	if _, err := f.db.Exec(context.Background(), `UPDATE holds
		SET ended_at = ended_at - $2::float8 * interval '1 second', expires_at = expires_at - $2::float8 * interval '1 second',
		    created_at = created_at - $2::float8 * interval '1 second'
		WHERE buyer_id = $1 AND status IN ('released', 'expired')`, buyer, d.Seconds()); err != nil {
		t.Fatal(err)
	}
}

// TestAReleasedSeatCoolsForItsBuyerOnly: a buyer who released seats (or let
// their hold expire) may not hold any of them again for the cooldown,
// refused with exactly those seats and the time left; anyone else holds them
// at once; once the cooldown has passed (moved back in the database, not
// waited for), the buyer holds them again. A hold that went to checkout does
// not cool, and a cooldown of 0 refuses nothing.
func TestAReleasedSeatCoolsForItsBuyerOnly(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f, ada, bob := coolingFixture(t)

	h, err := f.placeAs(ada, f.seats[0], f.seats[1])
	if err != nil {
		t.Fatal(err)
	}
	if err := f.holds.Release(ctx, ada, h.ID); err != nil {
		t.Fatal(err)
	}
	_, err = f.placeAs(ada, f.seats[2], f.seats[1])
	var cooling *CooldownError
	if !errors.As(err, &cooling) || !errors.Is(err, ErrReholdCooldown) {
		t.Fatalf("Ada again on a seat she released = %v, want a *CooldownError", err)
	}
	if !slices.Equal(cooling.SeatIDs, []string{f.seats[1]}) || cooling.RetryAfter < 55*time.Second || cooling.RetryAfter > time.Minute {
		t.Errorf("the refusal names %v, retry after %v; want only %s, in about a minute", cooling.SeatIDs, cooling.RetryAfter, f.seats[1])
	}
	if n := f.heldCount(t); n != 0 {
		t.Errorf("%d seats held after the refusal, want none", n)
	}
	if _, err := f.placeAs(ada, f.seats[2]); err != nil {
		t.Errorf("Ada on a seat she never held = %v, want it held", err)
	}
	bobs, err := f.placeAs(bob, f.seats[0], f.seats[1])
	if err != nil {
		t.Fatalf("Bob on the seats Ada released, at once = %v, want them held", err)
	}

	// The cooldown over, Ada may hold them again, once Bob gives them back.
	f.age(t, ada, time.Minute+time.Second)
	if err := f.holds.Release(ctx, bob, bobs.ID); err != nil {
		t.Fatal(err)
	}
	again, err := f.placeAs(ada, f.seats[0], f.seats[1])
	if err != nil {
		t.Fatalf("Ada after the cooldown = %v, want the seats held", err)
	}

	// Expired rather than released: the same.
	if _, err := f.db.Exec(ctx, `WITH h AS (UPDATE holds SET expires_at = now() - interval '1 second' WHERE id = $1 RETURNING id)
		UPDATE seats SET held_until = now() - interval '1 second' WHERE hold_id IN (SELECT id FROM h)`, again.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := f.placeAs(ada, f.seats[0]); !errors.Is(err, ErrReholdCooldown) {
		t.Errorf("Ada on a seat of her hold that just expired = %v, want ErrReholdCooldown", err)
	}
	if n, err := f.holds.Sweep(ctx); err != nil || n != 1 {
		t.Fatalf("sweep = %d, %v", n, err)
	}
	if _, err := f.placeAs(ada, f.seats[0]); !errors.Is(err, ErrReholdCooldown) {
		t.Errorf("Ada on a seat of her hold, swept = %v, want ErrReholdCooldown", err)
	}

	// A hold that went to checkout never cools.
	if _, err := f.db.Exec(ctx, `INSERT INTO orders (id, buyer_id, hold_id, event_id, total_cents, currency, status, charge_deadline)
		VALUES (gen_random_uuid(), $1, $2, $3, 100, 'USD', 'declined', now())`, ada, again.ID, f.eventID); err != nil {
		t.Fatal(err)
	}
	if _, err := f.placeAs(ada, f.seats[0]); err != nil {
		t.Errorf("Ada on a seat of a hold that went to checkout = %v, want it held", err)
	}

	f.holds.WithReholdCooldown(0)
	// (seats[1] was Ada's expired hold's too; with no cooldown it is hers at once.)
	if _, err := f.placeAs(ada, f.seats[1]); err != nil {
		t.Errorf("with no cooldown = %v, want the seat held", err)
	}
}

func (f fixture) heldCount(t *testing.T) int {
	t.Helper()
	var n int
	if err := f.db.QueryRow(context.Background(),
		`SELECT count(*) FROM seats WHERE event_id = $1 AND held_until > now()`, f.eventID).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestReleaseAndReholdRace: one buyer races releases of their hold against
// holds of the same seats, from many goroutines at once, round after round.
// None of those holds may win: each sees the hold not yet released (its seats
// taken) or released and cooling, never the seats free without the cooldown
// (the placement reads seats and cooling holds in one snapshot, and a release
// changes both in one transaction). Another buyer then holds the released
// seats at once: the cooldown never keeps a seat off sale.
func TestReleaseAndReholdRace(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f, ada, bob := coolingFixture(t)
	seats := f.seats[:2]
	const rounds, goroutines = 20, 16
	for round := range rounds {
		h, err := f.placeAs(ada, seats...)
		if err != nil {
			t.Fatalf("round %d: Ada's hold: %v", round, err)
		}
		var wg sync.WaitGroup
		start := make(chan struct{})
		outcomes := make([]error, goroutines)
		for g := range goroutines {
			wg.Go(func() {
				<-start
				if g%2 == 0 {
					outcomes[g] = f.holds.Release(ctx, ada, h.ID)
					return
				}
				won, err := f.placeAs(ada, seats...)
				if err == nil {
					err = fmt.Errorf("held again as %s", won.ID)
				}
				outcomes[g] = err
			})
		}
		close(start)
		wg.Wait()
		for g, err := range outcomes {
			switch {
			case g%2 == 0 && err != nil:
				t.Errorf("round %d: a release: %v", round, err)
			case g%2 == 1 && !errors.Is(err, ErrSeatsUnavailable) && !errors.Is(err, ErrReholdCooldown):
				t.Errorf("round %d: a hold racing the release: %v, want the seats unavailable or cooling", round, err)
			}
		}
		if got, err := f.holds.Get(ctx, ada, h.ID); err != nil || got.Status != Released {
			t.Fatalf("round %d: Ada's hold = %+v, %v; want released", round, got, err)
		}
		bobs, err := f.placeAs(bob, seats...)
		if err != nil {
			t.Fatalf("round %d: Bob on the released seats, at once = %v, want them held", round, err)
		}
		// Next round: Bob gives them back, and both cooldowns are over.
		if err := f.holds.Release(ctx, bob, bobs.ID); err != nil {
			t.Fatal(err)
		}
		f.age(t, ada, time.Minute+time.Second)
		f.age(t, bob, time.Minute+time.Second)
	}
}
