package event

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/stagedoor/stagedoor/internal/ids"
)

// Patch is a change of an event by its organizer: each field set is changed,
// the others kept.
type Patch struct {
	Name, Venue, Description *string
	StartsAt                 *time.Time
	// SetRefundsUntil: RefundsUntil is the new refund window's end; nil
	// removes the window (buyers can no longer ask).
	SetRefundsUntil bool
	RefundsUntil    *time.Time
}

// BreaksTicketsError says which promise to the buyers of an event's tickets
// a refused change would break. errors.Is(err, ErrBreaksTickets) holds for it.
type BreaksTicketsError struct {
	Reason string
}

func (e *BreaksTicketsError) Error() string {
	return "tickets of this event are sold, and " + e.Reason + "; nothing was changed"
}

// Is makes errors.Is(err, ErrBreaksTickets) true.
func (e *BreaksTicketsError) Is(target error) bool { return target == ErrBreaksTickets }

// Update changes the organizer's event as the patch says, checked as at
// creation, in one transaction that holds the event's row, and returns the
// event as it is now. The rules that keep the promises made to the buyers of
// its tickets:
//
//   - a cancelled event changes no more (ErrCancelled), nor one that has
//     started (ErrStarted, by the database's clock);
//   - starts_at stays in the future and not before on_sale_at;
//   - refunds_until stays no later than starts_at, and a new one is in the
//     future;
//   - once a ticket is sold (a seat of it sold), the refund window may be
//     moved later but neither removed nor moved earlier: a buyer paid
//     counting on it (a *BreaksTicketsError). So starts_at cannot move
//     before the window's end either.
//
// Another organizer's event, or none, is an errkind.NotFound error; a bad
// value an errkind.Invalid one. Nothing changes when it fails.
func (s *Service) Update(ctx context.Context, organizerID, eventID string, p Patch) (Event, error) {
	id, ok := ids.Parse(eventID)
	if !ok {
		return Event{}, errNotYours
	}
	if err := p.normalize(); err != nil {
		return Event{}, err
	}
	err := pgx.BeginFunc(ctx, s.store.db, func(tx pgx.Tx) error {
		cur, sold, now, err := lockForChange(ctx, tx, organizerID, id)
		if err != nil {
			return err
		}
		next, err := p.apply(cur, sold, now)
		if err != nil {
			return err
		}
		return storeChange(ctx, tx, next)
	})
	if err != nil {
		return Event{}, err
	}
	return s.store.get(ctx, id)
}

// normalize checks and normalizes the patch's text.
func (p *Patch) normalize() error {
	var err error
	if p.Name != nil {
		if *p.Name, err = checkText("name", *p.Name); err != nil {
			return err
		}
	}
	if p.Venue != nil {
		if *p.Venue, err = checkText("venue", *p.Venue); err != nil {
			return err
		}
	}
	if p.Description != nil {
		if *p.Description, err = checkDescription(*p.Description); err != nil {
			return err
		}
	}
	return nil
}

// apply returns cur changed by the patch, or why it may not be (see Update);
// sold says whether tickets of the event are sold, now is the database's
// clock.
func (p Patch) apply(cur Event, sold bool, now time.Time) (Event, error) {
	switch {
	case cur.Status == Cancelled:
		return Event{}, fmt.Errorf("%w: it can no longer be changed", ErrCancelled)
	case !cur.StartsAt.After(now):
		return Event{}, fmt.Errorf("%w: it started at %s, and can no longer be changed", ErrStarted,
			cur.StartsAt.Format(time.RFC3339))
	}
	next := cur
	if p.Name != nil {
		next.Name = *p.Name
	}
	if p.Venue != nil {
		next.Venue = *p.Venue
	}
	if p.Description != nil {
		next.Description = *p.Description
	}
	if p.StartsAt != nil {
		if err := checkStart(*p.StartsAt, now); err != nil {
			return Event{}, err
		}
		if next.StartsAt = p.StartsAt.UTC(); next.StartsAt.Before(cur.OnSaleAt) {
			return Event{}, invalid("starts_at must not be before on_sale_at (%s)", cur.OnSaleAt.Format(time.RFC3339))
		}
	}
	if p.SetRefundsUntil {
		next.RefundsUntil = utc(p.RefundsUntil)
		if next.RefundsUntil != nil && (cur.RefundsUntil == nil || !next.RefundsUntil.Equal(*cur.RefundsUntil)) && !next.RefundsUntil.After(now) {
			return Event{}, invalid("refunds_until must be in the future")
		}
	}
	if sold && cur.RefundsUntil != nil {
		promise := "their buyers may ask for refunds until " + cur.RefundsUntil.Format(time.RFC3339)
		switch {
		case next.RefundsUntil == nil:
			return Event{}, &BreaksTicketsError{Reason: promise + ": the refund window cannot be removed"}
		case next.RefundsUntil.Before(*cur.RefundsUntil):
			return Event{}, &BreaksTicketsError{Reason: promise + ": the refund window can be moved later, not earlier"}
		case next.StartsAt.Before(*cur.RefundsUntil):
			return Event{}, &BreaksTicketsError{Reason: promise + ": starts_at cannot move before then"}
		}
	}
	if next.RefundsUntil != nil && next.RefundsUntil.After(next.StartsAt) {
		return Event{}, invalid("refunds_until must not be after starts_at")
	}
	return next, nil
}
