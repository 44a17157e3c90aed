package auth

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/stagedoor/stagedoor/internal/errkind"
	"github.com/stagedoor/stagedoor/internal/ids"
	"github.com/stagedoor/stagedoor/internal/text"
)

// Scanner is the Kind of a Principal that acts through a scanner key: a door
// device of an organizer. It is never the kind of an account.
const Scanner Kind = "scanner"

// ScannerKeyPrefix starts every scanner key, so that a key found in a log, a
// paste or a repository is recognisable for what it is.
const ScannerKeyPrefix = "sdk_"

// scannerKeyBytes is the randomness of a key: 256 bits, base64url without padding.
const scannerKeyBytes = 32

var scannerKeyLen = len(ScannerKeyPrefix) + base64.RawURLEncoding.EncodedLen(scannerKeyBytes)

// maxLabelRunes bounds a scanner key's label.
const maxLabelRunes = 100

// ScannerKey is a door device's credential as its organizer sees it: never the
// key itself, which is shown once, at creation.
type ScannerKey struct {
	ID          string
	OrganizerID string
	Label       string
	EventID     string // the event the key is bound to; empty when unbound
	CreatedAt   time.Time
	RevokedAt   *time.Time // nil while the key works
}

// NewScannerKey is a key just created: Key is its only appearance in clear.
type NewScannerKey struct {
	ScannerKey
	Key string
}

// CreateScannerKey makes a scanner key for the organizer, bound to eventID when
// it is not empty. The key holds 256 random bits after ScannerKeyPrefix and is
// stored only as its SHA-256. It returns an errkind.Invalid error when
// the label is empty or too long, or eventID does not name an event of this
// organizer (another organizer's event reads as unknown).
func (s *Service) CreateScannerKey(ctx context.Context, organizerID, label, eventID string) (NewScannerKey, error) {
	if strings.TrimSpace(label) == "" {
		return NewScannerKey{}, errkind.Invalidf("label is required (such as \"North gate 1\")")
	}
	label, err := text.Name("label", label, maxLabelRunes)
	if err != nil {
		return NewScannerKey{}, err
	}
	if eventID != "" {
		id, ok := ids.Parse(eventID)
		if !ok {
			return NewScannerKey{}, errkind.Invalidf("event_id %q is not an event id", eventID)
		}
		eventID = id
		if err := s.organizes(ctx, organizerID, eventID); err != nil {
			return NewScannerKey{}, err
		}
	}
	key := newScannerKey()
	k := ScannerKey{ID: ids.New(), OrganizerID: organizerID, Label: label, EventID: eventID}
	created, err := s.store.createScannerKey(ctx, k, hashToken(key))
	if err != nil {
		return NewScannerKey{}, err
	}
	return NewScannerKey{ScannerKey: created, Key: key}, nil
}

// ScannerKeys lists the organizer's scanner keys, revoked ones included, oldest
// first. The keys themselves are not stored, so they are not in it.
func (s *Service) ScannerKeys(ctx context.Context, organizerID string) ([]ScannerKey, error) {
	return s.store.scannerKeys(ctx, organizerID)
}

// RevokeScannerKey stops the organizer's key at once, on every instance (each
// request looks the key up in PostgreSQL). Revoking a revoked key changes
// nothing and succeeds. An errkind.NotFound error for an unknown id or another organizer's key.
func (s *Service) RevokeScannerKey(ctx context.Context, organizerID, keyID string) error {
	id, ok := ids.Parse(keyID)
	if !ok {
		return errkind.NotFoundf("%q is not a scanner key id", keyID)
	}
	s.cache.dropKey(id)
	return s.store.revokeScannerKey(ctx, organizerID, id)
}

// AuthenticateScannerKey returns the Principal of a live scanner key: Kind
// Scanner, AccountID its organizer, ScannerKeyID and EventID set. A malformed,
// unknown or revoked key is errkind.Unauthorized; a malformed one costs no query.
func (s *Service) AuthenticateScannerKey(ctx context.Context, key string) (Principal, error) {
	if !wellFormedScannerKey(key) {
		return Principal{}, errUnknownKey
	}
	hash := hashToken(key)
	if p, ok := s.cache.get(scannerCredential, hash); ok {
		return p, nil
	}
	return s.lookup(ctx, scannerCredential, hash, func(ctx context.Context) (Principal, time.Time, error) {
		p, err := s.store.principalByScannerKey(ctx, hash)
		return p, time.Time{}, err
	})
}

// RevokedScannerKey returns the Principal of a revoked scanner key and when it
// was revoked, for the one route that still hears such a key: the upload of
// the scans its device made before the revocation. A malformed, unknown or
// live key is errkind.Unauthorized. It asks PostgreSQL every time: it is no
// credential, and the credential cache never holds it.
func (s *Service) RevokedScannerKey(ctx context.Context, key string) (Principal, time.Time, error) {
	if !wellFormedScannerKey(key) {
		return Principal{}, time.Time{}, errUnknownKey
	}
	return s.store.revokedScannerKey(ctx, hashToken(key))
}

// newScannerKey returns ScannerKeyPrefix and 256 random bits, base64url.
func newScannerKey() string {
	b := make([]byte, scannerKeyBytes)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	return ScannerKeyPrefix + base64.RawURLEncoding.EncodeToString(b)
}

func wellFormedScannerKey(key string) bool {
	if len(key) != scannerKeyLen || !strings.HasPrefix(key, ScannerKeyPrefix) {
		return false
	}
	for _, c := range key[len(ScannerKeyPrefix):] {
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '-', c == '_':
		default:
			return false
		}
	}
	return true
}

// organizes checks that eventID names an event of the organizer's (another
// organizer's reads as unknown). An event's organizer never changes, nor is
// an event deleted, so the check holds when the key is stored after it.
func (s *Service) organizes(ctx context.Context, organizerID, eventID string) error {
	if s.events == nil {
		return errors.New("auth: create scanner key: no events to check its event with (WithEvents)")
	}
	in, err := s.events.Info(ctx, eventID)
	switch {
	case errors.Is(err, errkind.NotFound) || err == nil && in.OrganizerID != organizerID:
		return errkind.Invalidf("event_id %s names no event of yours", eventID)
	case err != nil:
		return fmt.Errorf("auth: create scanner key: %w", err)
	}
	return nil
}
