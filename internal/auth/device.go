package auth

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/stagedoor/stagedoor/internal/ids"
)

// DeviceTTL is how long a device token stays good after the last login with it.
const DeviceTTL = 90 * 24 * time.Hour

// devicePrefix starts every device token, so that a token of one kind is never
// mistaken for another's.
const devicePrefix = "dev_"

// MaxDeviceTokenBytes bounds the device token a login may present: a token is
// 47 bytes, and one of any other length up to this counts as none; a longer
// one is refused.
const MaxDeviceTokenBytes = 100

// Device is a browser or app that logged in to an account before: OWASP's
// "device cookie". A login that presents its token is limited per device
// instead of per email and address, so that someone guessing at an email from
// elsewhere never locks its owner out of a device they have used. The token is
// 256 random bits, stored only as its SHA-256, like a session: unforgeable
// without a key to manage, and revocable.
type Device struct {
	ID        string
	AccountID string
}

// KnownDevice returns the device of token when the token is live and belongs to
// the account with this email; ok is false for a malformed, unknown, expired or
// another account's token, which a login then treats as no token at all. A
// malformed token costs no query.
func (s *Service) KnownDevice(ctx context.Context, token, email string) (d Device, ok bool, err error) {
	if !strings.HasPrefix(token, devicePrefix) || len(token) != len(devicePrefix)+43 {
		return Device{}, false, nil
	}
	err = s.store.db.QueryRow(ctx, `
		SELECT d.id::text, d.account_id::text
		FROM devices d JOIN accounts a ON a.id = d.account_id
		WHERE d.token_hash = $1 AND d.expires_at > now() AND a.email = $2`,
		hashToken(token), NormalizeEmail(email)).Scan(&d.ID, &d.AccountID)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return Device{}, false, nil
	case err != nil:
		return Device{}, false, fmt.Errorf("auth: look up device: %w", err)
	}
	return d, true, nil
}

// rememberDevice is called after a successful login: the account's device of
// token, if it is one, is kept for another DeviceTTL; otherwise a new device is
// made. It returns the device token to give back.
func (s *Service) rememberDevice(ctx context.Context, accountID, token string) (string, time.Time, error) {
	expires := time.Now().Add(DeviceTTL).UTC().Truncate(time.Second)
	if strings.HasPrefix(token, devicePrefix) {
		tag, err := s.store.db.Exec(ctx, `
			UPDATE devices SET expires_at = $3 WHERE token_hash = $1 AND account_id = $2 AND expires_at > now()`,
			hashToken(token), accountID, expires)
		if err != nil {
			return "", time.Time{}, fmt.Errorf("auth: keep device: %w", err)
		}
		if tag.RowsAffected() == 1 {
			return token, expires, nil
		}
	}
	random, _ := newToken()
	token = devicePrefix + random
	hash := hashToken(token)
	if _, err := s.store.db.Exec(ctx, `
		INSERT INTO devices (token_hash, id, account_id, expires_at) VALUES ($1, $2, $3, $4)`,
		hash, ids.New(), accountID, expires); err != nil {
		return "", time.Time{}, fmt.Errorf("auth: remember device: %w", err)
	}
	return token, expires, nil
}
