package checkout

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/stagedoor/stagedoor/internal/ids"
)

// The SQL of Idempotency-Keys (keys.go has the rules).

// claimKey claims a buyer's Idempotency-Key for a request whose body hashes to
// hash, for lease. It returns the claim when the caller is to run the checkout:
// the key is new, older than 24 hours, its last request wrote nothing and its
// lease lapsed, or its order certainly made no charge (failed) and may be tried
// again. It returns the id of the key's order when the caller is to answer with
// that order's current state; ErrIdempotencyMismatch for another body; or
// ErrIdempotencyInProgress while another request's lease on the key runs.
func (s store) claimKey(ctx context.Context, buyerID, key string, hash []byte, lease time.Duration) (*claim, string, error) {
	c := &claim{buyerID: buyerID, key: key, id: ids.New()}
	var orderID string
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `
			DELETE FROM idempotency_keys
			WHERE buyer_id = $1 AND key = $2 AND created_at < now() - $3::bigint * interval '1 microsecond'`,
			buyerID, key, keyTTL.Microseconds()); err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, `
			INSERT INTO idempotency_keys (buyer_id, key, request_hash, claim, lease_until)
			VALUES ($1, $2, $3, $4, now() + $5::bigint * interval '1 microsecond')
			ON CONFLICT DO NOTHING`, buyerID, key, hash, c.id, lease.Microseconds())
		if err != nil || tag.RowsAffected() == 1 {
			return err
		}
		var (
			storedHash []byte
			leased     bool
			bound      *string
			status     *string
		)
		if err := tx.QueryRow(ctx, `
			SELECT k.request_hash, coalesce(k.lease_until > now(), false), k.order_id::text, o.status
			FROM idempotency_keys k LEFT JOIN orders o ON o.id = k.order_id
			WHERE k.buyer_id = $1 AND k.key = $2
			FOR UPDATE OF k`, buyerID, key).Scan(&storedHash, &leased, &bound, &status); err != nil {
			return err
		}
		switch {
		case string(storedHash) != string(hash):
			return ErrIdempotencyMismatch
		case leased:
			return ErrIdempotencyInProgress
		case bound != nil && *status != Failed:
			orderID = *bound
			return nil
		}
		c.again = bound != nil
		_, err = tx.Exec(ctx, `
			UPDATE idempotency_keys SET claim = $3, lease_until = now() + $4::bigint * interval '1 microsecond'
			WHERE buyer_id = $1 AND key = $2`, buyerID, key, c.id, lease.Microseconds())
		return err
	})
	switch {
	case errors.Is(err, ErrIdempotencyMismatch), errors.Is(err, ErrIdempotencyInProgress):
		return nil, "", err
	case err != nil:
		return nil, "", fmt.Errorf("checkout: claim idempotency key: %w", err)
	case orderID != "":
		return nil, orderID, nil
	}
	return c, "", nil
}

// bindKey gives the claimed key to the order being written in tx, and renews
// the claim's lease with the order's. It fails with ErrIdempotencyInProgress
// when the claim lapsed and another request took the key meanwhile.
func bindKey(ctx context.Context, tx pgx.Tx, c *claim, orderID string, lease time.Duration) error {
	tag, err := tx.Exec(ctx, `
		UPDATE idempotency_keys SET order_id = $4, lease_until = now() + $5::bigint * interval '1 microsecond'
		WHERE buyer_id = $1 AND key = $2 AND claim = $3`, c.buyerID, c.key, c.id, orderID, lease.Microseconds())
	if err != nil {
		return err
	}
	if tag.RowsAffected() != 1 {
		return fmt.Errorf("%w: this request's claim on it lapsed", ErrIdempotencyInProgress)
	}
	return nil
}

// finishKey ends a claim: a key bound to an order is kept for its retries, with
// no lease on it; a key whose request wrote nothing is forgotten, so a retry
// runs anew. Should this fail, the claim lapses at the end of its lease.
func (s store) finishKey(ctx context.Context, c *claim) error {
	_, err := s.db.Exec(ctx, `
		WITH forgotten AS (
		    DELETE FROM idempotency_keys
		    WHERE buyer_id = $1 AND key = $2 AND claim = $3 AND order_id IS NULL
		)
		UPDATE idempotency_keys SET claim = NULL, lease_until = NULL
		WHERE buyer_id = $1 AND key = $2 AND claim = $3 AND order_id IS NOT NULL`, c.buyerID, c.key, c.id)
	if err != nil {
		return fmt.Errorf("checkout: finish idempotency key: %w", err)
	}
	return nil
}

// purgeKeys deletes up to batch keys older than ttl that no request is working
// on.
func (s store) purgeKeys(ctx context.Context, batch int, ttl time.Duration) (int64, error) {
	tag, err := s.db.Exec(ctx, `
		DELETE FROM idempotency_keys WHERE (buyer_id, key) IN (
			SELECT buyer_id, key FROM idempotency_keys
			WHERE created_at < now() - $2::bigint * interval '1 microsecond'
			  AND (lease_until IS NULL OR lease_until < now())
			LIMIT $1)`, batch, ttl.Microseconds())
	if err != nil {
		return 0, fmt.Errorf("checkout: purge keys: %w", err)
	}
	return tag.RowsAffected(), nil
}
