package hold

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// The SQL of a hold's checkout, each statement in the caller's transaction
// (checkout.go has the states and the rules).

// eventState is what a checkout's start reads of the hold's event, by the
// database's clock.
type eventState struct {
	startsAt           time.Time
	started, cancelled bool
}

// lockForCheckout reads and locks the buyer's hold, with whether it expired
// and its event's state. It holds the event's row for key share until tx
// ends: an event's cancellation (event.CancelIn, which locks the row for
// update) waits for the checkouts that began before it, and one that begins
// after it reads the event cancelled. So once a cancellation has committed,
// no order of the event can begin.
func lockForCheckout(ctx context.Context, tx pgx.Tx, buyerID, holdID string) (h Hold, expired bool, ev eventState, err error) {
	err = tx.QueryRow(ctx, `
		SELECT h.id::text, h.event_id::text, h.buyer_id::text, h.seat_ids::text[], h.status, h.total_cents, h.currency,
		       h.expires_at, h.created_at, h.expires_at <= now(), e.starts_at, e.starts_at <= now(), e.status = 'cancelled'
		FROM holds h JOIN events e ON e.id = h.event_id
		WHERE h.id = $1 AND h.buyer_id = $2 FOR UPDATE OF h FOR KEY SHARE OF e`, holdID, buyerID).
		Scan(&h.ID, &h.EventID, &h.BuyerID, &h.SeatIDs, &h.Status, &h.TotalCents, &h.Currency,
			&h.ExpiresAt, &h.CreatedAt, &expired, &ev.startsAt, &ev.started, &ev.cancelled)
	if errors.Is(err, pgx.ErrNoRows) {
		return Hold{}, false, eventState{}, errNotFound
	}
	if err != nil {
		return Hold{}, false, eventState{}, fmt.Errorf("hold: begin checkout: %w", err)
	}
	return h, expired, ev, nil
}

// keepSeatsForCheckout holds the hold's seats without end and marks it
// checking_out, or says its time ran out (ErrNotActive) when it no longer owns
// every seat.
func keepSeatsForCheckout(ctx context.Context, tx pgx.Tx, h Hold) error {
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
		return fmt.Errorf("hold: begin checkout: %w", err)
	}
	if int(tag.RowsAffected()) != len(h.SeatIDs) {
		return fmt.Errorf("%w: its time ran out", ErrNotActive)
	}
	if _, err := tx.Exec(ctx, `UPDATE holds SET status = 'checking_out' WHERE id = $1`, h.ID); err != nil {
		return fmt.Errorf("hold: begin checkout: %w", err)
	}
	return nil
}

// endCheckout moves a checking_out hold to `to` and returns its seat ids.
func endCheckout(ctx context.Context, tx pgx.Tx, holdID string, to Status) ([]string, error) {
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
	return seatIDs, nil
}

// settleSeats sets, on every seat the hold still owns, what set says
// (seatsAfterCheckout); each of seatIDs must be one. It returns them, in the
// order of seatIDs.
func settleSeats(ctx context.Context, tx pgx.Tx, holdID string, seatIDs []string, set string) ([]Place, error) {
	rows, err := tx.Query(ctx, `
		WITH mine AS (
		    SELECT id FROM seats
		    WHERE id = ANY($1::uuid[]) AND hold_id = $2 AND sold_at IS NULL
		    ORDER BY id FOR NO KEY UPDATE
		)
		UPDATE seats SET `+set+`
		FROM holds h WHERE h.id = $2 AND seats.id IN (SELECT id FROM mine)
		RETURNING seats.id::text, seats.section, seats.row_label, seats.number`, seatIDs, holdID)
	if err != nil {
		return nil, fmt.Errorf("hold: end checkout: %w", err)
	}
	settled := make(map[string]Place, len(seatIDs))
	for rows.Next() {
		var s Place
		if err := rows.Scan(&s.SeatID, &s.Section, &s.Row, &s.Number); err != nil {
			rows.Close()
			return nil, fmt.Errorf("hold: end checkout: %w", err)
		}
		settled[s.SeatID] = s
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("hold: end checkout: %w", err)
	}
	if len(settled) != len(seatIDs) {
		return nil, fmt.Errorf("hold: end checkout of %s: it owns %d of its %d seats", holdID, len(settled), len(seatIDs))
	}
	seats := make([]Place, len(seatIDs))
	for i, id := range seatIDs {
		seats[i] = settled[id]
	}
	return seats, nil
}
