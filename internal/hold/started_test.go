package hold

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// startNow moves the fixture's event's start (and its sale's opening, which may
// not be later) to a second ago in the database, as if its start had passed.
// The Service's cached event.Info does not see it: only checks made by the
// database's clock do.
func (f fixture) startNow(t *testing.T) {
	t.Helper()
	if _, err := f.db.Exec(context.Background(), `UPDATE events
		SET on_sale_at = least(on_sale_at, now() - interval '1 second'), starts_at = now() - interval '1 second'
		WHERE id = $1`, f.eventID); err != nil {
		t.Fatal(err)
	}
}

// TestNothingIsHeldOrSoldOnceTheEventStarts: at starts_at, holds close by
// the instance's clock (Plan, from the cached event) and by the database's
// (Place, for an instance whose clock or cache says otherwise), and a hold
// made before can no longer begin its checkout; each is ErrEventStarted, and
// nothing changes: the earlier hold stays active, its seats held, none sold.
func TestNothingIsHeldOrSoldOnceTheEventStarts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	before := f.mustPlace(t, f.seats[0])
	info, err := f.holds.events.Info(ctx, f.eventID)
	if err != nil {
		t.Fatal(err)
	}

	// The instance's clock at the start: refused before any query.
	f.holds.now = func() time.Time { return info.StartsAt }
	if _, err := f.holds.Plan(ctx, f.buyer, f.eventID, []string{f.seats[1]}); !errors.Is(err, ErrEventStarted) ||
		!strings.Contains(err.Error(), info.StartsAt.Format(time.RFC3339)) {
		t.Errorf("Plan at starts_at = %v, want ErrEventStarted saying when", err)
	}
	f.holds.now = time.Now

	// The database's clock past the start, the instance's not: Plan passes,
	// Place refuses.
	f.startNow(t)
	p, err := f.holds.Plan(ctx, f.buyer, f.eventID, []string{f.seats[1]})
	if err != nil {
		t.Fatalf("Plan with the cached event, not started: %v", err)
	}
	if h, err := f.holds.Place(ctx, p); !errors.Is(err, ErrEventStarted) {
		t.Errorf("Place after the start = %+v, %v; want ErrEventStarted", h, err)
	}
	err = f.inTx(t, func(tx pgx.Tx) error {
		_, err := BeginCheckout(ctx, tx, f.buyer, before.ID)
		return err
	})
	if !errors.Is(err, ErrEventStarted) {
		t.Errorf("BeginCheckout of a hold made before the start = %v, want ErrEventStarted", err)
	}
	if h, err := f.holds.Get(ctx, f.buyer, before.ID); err != nil || h.Status != Active {
		t.Errorf("the earlier hold = %+v, %v; want it still active", h, err)
	}
	if got := strings.Join(f.seatStates(t), " "); got != "held free free" {
		t.Errorf("seats %s, want the earlier hold's held and nothing else taken or sold", got)
	}
}
