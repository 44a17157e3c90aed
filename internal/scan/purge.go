package scan

import (
	"context"
	"fmt"
	"time"
)

// JunkRetention is how long the audit keeps a scan of a code that named no
// ticket of the key's organizer (an invalid one): long enough to look into
// an event's night at the door, not for ever.
const JunkRetention = 30 * 24 * time.Hour

// PurgeJunk deletes at most batch rows of the audit that name no ticket: at
// once those listed under no event (no one can read them; they are no longer
// stored, and are what older versions left), the others once they are older
// than JunkRetention. It is a janitor task.
func (s *Service) PurgeJunk(ctx context.Context, batch int) (int64, error) {
	tag, err := s.store.db.Exec(ctx, `
		DELETE FROM scans WHERE id IN (
		    SELECT id FROM scans WHERE ticket_id IS NULL AND event_id IS NULL LIMIT $1)`, batch)
	if err != nil {
		return 0, fmt.Errorf("scan: purge scans of no event: %w", err)
	}
	n := tag.RowsAffected()
	if n >= int64(batch) {
		return n, nil
	}
	tag, err = s.store.db.Exec(ctx, `
		DELETE FROM scans WHERE id IN (
		    SELECT id FROM scans WHERE ticket_id IS NULL AND received_at < now() - make_interval(secs => $2)
		    ORDER BY received_at LIMIT $1)`, int64(batch)-n, JunkRetention.Seconds())
	if err != nil {
		return n, fmt.Errorf("scan: purge old scans of no ticket: %w", err)
	}
	return n + tag.RowsAffected(), nil
}
