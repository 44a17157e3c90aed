package auth

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// The SQL of devices, and of the purge of expired sessions and devices.

// knownDevice reads the live device of tokenHash when it is of the account
// with this email; ok is false otherwise.
func (s store) knownDevice(ctx context.Context, tokenHash []byte, email string) (d Device, ok bool, err error) {
	err = s.db.QueryRow(ctx, `
		SELECT d.id::text, d.account_id::text
		FROM devices d JOIN accounts a ON a.id = d.account_id
		WHERE d.token_hash = $1 AND d.expires_at > now() AND a.email = $2`,
		tokenHash, email).Scan(&d.ID, &d.AccountID)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return Device{}, false, nil
	case err != nil:
		return Device{}, false, fmt.Errorf("auth: look up device: %w", err)
	}
	return d, true, nil
}

// keepDevice makes the account's live device of tokenHash last until expires;
// kept is false when there is none.
func (s store) keepDevice(ctx context.Context, tokenHash []byte, accountID string, expires time.Time) (kept bool, err error) {
	tag, err := s.db.Exec(ctx, `
		UPDATE devices SET expires_at = $3 WHERE token_hash = $1 AND account_id = $2 AND expires_at > now()`,
		tokenHash, accountID, expires)
	if err != nil {
		return false, fmt.Errorf("auth: keep device: %w", err)
	}
	return tag.RowsAffected() == 1, nil
}

// addDevice stores a new device of the account.
func (s store) addDevice(ctx context.Context, tokenHash []byte, id, accountID string, expires time.Time) error {
	if _, err := s.db.Exec(ctx, `
		INSERT INTO devices (token_hash, id, account_id, expires_at) VALUES ($1, $2, $3, $4)`,
		tokenHash, id, accountID, expires); err != nil {
		return fmt.Errorf("auth: remember device: %w", err)
	}
	return nil
}

// purgeExpired deletes up to batch expired sessions and up to batch expired
// devices.
func (s store) purgeExpired(ctx context.Context, batch int) (int64, error) {
	var deleted int64
	for _, purge := range []struct{ table, sql string }{
		{"sessions", `DELETE FROM sessions WHERE token_hash = ANY(ARRAY(
			SELECT token_hash FROM sessions WHERE expires_at <= now() LIMIT $1))`},
		{"devices", `DELETE FROM devices WHERE token_hash = ANY(ARRAY(
			SELECT token_hash FROM devices WHERE expires_at <= now() LIMIT $1))`},
	} {
		tag, err := s.db.Exec(ctx, purge.sql, batch)
		if err != nil {
			return deleted, fmt.Errorf("auth: purge expired %s: %w", purge.table, err)
		}
		deleted += tag.RowsAffected()
	}
	return deleted, nil
}
