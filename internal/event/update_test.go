package event

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/stagedoor/stagedoor/internal/errkind"
	"github.com/stagedoor/stagedoor/internal/testenv"
)

func ptr[T any](v T) *T { return &v }

// windowDraft is draft(organizer) starting in two days, its refunds open
// until tomorrow.
func windowDraft(organizer string) Draft {
	d := draft(organizer)
	d.StartsAt = time.Now().Add(48 * time.Hour)
	d.RefundsUntil = ptr(time.Now().Add(24 * time.Hour).Truncate(time.Microsecond)) // PostgreSQL's precision
	return d
}

// TestCreateTakesADescriptionAndARefundWindow: a description of several
// lines is kept (trimmed, in NFC), a refund window before the start is kept;
// one after the start or in the past, a description with a control
// character or too long, are invalid.
func TestCreateTakesADescriptionAndARefundWindow(t *testing.T) {
	t.Parallel()
	events, _, organizer := newEvents(t)
	ctx := context.Background()
	d := draft(organizer)
	d.Description = "  Doors at 7.\r\n\r\nNo re-entry.  "
	d.RefundsUntil = ptr(d.StartsAt.Add(-10 * time.Minute).Truncate(time.Microsecond)) // PostgreSQL's precision
	e, err := events.Create(ctx, d)
	if err != nil || e.Description != "Doors at 7.\n\nNo re-entry." || e.RefundsUntil == nil || e.Status != Scheduled {
		t.Fatalf("Create = %+v, %v", e, err)
	}
	got, err := events.Get(ctx, e.ID)
	if err != nil || got.Description != e.Description || !got.RefundsUntil.Equal(*e.RefundsUntil) || got.Status != Scheduled {
		t.Errorf("Get = %+v, %v; want the description, window and status stored", got, err)
	}
	for name, change := range map[string]func(*Draft){
		"a window after the start": func(d *Draft) { d.RefundsUntil = ptr(d.StartsAt.Add(time.Minute)) },
		"a window in the past":     func(d *Draft) { d.RefundsUntil = ptr(time.Now().Add(-time.Minute)) },
		"a bell":                   func(d *Draft) { d.Description = "ding\a" },
		"too long":                 func(d *Draft) { d.Description = string(make([]byte, MaxDescriptionRunes+1)) },
	} {
		d := draft(organizer)
		change(&d)
		if _, err := events.Create(ctx, d); !errors.Is(err, errkind.Invalid) {
			t.Errorf("%s: %v, want invalid", name, err)
		}
	}
}

// TestAnOrganizerChangesAnEvent: the organizer changes name, venue,
// description, start and refund window; another organizer's change is not
// found. Before anything is sold, the window may be removed or moved
// earlier; a start in the past, before the sale opens or before the window's
// end is invalid, as is a new window in the past.
func TestAnOrganizerChangesAnEvent(t *testing.T) {
	t.Parallel()
	events, _, organizer := newEvents(t)
	ctx := context.Background()
	e := create(t, events, windowDraft(organizer))
	if _, err := events.Update(ctx, "00000000-0000-4000-8000-000000000000", e.ID, Patch{Name: ptr("X")}); !errors.Is(err, errkind.NotFound) {
		t.Errorf("another organizer's change = %v, want not found", err)
	}
	start := time.Now().Add(72 * time.Hour).UTC().Truncate(time.Second)
	got, err := events.Update(ctx, organizer, e.ID, Patch{Name: ptr(" Late show "), Venue: ptr("Arena"),
		Description: ptr("New."), StartsAt: &start})
	if err != nil || got.Name != "Late show" || got.Venue != "Arena" || got.Description != "New." || !got.StartsAt.Equal(start) ||
		!got.RefundsUntil.Equal(*e.RefundsUntil) || got.SeatsTotal != 8 {
		t.Fatalf("Update = %+v, %v", got, err)
	}
	if got, err = events.Update(ctx, organizer, e.ID, Patch{SetRefundsUntil: true}); err != nil || got.RefundsUntil != nil {
		t.Errorf("removing the window before a sale = %+v, %v; want no window", got.RefundsUntil, err)
	}
	for name, p := range map[string]Patch{
		"a start in the past":          {StartsAt: ptr(time.Now().Add(-time.Hour))},
		"a start before the sale":      {StartsAt: ptr(e.OnSaleAt.Add(-time.Minute))},
		"a window past the start":      {SetRefundsUntil: true, RefundsUntil: ptr(start.Add(time.Minute))},
		"a new window in the past":     {SetRefundsUntil: true, RefundsUntil: ptr(time.Now().Add(-time.Minute))},
		"an empty name":                {Name: ptr("  ")},
		"a description with a control": {Description: ptr("a\x00b")},
	} {
		if _, err := events.Update(ctx, organizer, e.ID, p); !errors.Is(err, errkind.Invalid) {
			t.Errorf("%s: %v, want invalid", name, err)
		}
	}
}

// TestAChangeMayNotBreakASoldTicketsPromise: once a seat is sold, the refund
// window may move later but not be removed, moved earlier, or overtaken by
// the start (a *BreaksTicketsError); a started event and a cancelled one
// change no more.
func TestAChangeMayNotBreakASoldTicketsPromise(t *testing.T) {
	t.Parallel()
	events, db, organizer := newEvents(t)
	ctx := context.Background()
	e := create(t, events, windowDraft(organizer))
	until := *e.RefundsUntil
	if _, err := db.Exec(ctx, `UPDATE seats SET sold_at = now() WHERE event_id = $1 AND position = 0`, e.ID); err != nil {
		t.Fatal(err)
	}
	for name, p := range map[string]Patch{
		"removing the window":       {SetRefundsUntil: true},
		"closing it earlier":        {SetRefundsUntil: true, RefundsUntil: ptr(until.Add(-time.Hour))},
		"starting before it closes": {StartsAt: ptr(until.Add(-time.Hour))},
	} {
		var breaks *BreaksTicketsError
		if _, err := events.Update(ctx, organizer, e.ID, p); !errors.As(err, &breaks) || !errors.Is(err, ErrBreaksTickets) {
			t.Errorf("%s: %v, want ErrBreaksTickets", name, err)
		}
	}
	later := until.Add(time.Hour)
	if got, err := events.Update(ctx, organizer, e.ID, Patch{SetRefundsUntil: true, RefundsUntil: &later}); err != nil || !got.RefundsUntil.Equal(later.UTC()) {
		t.Errorf("moving the window later = %+v, %v", got.RefundsUntil, err)
	}
	if err := pgx.BeginFunc(ctx, db, func(tx pgx.Tx) error { _, _, err := CancelIn(ctx, tx, organizer, e.ID); return err }); err != nil {
		t.Fatal(err)
	}
	if _, err := events.Update(ctx, organizer, e.ID, Patch{Name: ptr("Y")}); !errors.Is(err, ErrCancelled) {
		t.Errorf("changing a cancelled event = %v, want ErrCancelled", err)
	}
	other := create(t, events, draft(organizer))
	if _, err := db.Exec(ctx, `UPDATE events SET starts_at = now() - interval '1 minute', on_sale_at = now() - interval '2 minutes'
		WHERE id = $1`, other.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := events.Update(ctx, organizer, other.ID, Patch{Name: ptr("Y")}); !errors.Is(err, ErrStarted) {
		t.Errorf("changing a started event = %v, want ErrStarted", err)
	}
	err := pgx.BeginFunc(ctx, db, func(tx pgx.Tx) error { _, _, err := CancelIn(ctx, tx, organizer, other.ID); return err })
	if !errors.Is(err, ErrStarted) {
		t.Errorf("cancelling a started event = %v, want ErrStarted", err)
	}
}

// TestAChangeReachesEveryInstance: two instances' services read an event's
// Info; the organizer changes its start and cancels it through the first.
// The second sees the new start, then the cancellation, within
// SnapshotMaxAge: its Info is no older than that.
func TestAChangeReachesEveryInstance(t *testing.T) {
	t.Parallel()
	a, db, organizer := newEvents(t)
	b := NewService(db, createSeats)
	ctx := context.Background()
	e := create(t, a, draft(organizer))
	if in, err := b.Info(ctx, e.ID); err != nil || in.Status != Scheduled {
		t.Fatalf("Info on the second = %+v, %v", in, err)
	}
	start := time.Now().Add(5 * time.Hour).UTC().Truncate(time.Second)
	if _, err := a.Update(ctx, organizer, e.ID, Patch{StartsAt: &start}); err != nil {
		t.Fatal(err)
	}
	seen := func(what string, ok func(Info) bool) {
		t.Helper()
		took := testenv.Eventually(t, 5*time.Second, func() bool {
			in, err := b.Info(ctx, e.ID)
			return err == nil && ok(in)
		}, what)
		if took > SnapshotMaxAge+500*time.Millisecond {
			t.Errorf("%s took %s, want within about SnapshotMaxAge", what, took)
		}
	}
	seen("the new start on the second instance", func(in Info) bool { return in.StartsAt.Equal(start) })
	if err := pgx.BeginFunc(ctx, db, func(tx pgx.Tx) error { _, _, err := CancelIn(ctx, tx, organizer, e.ID); return err }); err != nil {
		t.Fatal(err)
	}
	seen("the cancellation on the second instance", func(in Info) bool { return in.Status == Cancelled })
}
