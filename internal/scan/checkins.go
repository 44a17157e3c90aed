package scan

import (
	"context"
	"fmt"
)

// CheckIns is how many of an event's tickets admit (valid or scanned: not
// revoked, refunded or being refunded) and how many of those were scanned.
type CheckIns struct {
	Admitting, Scanned int
}

// CheckIns reads the event's check-ins so far, in one statement.
func (s *Service) CheckIns(ctx context.Context, eventID string) (CheckIns, error) {
	var c CheckIns
	err := s.store.db.QueryRow(ctx, `
		SELECT count(*), count(*) FILTER (WHERE scanned_at IS NOT NULL)
		FROM tickets WHERE event_id = $1 AND revoked_at IS NULL AND refund_status IS NULL`, eventID).
		Scan(&c.Admitting, &c.Scanned)
	if err != nil {
		return CheckIns{}, fmt.Errorf("scan: an event's check-ins: %w", err)
	}
	return c, nil
}
