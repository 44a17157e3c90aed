package scan

import (
	"context"
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
	return s.store.purgeJunk(ctx, batch, JunkRetention)
}
