// Package queuetoken signs the waiting room's queue tokens: a buyer's
// waitroom.Place, so that her polls are answered from it and the room's
// progress instead of a Redis call of her own, and so that she cannot alter
// it.
//
// A token is
//
//	base64url(claims JSON) "." base64url(HMAC-SHA256(key, Context ‖ base64url(claims JSON)))
//
// with no padding. The claims name the key, the event, the buyer, when she
// first got a token, when this one expires, and her place. The key is 32
// random bytes shared by every instance through PostgreSQL (queue_token_keys,
// made by the first instance that needs it), so a token from one instance is
// good on all. A token is checked in constant time (hmac.Equal) before any of
// it is read, then its expiry, its event and its buyer: a token for another
// event or buyer, an expired one and any altered byte are refused alike with
// ErrInvalid.
//
// The package owns the queue_token_keys table. It knows no HTTP and no Redis.
package queuetoken

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/stagedoor/stagedoor/internal/waitroom"
)

// Context is signed before a token's claims, so that no other message signed
// with the key can pass for a queue token.
const Context = "stagedoor queue token v1\n"

// DefaultTTL is how long a token is good for. Every answer to a poll hands out
// a new one, so a buyer who keeps polling never sees hers expire.
const DefaultTTL = time.Hour

// MaxLength bounds a token; anything longer is refused unread.
const MaxLength = 1024

// keyID is the id of the key tokens are signed with (queue_token_keys.id).
const keyID = 1

// ErrInvalid: the token was not made by this service for this event and
// buyer, was altered, or has expired.
var ErrInvalid = errors.New("invalid queue token")

// Signer signs and verifies queue tokens. Safe for concurrent use.
type Signer struct {
	db  *pgxpool.Pool
	ttl time.Duration
	now func() time.Time

	mu  sync.Mutex             // held while the key is read
	key atomic.Pointer[[]byte] // nil until read from PostgreSQL
}

// New returns a Signer whose key is in db; ttl ≤ 0 means DefaultTTL, and now
// nil means time.Now.
func New(db *pgxpool.Pool, ttl time.Duration, now func() time.Time) *Signer {
	if ttl <= 0 {
		ttl = DefaultTTL
	}
	if now == nil {
		now = time.Now
	}
	return &Signer{db: db, ttl: ttl, now: now}
}

// claims are a token's JSON.
type claims struct {
	Key     int    `json:"k"`
	Event   string `json:"e"`
	Buyer   string `json:"b"`
	Since   int64  `json:"j"` // when she first got a token (Unix seconds)
	Expires int64  `json:"x"` // Unix seconds
	Drawn   bool   `json:"d,omitempty"`
	Rank    int64  `json:"r"`
	Tick    int64  `json:"t,omitempty"`
	Lottery int64  `json:"l,omitempty"`
	Queued  int64  `json:"q,omitempty"`
}

// Token is a verified token: the buyer's place, and when she first got a
// token (kept by every token made from it).
type Token struct {
	Place waitroom.Place
	Since time.Time
}

// Sign returns a token for the place, good for the Signer's TTL from now;
// since is when the buyer first got one (zero: now).
func (s *Signer) Sign(ctx context.Context, pl waitroom.Place, since time.Time) (string, error) {
	key, err := s.secret(ctx)
	if err != nil {
		return "", err
	}
	now := s.now()
	if since.IsZero() {
		since = now
	}
	body, err := json.Marshal(claims{Key: keyID, Event: pl.EventID, Buyer: pl.BuyerID, Since: since.Unix(),
		Expires: now.Add(s.ttl).Unix(), Drawn: pl.Drawn, Rank: pl.Rank, Tick: pl.Tick, Lottery: pl.Lottery, Queued: pl.Queued})
	if err != nil {
		return "", err
	}
	payload := base64.RawURLEncoding.EncodeToString(body)
	return payload + "." + base64.RawURLEncoding.EncodeToString(mac(key, payload)), nil
}

// Verify returns the token's place, or an error wrapping ErrInvalid when the
// token is not one this service signed, was altered, has expired, or names
// another event or buyer than eventID and buyerID.
func (s *Signer) Verify(ctx context.Context, token, eventID, buyerID string) (Token, error) {
	key, err := s.secret(ctx)
	if err != nil {
		return Token{}, err
	}
	payload, sig, ok := strings.Cut(token, ".")
	if len(token) > MaxLength || !ok {
		return Token{}, fmt.Errorf("%w: not a queue token", ErrInvalid)
	}
	got, err := base64.RawURLEncoding.DecodeString(sig)
	if err != nil || !hmac.Equal(got, mac(key, payload)) {
		return Token{}, fmt.Errorf("%w: its signature does not match: it was altered, or not made here", ErrInvalid)
	}
	body, err := base64.RawURLEncoding.DecodeString(payload)
	if err != nil {
		return Token{}, fmt.Errorf("%w: not a queue token", ErrInvalid)
	}
	var c claims
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil || c.Key != keyID {
		return Token{}, fmt.Errorf("%w: not a queue token", ErrInvalid)
	}
	switch {
	case s.now().Unix() >= c.Expires:
		return Token{}, fmt.Errorf("%w: it expired at %s", ErrInvalid, time.Unix(c.Expires, 0).UTC().Format(time.RFC3339))
	case c.Event != eventID:
		return Token{}, fmt.Errorf("%w: it is for the queue of another event", ErrInvalid)
	case c.Buyer != buyerID:
		return Token{}, fmt.Errorf("%w: it is another buyer's", ErrInvalid)
	}
	return Token{Since: time.Unix(c.Since, 0).UTC(), Place: waitroom.Place{EventID: c.Event, BuyerID: c.Buyer,
		Drawn: c.Drawn, Rank: c.Rank, Tick: c.Tick, Lottery: c.Lottery, Queued: c.Queued}}, nil
}

func mac(key []byte, payload string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(Context))
	m.Write([]byte(payload))
	return m.Sum(nil)
}

// secret is the signing key, made by the first instance that needs it (the
// first stored wins a race) and read once; an error is not kept.
func (s *Signer) secret(ctx context.Context) ([]byte, error) {
	if key := s.key.Load(); key != nil {
		return *key, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if key := s.key.Load(); key != nil {
		return *key, nil
	}
	fresh := make([]byte, 32)
	if _, err := rand.Read(fresh); err != nil {
		return nil, err
	}
	if _, err := s.db.Exec(ctx, `INSERT INTO queue_token_keys (id, secret) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING`,
		keyID, fresh); err != nil {
		return nil, fmt.Errorf("queuetoken: the key: %w", err)
	}
	var key []byte
	if err := s.db.QueryRow(ctx, `SELECT secret FROM queue_token_keys WHERE id = $1`, keyID).Scan(&key); err != nil {
		return nil, fmt.Errorf("queuetoken: the key: %w", err)
	}
	s.key.Store(&key)
	return key, nil
}
