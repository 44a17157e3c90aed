package auth

import (
	"context"
)

// PurgeExpired deletes up to batch expired sessions and up to batch expired
// devices, and returns how many rows it deleted. An expired session or device
// already authenticates nothing; the janitor calls this so that they do not
// pile up.
func (s *Service) PurgeExpired(ctx context.Context, batch int) (int64, error) {
	return s.store.purgeExpired(ctx, batch)
}
