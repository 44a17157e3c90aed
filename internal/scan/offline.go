package scan

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/stagedoor/stagedoor/internal/errkind"
	"github.com/stagedoor/stagedoor/internal/ids"
)

// Revocation is a ticket its organizer revoked, as a scanner learns of it.
type Revocation struct {
	ID        int64 // the list's order: ask for those after the last one seen
	TicketID  string
	EventID   string
	RevokedAt time.Time
}

// Revoke makes the organizer's ticket admit no one, online at once and offline
// once devices have synced the revocations. Revoking it again changes nothing;
// another organizer's ticket is errkind.NotFound.
func (s *Service) Revoke(ctx context.Context, organizerID, ticketID string) error {
	id, ok := ids.Parse(ticketID)
	if !ok {
		return errkind.NotFoundf("no such ticket of yours")
	}
	return pgx.BeginFunc(ctx, s.store.db, func(tx pgx.Tx) error {
		var eventID string
		var revoked bool
		err := tx.QueryRow(ctx, `
			SELECT t.event_id::text, t.revoked_at IS NOT NULL FROM tickets t JOIN events e ON e.id = t.event_id
			WHERE t.id = $1 AND e.organizer_id = $2 FOR UPDATE OF t`, id, organizerID).Scan(&eventID, &revoked)
		if errors.Is(err, pgx.ErrNoRows) {
			return errkind.NotFoundf("no such ticket of yours")
		}
		if err != nil || revoked {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE tickets SET revoked_at = now() WHERE id = $1`, id); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `INSERT INTO ticket_revocations (ticket_id, event_id) VALUES ($1, $2)`, id, eventID)
		return err
	})
}

// Revocations lists, in order, the revocations after the one numbered after
// that the scanner's key may see: of its event when bound, else of its
// organizer's events; at most limit.
func (s *Service) Revocations(ctx context.Context, sc Scanner, after int64, limit int) ([]Revocation, error) {
	rows, err := s.store.db.Query(ctx, `
		SELECT r.id, r.ticket_id::text, r.event_id::text, r.revoked_at
		FROM ticket_revocations r JOIN events e ON e.id = r.event_id
		WHERE r.id > $1 AND e.organizer_id = $2 AND ($3::text = '' OR r.event_id = NULLIF($3::text, '')::uuid)
		ORDER BY r.id LIMIT $4`, after, sc.OrganizerID, sc.EventID, limit)
	if err != nil {
		return nil, fmt.Errorf("scan: revocations: %w", err)
	}
	list, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Revocation, error) {
		var v Revocation
		err := r.Scan(&v.ID, &v.TicketID, &v.EventID, &v.RevokedAt)
		return v, err
	})
	if err != nil {
		return nil, fmt.Errorf("scan: revocations: %w", err)
	}
	return list, nil
}
