package scan

import (
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"errors"
	"math"
	"strconv"
	"strings"
	"unicode"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/stagedoor/stagedoor/internal/errkind"
	"github.com/stagedoor/stagedoor/internal/ids"
	"github.com/stagedoor/stagedoor/internal/text"
	"github.com/stagedoor/stagedoor/internal/ticketsign"
)

// Service scans and transfers tickets and reads the audit of scans.
type Service struct {
	store store
	keys  Keys
}

// PublicKeys gives the public key of an event that signs its tickets' codes
// (ticketsign.Keys); ok is false when the event has none.
type PublicKeys interface {
	PublicOf(ctx context.Context, eventID string) (key ed25519.PublicKey, ok bool, err error)
}

// NewService returns a Service on db, checking uploaded signed codes with
// keys and signing with them the codes of the tickets transfers issue. Keys
// may be nil only where no signed code is uploaded (tests): transferred
// tickets then get random codes, as checkout's do without keys.
func NewService(db *pgxpool.Pool, keys Keys) *Service {
	return &Service{store: store{db: db}, keys: keys}
}

// Scan admits the ticket with this code, exactly once, and records the attempt.
// The code may be the ticket's short reference, as typed (NormalizeReference):
// it admits as the code does, once, and only at the scanner's event.
// It returns the Admission, or a *Rejection (errors.Is ErrAlreadyScanned,
// ErrInvalid or ErrWrongEvent) after recording it too, or an error wrapping
// An errkind.Invalid error for an empty, overlong or unprintable code (not recorded).
//
// An admission costs one statement; a rejection three (the write that admitted
// nothing, the read that tells why, the audit row).
func (s *Service) Scan(ctx context.Context, sc Scanner, rawCode string) (Admission, error) {
	c, err := parseCode(rawCode)
	if err != nil {
		return Admission{}, err
	}
	if c.signed && !c.wellFormed() {
		// A respelled or malformed signed code: no ticket has it, and it is not
		// looked up (see ticketsign: a code has one spelling).
		r := Rejection{Result: Invalid}
		if err := s.store.record(ctx, sc, c, r); err != nil {
			return Admission{}, err
		}
		return Admission{}, &r
	}
	// A ticket found admittable after the write admitted nothing would be one
	// issued in between; try once more, then give up.
	for range 2 {
		a, ok, err := s.store.admit(ctx, sc, c)
		if err != nil || ok {
			return a, err
		}
		t, err := s.store.ticket(ctx, sc, c)
		if err != nil {
			return Admission{}, err
		}
		r, ok := classify(sc, t)
		if !ok {
			continue
		}
		if err := s.store.record(ctx, sc, c, r); err != nil {
			return Admission{}, err
		}
		return Admission{}, &r
	}
	return Admission{}, errors.New("scan: a ticket found admittable twice was not admitted")
}

// Attempts returns a page of the audit of the organizer's event, newest first:
// at most limit attempts (0 means DefaultPageSize; at most MaxPageSize) older
// than the cursor before (empty: from the newest). An errkind.NotFound error for an
// unknown event or another organizer's; errkind.Invalid for a bad limit or cursor.
func (s *Service) Attempts(ctx context.Context, organizerID, eventID string, limit int, before string) (Page, error) {
	id, ok := ids.Parse(eventID)
	if !ok {
		return Page{}, errNotFound
	}
	if limit == 0 {
		limit = DefaultPageSize
	}
	if limit < 1 || limit > MaxPageSize {
		return Page{}, errkind.Invalidf("limit must be 1 to %d", MaxPageSize)
	}
	cursor := int64(math.MaxInt64)
	if before != "" {
		n, err := strconv.ParseInt(before, 10, 64)
		if err != nil || n < 1 {
			return Page{}, errkind.Invalidf("before %q is not a cursor this list handed out", before)
		}
		cursor = n
	}
	return s.store.attempts(ctx, organizerID, id, limit, cursor)
}

// parseCode checks a scanned code (trimmed of surrounding space, which a
// keyboard-wedge scanner may add), makes its audit forms and, for a signed
// code, reads what it claims.
func parseCode(raw string) (code, error) {
	if len(raw) > MaxCodeBytes { // space included: the bound is on what was sent
		return code{}, errkind.Invalidf("code is longer than %d bytes; no ticket has such a code", MaxCodeBytes)
	}
	trimmed := strings.TrimSpace(raw)
	if trimmed == "" {
		return code{}, errkind.Invalidf("code is required")
	}
	if err := text.Check("code", trimmed, MaxCodeBytes); err != nil {
		return code{}, err
	}
	if strings.IndexFunc(trimmed, func(r rune) bool { return !unicode.IsPrint(r) }) >= 0 {
		return code{}, errkind.Invalidf("code must be printable text")
	}
	prefix := trimmed
	if runes := []rune(trimmed); len(runes) > CodePrefixRunes {
		prefix = string(runes[:CodePrefixRunes])
	}
	if ref, ok := NormalizeReference(trimmed); ok {
		// A typed reference: looked up and hashed as the one it means; the
		// audit's prefix is what was typed.
		sum := sha256.Sum256([]byte(ref))
		return code{text: ref, hash: sum[:], prefix: prefix, reference: true}, nil
	}
	sum := sha256.Sum256([]byte(trimmed))
	c := code{text: trimmed, hash: sum[:], prefix: prefix}
	// No older code starts so: "1" is not a base32 character.
	if c.signed = strings.HasPrefix(trimmed, ticketsign.Prefix); c.signed {
		var ok bool
		if c.canonical, c.respelled, ok = ticketsign.Canonical(trimmed); ok {
			c.claims, _ = ticketsign.Parse(c.canonical)
		}
	}
	return c, nil
}
