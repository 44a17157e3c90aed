package auth

import (
	"context"
	"strings"
	"time"

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
	return s.store.knownDevice(ctx, hashToken(token), NormalizeEmail(email))
}

// rememberDevice is called after a successful login: the account's device of
// token, if it is one, is kept for another DeviceTTL; otherwise a new device is
// made. It returns the device token to give back.
func (s *Service) rememberDevice(ctx context.Context, accountID, token string) (string, time.Time, error) {
	expires := time.Now().Add(DeviceTTL).UTC().Truncate(time.Second)
	if strings.HasPrefix(token, devicePrefix) {
		kept, err := s.store.keepDevice(ctx, hashToken(token), accountID, expires)
		if err != nil || kept {
			return token, expires, err
		}
	}
	random, _ := newToken()
	token = devicePrefix + random
	hash := hashToken(token)
	if err := s.store.addDevice(ctx, hash, ids.New(), accountID, expires); err != nil {
		return "", time.Time{}, err
	}
	return token, expires, nil
}
