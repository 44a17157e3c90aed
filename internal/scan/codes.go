package scan

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base32"

	"github.com/stagedoor/stagedoor/internal/ticketsign"
)

// Signer gives the private key that signs an event's ticket codes
// (*ticketsign.Keys).
type Signer interface {
	Private(ctx context.Context, eventID string) (ed25519.PrivateKey, error)
}

// Keys are the events' keys: the public ones check uploaded signed codes, the
// private ones sign the codes of the tickets a transfer issues
// (*ticketsign.Keys).
type Keys interface {
	PublicKeys
	Signer
}

// CodeMaker returns what makes the door codes of new tickets of the event:
// signed by the event's key (ticketsign) when signer is not nil, so that a door
// checks them offline; else 160 random bits, valid online only. Call it before
// the transaction that issues the tickets: the key may be read or made.
func CodeMaker(ctx context.Context, signer Signer, eventID string) (func(ticketID string) (string, error), error) {
	if signer == nil {
		return func(string) (string, error) { return randomCode(), nil }, nil
	}
	key, err := signer.Private(ctx, eventID)
	if err != nil {
		return nil, err
	}
	return func(ticketID string) (string, error) { return ticketsign.Sign(key, ticketID, eventID) }, nil
}

var randomCodeEncoding = base32.StdEncoding.WithPadding(base32.NoPadding)

// randomCode returns 160 random bits as 32 base32 characters: the code of a
// ticket when no signing keys are configured.
func randomCode() string {
	b := make([]byte, 20)
	_, _ = rand.Read(b) // crypto/rand does not fail on supported platforms
	return randomCodeEncoding.EncodeToString(b)
}
