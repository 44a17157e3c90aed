package ticketsign

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"fmt"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/stagedoor/stagedoor/internal/ids"
)

// Keys keeps each event's signing key pair in PostgreSQL (ticket_keys), and
// the private keys it used in memory: an event's key never changes.
type Keys struct {
	db      *pgxpool.Pool
	private sync.Map // event id → ed25519.PrivateKey
	public  sync.Map // event id → ed25519.PublicKey
}

// NewKeys returns the key store on db.
func NewKeys(db *pgxpool.Pool) *Keys { return &Keys{db: db} }

// Private returns the event's private key, making the event's key pair when it
// has none yet (two instances racing to make it agree on one: the first
// stored wins).
func (k *Keys) Private(ctx context.Context, eventID string) (ed25519.PrivateKey, error) {
	if key, ok := k.private.Load(eventID); ok {
		return key.(ed25519.PrivateKey), nil
	}
	if _, ok := ids.Parse(eventID); !ok {
		return nil, fmt.Errorf("ticketsign: event id %q is not a UUID", eventID)
	}
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, err
	}
	var stored []byte
	err = k.db.QueryRow(ctx, `
		WITH made AS (
		    INSERT INTO ticket_keys (event_id, public_key, private_key) VALUES ($1, $2, $3)
		    ON CONFLICT (event_id) DO NOTHING
		    RETURNING private_key
		)
		SELECT private_key FROM made
		UNION ALL
		SELECT private_key FROM ticket_keys WHERE event_id = $1
		LIMIT 1`, eventID, []byte(pub), []byte(priv.Seed())).Scan(&stored)
	if errors.Is(err, pgx.ErrNoRows) {
		// Another instance stored the key meanwhile: the statement waited for it,
		// but its snapshot predates it. A statement of its own sees it.
		err = k.db.QueryRow(ctx, `SELECT private_key FROM ticket_keys WHERE event_id = $1`, eventID).Scan(&stored)
	}
	if err != nil {
		return nil, fmt.Errorf("ticketsign: the key of event %s: %w", eventID, err)
	}
	key := ed25519.NewKeyFromSeed(stored)
	k.private.Store(eventID, key)
	return key, nil
}

// PublicKey is an event's public key, as a scanner needs it.
type PublicKey struct {
	EventID string
	Key     ed25519.PublicKey
}

// PublicOf returns the event's public key, read once and then kept in memory
// (an event's key never changes); ok is false when the event has none yet or
// eventID is no UUID.
func (k *Keys) PublicOf(ctx context.Context, eventID string) (key ed25519.PublicKey, ok bool, err error) {
	if key, ok := k.public.Load(eventID); ok {
		return key.(ed25519.PublicKey), true, nil
	}
	if _, ok := ids.Parse(eventID); !ok {
		return nil, false, nil
	}
	keys, err := k.Public(ctx, []string{eventID})
	if err != nil || len(keys) == 0 {
		return nil, false, err
	}
	k.public.Store(eventID, keys[0].Key)
	return keys[0].Key, true, nil
}

// Public returns the public keys of those of eventIDs that have one (an event
// gets its key when its first ticket is issued).
func (k *Keys) Public(ctx context.Context, eventIDs []string) ([]PublicKey, error) {
	rows, err := k.db.Query(ctx, `
		SELECT event_id::text, public_key FROM ticket_keys WHERE event_id = ANY($1::uuid[]) ORDER BY event_id`, eventIDs)
	if err != nil {
		return nil, fmt.Errorf("ticketsign: public keys: %w", err)
	}
	keys, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (PublicKey, error) {
		var p PublicKey
		var raw []byte
		if err := r.Scan(&p.EventID, &raw); err != nil {
			return p, err
		}
		if len(raw) != ed25519.PublicKeySize {
			return p, errors.New("a stored public key is not 32 bytes")
		}
		p.Key = raw
		return p, nil
	})
	if err != nil {
		return nil, fmt.Errorf("ticketsign: public keys: %w", err)
	}
	return keys, nil
}
