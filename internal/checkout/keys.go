package checkout

import (
	"context"
	"crypto/sha256"
	"errors"
	"time"
)

// Errors of idempotency keys.
var (
	// ErrIdempotencyInProgress: a request with this key is still working on it.
	ErrIdempotencyInProgress = errors.New("a request with this Idempotency-Key is still in progress")
	// ErrIdempotencyMismatch: the key was used with another request body.
	ErrIdempotencyMismatch = errors.New("this Idempotency-Key was used with a different request body")
)

// keyTTL is how long a key belongs to its order.
const keyTTL = 24 * time.Hour

// claim is a request's hold on a buyer's Idempotency-Key, good until its lease
// lapses. Only the request whose claim id is on the key may bind it to an order.
type claim struct {
	buyerID, key, id string
	// again: the key's earlier attempt certainly made no charge (its order
	// failed), and this claim tries the same card on the same hold again.
	again bool
}

// requestHash identifies a checkout request's body: a key reused with another
// body is refused.
func requestHash(holdID, paymentToken string) []byte {
	h := sha256.Sum256([]byte(holdID + "\x00" + paymentToken))
	return h[:]
}

// PurgeKeys deletes up to batch Idempotency-Keys older than 24 hours (their
// orders stay) that no request is working on, and returns how many. A key that
// old is no longer replayed: a request with it starts anew.
func (s *Service) PurgeKeys(ctx context.Context, batch int) (int64, error) {
	return s.store.purgeKeys(ctx, batch, keyTTL)
}
