// Package ticketsign makes ticket codes a door can check without the server:
// each names its ticket and event and carries an Ed25519 signature by its
// event's key, so a scanner that holds the event's public key verifies a code
// offline, and no one can forge one (the pretix approach).
//
// A signed code is "SD1" and the base32 (RFC 4648, upper case, no padding) of
//
//	version (1 byte, 1) ‖ ticket id (16 bytes) ‖ event id (16 bytes) ‖ signature (64 bytes)
//
// 159 characters of A–Z and 2–7, which a QR code holds in its compact
// alphanumeric mode. The signature covers Context and the first 33 bytes.
// Codes of older tickets (32 random base32 characters) stay valid online.
//
// 97 bytes are 776 bits and 156 characters carry 780: the last character's
// low 4 bits are unused, so 16 spellings decode to the same bytes. Only one of
// them is a code: the one whose unused bits are zero, as Sign writes it. Parse
// and Verify refuse the 15 others (ErrNotCanonical), so that a code and its
// bytes are one and the same, and changing any character of a code makes it
// fail. Canonical finds the code a respelling stands for, for the one caller
// that must account for a respelling a device already accepted.
//
// The package owns the ticket_keys table: one key pair per event, made when its
// first ticket is issued. The private keys never leave the server.
package ticketsign

import (
	"crypto/ed25519"
	"encoding/base32"
	"errors"
	"strings"

	"github.com/stagedoor/stagedoor/internal/ids"
)

// Prefix starts every signed code.
const Prefix = "SD1"

// Context is signed before a code's payload, so that no other message signed
// by an event key can pass for a ticket.
const Context = "stagedoor ticket v1\n"

const (
	version     = 1
	payloadSize = 1 + 16 + 16
	codeSize    = payloadSize + ed25519.SignatureSize
)

var encoding = base32.NewEncoding(alphabet).WithPadding(base32.NoPadding)

// Claims are what a signed code says: its ticket and its event.
type Claims struct {
	TicketID string
	EventID  string
}

// Errors of Verify.
var (
	ErrNotSigned    = errors.New("ticketsign: not a signed ticket code")
	ErrNotCanonical = errors.New("ticketsign: a respelling of a signed code (its last character's unused bits are not zero), not a code")
	ErrBadSignature = errors.New("ticketsign: the signature does not match the code")
)

// Sign returns the signed code of the ticket, under its event's private key.
// The ids must be UUIDs.
func Sign(key ed25519.PrivateKey, ticketID, eventID string) (string, error) {
	payload, err := payloadOf(ticketID, eventID)
	if err != nil {
		return "", err
	}
	sig := ed25519.Sign(key, signed(payload))
	return Prefix + encoding.EncodeToString(append(payload, sig...)), nil
}

// Parse reads the claims of a signed code without checking its signature (the
// server, which has the ticket in its database, needs no more); ok is false
// for anything that is not a well-formed signed code, a respelling included.
func Parse(code string) (c Claims, ok bool) {
	raw, err := decode(code)
	if err != nil {
		return Claims{}, false
	}
	return claimsOf(raw[:payloadSize]), true
}

// Verify checks a signed code against its event's public key and returns its
// claims: ErrNotSigned when it is not a well-formed signed code,
// ErrNotCanonical when it is a respelling of one, ErrBadSignature when any
// byte was altered or another key signed it.
func Verify(key ed25519.PublicKey, code string) (Claims, error) {
	raw, err := decode(code)
	if err != nil {
		return Claims{}, err
	}
	payload, sig := raw[:payloadSize], raw[payloadSize:]
	if len(key) != ed25519.PublicKeySize || !ed25519.Verify(key, signed(payload), sig) {
		return Claims{}, ErrBadSignature
	}
	return claimsOf(payload), nil
}

// Canonical returns the code that code spells: code itself when it is a
// well-formed signed code, the code with its last character's unused bits
// cleared when it is a respelling of one (respelled true); ok is false for
// anything else. It checks no signature.
func Canonical(code string) (canonical string, respelled, ok bool) {
	raw, err := decode(code)
	switch {
	case err == nil:
		return code, false, true
	case errors.Is(err, ErrNotCanonical):
		return Prefix + encoding.EncodeToString(raw), true, true
	}
	return "", false, false
}

// decode returns a signed code's bytes, or ErrNotSigned; for a respelling of
// a code, its bytes and ErrNotCanonical. Go's base32 decoder ignores the
// unused bits of the last character, so they are checked here.
func decode(code string) ([]byte, error) {
	body, ok := strings.CutPrefix(code, Prefix)
	if !ok || encoding.DecodedLen(len(body)) != codeSize {
		return nil, ErrNotSigned
	}
	raw, err := encoding.DecodeString(body)
	if err != nil || len(raw) != codeSize || raw[0] != version {
		return nil, ErrNotSigned
	}
	// 156 characters: the last one's low unusedBits bits carry nothing.
	last := strings.IndexByte(alphabet, body[len(body)-1])
	if last&(1<<unusedBits-1) != 0 {
		return raw, ErrNotCanonical
	}
	return raw, nil
}

// alphabet is encoding's, in the order of the values it encodes.
const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"

// unusedBits is how many low bits of a code's last character carry nothing:
// 5 bits a character, 8 a byte.
const unusedBits = (5 - codeSize*8%5) % 5

func payloadOf(ticketID, eventID string) ([]byte, error) {
	t, okT := ids.Bytes(ticketID)
	e, okE := ids.Bytes(eventID)
	if !okT || !okE {
		return nil, errors.New("ticketsign: ticket and event ids must be UUIDs")
	}
	payload := make([]byte, 0, payloadSize)
	payload = append(payload, version)
	payload = append(payload, t[:]...)
	return append(payload, e[:]...), nil
}

func claimsOf(payload []byte) Claims {
	return Claims{TicketID: ids.FromBytes([16]byte(payload[1:17])), EventID: ids.FromBytes([16]byte(payload[17:33]))}
}

func signed(payload []byte) []byte {
	return append([]byte(Context), payload...)
}

// Respellings returns the 15 other spellings of a signed code's bytes: its
// last character with other unused bits. Tests use it to show that each is
// refused.
func Respellings(code string) []string {
	canonical, _, ok := Canonical(code)
	if !ok {
		return nil
	}
	head, last := canonical[:len(canonical)-1], strings.IndexByte(alphabet, canonical[len(canonical)-1])
	out := make([]string, 0, 1<<unusedBits-1)
	for bits := 1; bits < 1<<unusedBits; bits++ {
		out = append(out, head+string(alphabet[last|bits]))
	}
	return out
}
