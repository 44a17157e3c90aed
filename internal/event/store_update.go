package event

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/stagedoor/stagedoor/internal/ids"
)

// The SQL of an event's changes and its cancellation (update.go has the
// rules).

// lockForChange reads and locks the organizer's event in tx, with whether a
// seat of it is sold and the database's clock.
func lockForChange(ctx context.Context, tx pgx.Tx, organizerID, eventID string) (Event, bool, time.Time, error) {
	var e Event
	var sold bool
	var now time.Time
	err := tx.QueryRow(ctx, `
		SELECT e.name, e.venue, e.description, e.starts_at, e.on_sale_at, e.refunds_until, e.status,
		       EXISTS (SELECT FROM seats s WHERE s.event_id = e.id AND s.sold_at IS NOT NULL), now()
		FROM events e WHERE e.id = $1 AND e.organizer_id = $2 FOR UPDATE`, eventID, organizerID).
		Scan(&e.Name, &e.Venue, &e.Description, &e.StartsAt, &e.OnSaleAt, &e.RefundsUntil, &e.Status, &sold, &now)
	if errors.Is(err, pgx.ErrNoRows) {
		return Event{}, false, time.Time{}, errNotYours
	}
	if err != nil {
		return Event{}, false, time.Time{}, fmt.Errorf("event: update: %w", err)
	}
	e.ID, e.OrganizerID = eventID, organizerID
	e.StartsAt, e.OnSaleAt, e.RefundsUntil = e.StartsAt.UTC(), e.OnSaleAt.UTC(), utc(e.RefundsUntil)
	return e, sold, now, nil
}

// storeChange writes an event's changeable fields in tx.
func storeChange(ctx context.Context, tx pgx.Tx, e Event) error {
	_, err := tx.Exec(ctx, `
		UPDATE events SET name = $2, venue = $3, description = $4, starts_at = $5, refunds_until = $6, updated_at = now()
		WHERE id = $1`, e.ID, e.Name, e.Venue, e.Description, e.StartsAt, e.RefundsUntil)
	if err != nil {
		return fmt.Errorf("event: update: %w", err)
	}
	return nil
}

// CancelIn cancels the organizer's event in tx, the caller's
// (internal/checkout cancels an event and starts its refunds in one
// transaction), and returns it as it stands, and whether this call cancelled
// it (false: it was cancelled already, and nothing changed). It locks the
// event's row for update: a checkout that began before waits (hold.BeginCheckout
// holds it for key share), and one that begins after finds it cancelled. An
// event that has started (by the database's clock) is ErrStarted; another
// organizer's, or none, an errkind.NotFound error.
func CancelIn(ctx context.Context, tx pgx.Tx, organizerID, eventID string) (Event, bool, error) {
	id, ok := ids.Parse(eventID)
	if !ok {
		return Event{}, false, errNotYours
	}
	e, _, now, err := lockForChange(ctx, tx, organizerID, id)
	switch {
	case err != nil:
		return Event{}, false, err
	case e.Status == Cancelled:
		return e, false, nil
	case !e.StartsAt.After(now):
		return Event{}, false, fmt.Errorf("%w: it started at %s, and can no longer be cancelled", ErrStarted,
			e.StartsAt.Format(time.RFC3339))
	}
	if _, err := tx.Exec(ctx, `UPDATE events SET status = 'cancelled', cancelled_at = now(), updated_at = now() WHERE id = $1`,
		id); err != nil {
		return Event{}, false, fmt.Errorf("event: cancel: %w", err)
	}
	e.Status = Cancelled
	return e, true, nil
}

// Window is an event's refund window as a refund's transaction reads it.
type Window struct {
	// Until is when buyers' refunds close; nil: they cannot ask.
	Until *time.Time
	// Open: now, by the database's clock, is before Until, or the event was
	// cancelled (its buyers get their money back whatever the window said).
	Open      bool
	Cancelled bool
}

// RefundWindow reads the event's refund window in tx, the caller's
// (internal/checkout's refund, which decides by it).
func RefundWindow(ctx context.Context, tx pgx.Tx, eventID string) (Window, error) {
	var w Window
	err := tx.QueryRow(ctx, `
		SELECT refunds_until, status = 'cancelled', status = 'cancelled' OR coalesce(refunds_until > now(), false)
		FROM events WHERE id = $1`, eventID).Scan(&w.Until, &w.Cancelled, &w.Open)
	if errors.Is(err, pgx.ErrNoRows) {
		return Window{}, errNotFound
	}
	if err != nil {
		return Window{}, fmt.Errorf("event: refund window: %w", err)
	}
	w.Until = utc(w.Until)
	return w, nil
}
