package hold

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// A checkout moves a hold through these states, each move one conditional
// statement on the hold's row, run in the caller's transaction (internal/checkout
// writes its order in the same one), so that two moves of one hold never both
// succeed:
//
//	active ──BeginCheckout──▶ checking_out ──EndCheckout──▶ converted (seats sold)
//	                                       ──EndCheckout──▶ active    (seats held until expires_at again)
//	                                       ──EndCheckout──▶ released  (seats available at once)
//
// While a hold is checking_out its seats are held without end (held_until is
// infinity), whatever its expires_at says, and the sweeper leaves it alone: a
// payment in progress never loses its seats.

// BeginCheckout moves the buyer's hold from active to checking_out in tx and
// returns it. The hold must be active, unexpired, and still own every seat, and
// its event must not have started (by the database's clock) nor be cancelled;
// its seats are then kept until EndCheckout. It returns an errkind.NotFound
// error (also for another buyer's hold), an error wrapping ErrNotActive that
// says why, or one wrapping ErrEventStarted or ErrEventCancelled. holdID must
// be a valid id.
func BeginCheckout(ctx context.Context, tx pgx.Tx, buyerID, holdID string) (Hold, error) {
	h, expired, ev, err := lockForCheckout(ctx, tx, buyerID, holdID)
	if err != nil {
		return Hold{}, err
	}
	switch {
	case ev.cancelled:
		return Hold{}, errCancelledEvent
	case h.Status == CheckingOut:
		return Hold{}, fmt.Errorf("%w: it is already being checked out", ErrNotActive)
	case h.Status == Active && expired, h.Status == Expired:
		return Hold{}, fmt.Errorf("%w: it expired at %s", ErrNotActive, h.ExpiresAt.UTC().Format("2006-01-02T15:04:05Z"))
	case h.Status != Active:
		return Hold{}, fmt.Errorf("%w: it is %s", ErrNotActive, h.Status)
	case ev.started:
		return Hold{}, startedError(ev.startsAt)
	}
	if err := keepSeatsForCheckout(ctx, tx, h); err != nil {
		return Hold{}, err
	}
	h.Status = CheckingOut
	h.ExpiresAt, h.CreatedAt = h.ExpiresAt.UTC(), h.CreatedAt.UTC()
	return h, nil
}

// seatsAfterCheckout is what EndCheckout does to the seats the hold still owns,
// by the state it moves the hold to.
var seatsAfterCheckout = map[Status]string{
	Converted: `sold_at = now()`,
	Active:    `held_until = h.expires_at`,
	Released:  `hold_id = NULL, held_until = NULL`,
}

// EndCheckout moves a hold from checking_out to `to`, in tx: Converted sells its
// seats, Active gives the hold back until its own expiry (which may have passed,
// freeing the seats at once), Released makes its seats available at once. It
// returns the hold's seat ids. A hold that is not checking_out is an error: the
// caller's transaction must roll back.
func EndCheckout(ctx context.Context, tx pgx.Tx, holdID string, to Status) ([]string, error) {
	seats, err := EndCheckoutSeats(ctx, tx, holdID, to)
	ids := make([]string, len(seats))
	for i, s := range seats {
		ids[i] = s.SeatID
	}
	return ids, err
}

// EndCheckoutSeats is EndCheckout, returning the hold's seats, in its order,
// as their tickets name them (a place of general admission has no row).
func EndCheckoutSeats(ctx context.Context, tx pgx.Tx, holdID string, to Status) ([]Place, error) {
	set, ok := seatsAfterCheckout[to]
	if !ok {
		return nil, fmt.Errorf("hold: a checkout cannot end in %q", to)
	}
	seatIDs, err := endCheckout(ctx, tx, holdID, to)
	if err != nil {
		return nil, err
	}
	return settleSeats(ctx, tx, holdID, seatIDs, set)
}
