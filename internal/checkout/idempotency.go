package checkout

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// Errors of idempotency keys.
var (
	// ErrIdempotencyInProgress: the first request with this key is still running.
	ErrIdempotencyInProgress = errors.New("a request with this Idempotency-Key is still in progress")
	// ErrIdempotencyMismatch: the key was used with another request body.
	ErrIdempotencyMismatch = errors.New("this Idempotency-Key was used with a different request body")
)

// StoredResponse is the first response to an Idempotency-Key, replayed to
// every retry for 24 hours.
type StoredResponse struct {
	Status int
	Body   []byte
}

// ClaimKey claims a buyer's Idempotency-Key for a request whose body hashes to
// requestHash. It returns (nil, nil) when the caller is the first and must
// answer, then Keep or Forget the key; the stored response when the request
// was answered before; ErrIdempotencyMismatch for another body; or
// ErrIdempotencyInProgress while the first is still running. Keys older than
// 24 hours are forgotten; one left unanswered for 5 minutes (its process
// died) may be claimed again.
func (s *Service) ClaimKey(ctx context.Context, buyerID, key string, requestHash []byte) (*StoredResponse, error) {
	var stored *StoredResponse
	err := pgx.BeginFunc(ctx, s.store.db, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `
			DELETE FROM idempotency_keys
			WHERE buyer_id = $1 AND key = $2
			  AND (created_at < now() - interval '24 hours'
			       OR (status_code IS NULL AND created_at < now() - interval '5 minutes'))`,
			buyerID, key); err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, `
			INSERT INTO idempotency_keys (buyer_id, key, request_hash) VALUES ($1, $2, $3)
			ON CONFLICT DO NOTHING`, buyerID, key, requestHash)
		if err != nil || tag.RowsAffected() == 1 {
			return err
		}
		var hash []byte
		var status *int
		var body []byte
		if err := tx.QueryRow(ctx, `
			SELECT request_hash, status_code, response FROM idempotency_keys WHERE buyer_id = $1 AND key = $2`,
			buyerID, key).Scan(&hash, &status, &body); err != nil {
			return err
		}
		switch {
		case string(hash) != string(requestHash):
			return ErrIdempotencyMismatch
		case status == nil:
			return ErrIdempotencyInProgress
		}
		stored = &StoredResponse{Status: *status, Body: body}
		return nil
	})
	if err != nil && !errors.Is(err, ErrIdempotencyMismatch) && !errors.Is(err, ErrIdempotencyInProgress) {
		return nil, fmt.Errorf("checkout: idempotency key: %w", err)
	}
	return stored, err
}

// KeepResponse stores the response to a claimed key, for its retries.
func (s *Service) KeepResponse(ctx context.Context, buyerID, key string, r StoredResponse) error {
	_, err := s.store.db.Exec(context.WithoutCancel(ctx), `
		UPDATE idempotency_keys SET status_code = $3, response = $4
		WHERE buyer_id = $1 AND key = $2 AND status_code IS NULL`, buyerID, key, r.Status, r.Body)
	if err != nil {
		return fmt.Errorf("checkout: keep idempotent response: %w", err)
	}
	return nil
}

// ForgetKey lets a claimed key be used again, for answers a retry should not
// replay (the service was unavailable; nothing was done).
func (s *Service) ForgetKey(ctx context.Context, buyerID, key string) error {
	_, err := s.store.db.Exec(context.WithoutCancel(ctx), `
		DELETE FROM idempotency_keys WHERE buyer_id = $1 AND key = $2 AND status_code IS NULL`, buyerID, key)
	if err != nil {
		return fmt.Errorf("checkout: forget idempotency key: %w", err)
	}
	return nil
}
