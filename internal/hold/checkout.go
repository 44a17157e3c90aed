package hold

import (
	"context"
	"errors"
	"fmt"
	"time"

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
// its event must not have started (by the database's clock); its seats are then
// kept until EndCheckout. It returns an errkind.NotFound error (also for
// another buyer's hold), an error wrapping ErrNotActive that says why, or one
// wrapping ErrEventStarted. holdID must be a valid id.
func BeginCheckout(ctx context.Context, tx pgx.Tx, buyerID, holdID string) (Hold, error) {
	var h Hold
	var expired, started bool
	var startsAt time.Time
	err := tx.QueryRow(ctx, `
		SELECT h.id::text, h.event_id::text, h.buyer_id::text, h.seat_ids::text[], h.status, h.total_cents, h.currency,
		       h.expires_at, h.created_at, h.expires_at <= now(), e.starts_at, e.starts_at <= now()
		FROM holds h JOIN events e ON e.id = h.event_id
		WHERE h.id = $1 AND h.buyer_id = $2 FOR UPDATE OF h`, holdID, buyerID).
		Scan(&h.ID, &h.EventID, &h.BuyerID, &h.SeatIDs, &h.Status, &h.TotalCents, &h.Currency,
			&h.ExpiresAt, &h.CreatedAt, &expired, &startsAt, &started)
	if errors.Is(err, pgx.ErrNoRows) {
		return Hold{}, errNotFound
	}
	if err != nil {
		return Hold{}, fmt.Errorf("hold: begin checkout: %w", err)
	}
	switch {
	case h.Status == CheckingOut:
		return Hold{}, fmt.Errorf("%w: it is already being checked out", ErrNotActive)
	case h.Status == Active && expired, h.Status == Expired:
		return Hold{}, fmt.Errorf("%w: it expired at %s", ErrNotActive, h.ExpiresAt.UTC().Format("2006-01-02T15:04:05Z"))
	case h.Status != Active:
		return Hold{}, fmt.Errorf("%w: it is %s", ErrNotActive, h.Status)
	case started:
		return Hold{}, startedError(startsAt)
	}
	// Lock the seats in id order, as placing a hold does, so that two
	// statements over several seats never deadlock.
	tag, err := tx.Exec(ctx, `
		WITH owned AS (
		    SELECT id FROM seats
		    WHERE id = ANY($1::uuid[]) AND hold_id = $2 AND held_until > now() AND sold_at IS NULL
		    ORDER BY id FOR NO KEY UPDATE
		)
		UPDATE seats SET held_until = 'infinity' WHERE id IN (SELECT id FROM owned)`, h.SeatIDs, h.ID)
	if err != nil {
		return Hold{}, fmt.Errorf("hold: begin checkout: %w", err)
	}
	if int(tag.RowsAffected()) != len(h.SeatIDs) {
		return Hold{}, fmt.Errorf("%w: its time ran out", ErrNotActive)
	}
	if _, err := tx.Exec(ctx, `UPDATE holds SET status = 'checking_out' WHERE id = $1`, h.ID); err != nil {
		return Hold{}, fmt.Errorf("hold: begin checkout: %w", err)
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
	set, ok := seatsAfterCheckout[to]
	if !ok {
		return nil, fmt.Errorf("hold: a checkout cannot end in %q", to)
	}
	var seatIDs []string
	err := tx.QueryRow(ctx, `
		UPDATE holds SET status = $2::text, ended_at = CASE WHEN $2::text = 'active' THEN NULL ELSE now() END
		WHERE id = $1 AND status = 'checking_out'
		RETURNING seat_ids::text[]`, holdID, string(to)).Scan(&seatIDs)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("hold: end checkout of %s: the hold is not checking out", holdID)
	}
	if err != nil {
		return nil, fmt.Errorf("hold: end checkout: %w", err)
	}
	tag, err := tx.Exec(ctx, `
		WITH mine AS (
		    SELECT id FROM seats
		    WHERE id = ANY($1::uuid[]) AND hold_id = $2 AND sold_at IS NULL
		    ORDER BY id FOR NO KEY UPDATE
		)
		UPDATE seats SET `+set+`
		FROM holds h WHERE h.id = $2 AND seats.id IN (SELECT id FROM mine)`, seatIDs, holdID)
	if err != nil {
		return nil, fmt.Errorf("hold: end checkout: %w", err)
	}
	if int(tag.RowsAffected()) != len(seatIDs) {
		return nil, fmt.Errorf("hold: end checkout of %s: it owns %d of its %d seats", holdID, tag.RowsAffected(), len(seatIDs))
	}
	return seatIDs, nil
}
