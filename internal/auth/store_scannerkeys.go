package auth

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/stagedoor/stagedoor/internal/errkind"
)

// The SQL of scanner keys. Ids reaching it are valid UUIDs.

// createScannerKey stores the key; its event, if any, was checked to be the
// organizer's.
func (s store) createScannerKey(ctx context.Context, k ScannerKey, keyHash []byte) (ScannerKey, error) {
	err := s.db.QueryRow(ctx, `
		INSERT INTO scanner_keys (id, organizer_id, event_id, label, key_hash)
		VALUES ($1, $2, NULLIF($3, '')::uuid, $4, $5)
		RETURNING created_at`, k.ID, k.OrganizerID, k.EventID, k.Label, keyHash).Scan(&k.CreatedAt)
	if err != nil {
		return ScannerKey{}, fmt.Errorf("auth: create scanner key: %w", err)
	}
	return k, nil
}

func (s store) scannerKeys(ctx context.Context, organizerID string) ([]ScannerKey, error) {
	rows, err := s.db.Query(ctx, `
		SELECT id::text, organizer_id::text, label, coalesce(event_id::text, ''), created_at, revoked_at
		FROM scanner_keys WHERE organizer_id = $1 ORDER BY created_at, id`, organizerID)
	if err != nil {
		return nil, fmt.Errorf("auth: list scanner keys: %w", err)
	}
	keys, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (ScannerKey, error) {
		var k ScannerKey
		err := row.Scan(&k.ID, &k.OrganizerID, &k.Label, &k.EventID, &k.CreatedAt, &k.RevokedAt)
		return k, err
	})
	if err != nil {
		return nil, fmt.Errorf("auth: list scanner keys: %w", err)
	}
	return keys, nil
}

// revokeScannerKey sets revoked_at once; a revoked key keeps its first time.
func (s store) revokeScannerKey(ctx context.Context, organizerID, keyID string) error {
	// The revocation, and on its commit the word to every instance to forget
	// the key (NOTIFY stagedoor_credentials), in one statement.
	var revoked int
	err := s.db.QueryRow(ctx, `
		WITH revoked AS (
		    UPDATE scanner_keys SET revoked_at = coalesce(revoked_at, now())
		    WHERE id = $1 AND organizer_id = $2 RETURNING id
		)
		SELECT count(*), pg_notify($3, 'key:' || $1::text) FROM revoked`, keyID, organizerID, credentialsChannel).Scan(&revoked, new(string))
	if err != nil {
		return fmt.Errorf("auth: revoke scanner key: %w", err)
	}
	if revoked == 0 {
		return errkind.NotFoundf("no scanner key %s of yours", keyID)
	}
	return nil
}

// principalByScannerKey returns the Scanner principal of a live key.
func (s store) principalByScannerKey(ctx context.Context, keyHash []byte) (Principal, error) {
	p := Principal{Kind: Scanner}
	err := s.db.QueryRow(ctx, `
		SELECT id::text, organizer_id::text, coalesce(event_id::text, '')
		FROM scanner_keys WHERE key_hash = $1 AND revoked_at IS NULL`, keyHash).
		Scan(&p.ScannerKeyID, &p.AccountID, &p.EventID)
	if errors.Is(err, pgx.ErrNoRows) {
		return Principal{}, errUnknownKey
	}
	if err != nil {
		return Principal{}, fmt.Errorf("auth: look up scanner key: %w", err)
	}
	return p, nil
}

// revokedScannerKey returns the Scanner principal of a revoked key and its
// revocation time.
func (s store) revokedScannerKey(ctx context.Context, keyHash []byte) (Principal, time.Time, error) {
	p := Principal{Kind: Scanner}
	var revokedAt time.Time
	err := s.db.QueryRow(ctx, `
		SELECT id::text, organizer_id::text, coalesce(event_id::text, ''), revoked_at
		FROM scanner_keys WHERE key_hash = $1 AND revoked_at IS NOT NULL`, keyHash).
		Scan(&p.ScannerKeyID, &p.AccountID, &p.EventID, &revokedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return Principal{}, time.Time{}, errUnknownKey
	}
	if err != nil {
		return Principal{}, time.Time{}, fmt.Errorf("auth: look up a revoked scanner key: %w", err)
	}
	return p, revokedAt, nil
}
