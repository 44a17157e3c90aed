package auth

import (
	"context"
	"fmt"
)

// PurgeExpired deletes up to batch expired sessions and up to batch expired
// devices, and returns how many rows it deleted. An expired session or device
// already authenticates nothing; the janitor calls this so that they do not
// pile up.
func (s *Service) PurgeExpired(ctx context.Context, batch int) (int64, error) {
	var deleted int64
	for _, table := range []string{"sessions", "devices"} {
		tag, err := s.store.db.Exec(ctx, `
			DELETE FROM `+table+` WHERE token_hash = ANY(ARRAY(
				SELECT token_hash FROM `+table+` WHERE expires_at <= now() LIMIT $1))`, batch)
		if err != nil {
			return deleted, fmt.Errorf("auth: purge expired %s: %w", table, err)
		}
		deleted += tag.RowsAffected()
	}
	return deleted, nil
}
