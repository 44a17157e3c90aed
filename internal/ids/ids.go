// Package ids checks the identifiers Stagedoor hands out: UUIDs in their
// canonical text form. Feature packages check an id with Parse before it reaches
// PostgreSQL, so a malformed id is an answer of theirs, never a cast error.
// It owns nothing and touches no store.
package ids

import (
	"crypto/rand"
	"encoding/hex"
)

// Parse returns s lower-cased when it is a UUID in canonical form
// (8-4-4-4-12 hexadecimal digits), and ok false otherwise.
//
//	Parse("0B8F5A4E-1C2D-4E5F-8A9B-0C1D2E3F4A5B") → "0b8f5a4e-1c2d-4e5f-8a9b-0c1d2e3f4a5b", true
//	Parse("42") → "", false
func Parse(s string) (id string, ok bool) {
	if len(s) != 36 {
		return "", false
	}
	b := []byte(s)
	for i, c := range b {
		switch {
		case i == 8 || i == 13 || i == 18 || i == 23:
			if c != '-' {
				return "", false
			}
		case '0' <= c && c <= '9', 'a' <= c && c <= 'f':
		case 'A' <= c && c <= 'F':
			b[i] = c + 'a' - 'A'
		default:
			return "", false
		}
	}
	return string(b), true
}

// New returns a random (version 4) UUID in canonical form.
func New() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand panics instead)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return FromBytes(b)
}

// Bytes returns the 16 bytes of a UUID in canonical form; ok is false for
// anything else.
func Bytes(s string) (b [16]byte, ok bool) {
	id, ok := Parse(s)
	if !ok {
		return b, false
	}
	hexDigits := id[0:8] + id[9:13] + id[14:18] + id[19:23] + id[24:]
	if _, err := hex.Decode(b[:], []byte(hexDigits)); err != nil {
		return b, false
	}
	return b, true
}

// FromBytes writes 16 bytes as a UUID in canonical form.
func FromBytes(b [16]byte) string {
	var out [36]byte
	hex.Encode(out[0:8], b[0:4])
	out[8] = '-'
	hex.Encode(out[9:13], b[4:6])
	out[13] = '-'
	hex.Encode(out[14:18], b[6:8])
	out[18] = '-'
	hex.Encode(out[19:23], b[8:10])
	out[23] = '-'
	hex.Encode(out[24:], b[10:])
	return string(out[:])
}
