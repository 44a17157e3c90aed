package payrail

import (
	"crypto/rand"
	"encoding/hex"
	"sync"
	"time"
)

// Status is the outcome of a charge.
type Status string

// The outcomes a charge can have.
const (
	StatusSucceeded Status = "succeeded"
	StatusDeclined  Status = "declined"
)

// The test tokens Payrail knows. Any other token is declined.
const (
	TokenVisa     = "tok_visa"     // succeeds
	TokenDeclined = "tok_declined" // declines with 402
	TokenError    = "tok_error"    // answers 500 and records nothing
)

// Charge is one recorded outcome: a succeeded or a declined charge. Requests
// answered 500 record nothing.
type Charge struct {
	ID             string    `json:"id"`
	Status         Status    `json:"status"`
	AmountCents    int64     `json:"amount_cents"`
	Currency       string    `json:"currency"`
	IdempotencyKey string    `json:"idempotency_key"`
	DeclineReason  string    `json:"decline_reason,omitempty"`
	CreatedAt      time.Time `json:"created_at"`
}

// ledger holds the charges in memory, in creation order, one per idempotency key.
type ledger struct {
	mu      sync.Mutex
	charges []Charge
	byKey   map[string]int // idempotency key → index in charges
}

// outcome says how a charge request was settled by ledger.settle.
type outcome int

const (
	outcomeNew      outcome = iota // a new charge was recorded
	outcomeReplayed                // the key already had a charge; it is returned
	outcomeFailed                  // a 500: nothing recorded
)

// settle returns the charge already recorded for key, or else calls decide and
// records the charge it returns, unless decide reports a failure (ok false). The
// whole of it runs under the lock, so under a race exactly one request per key
// records a charge and the others replay it. decide must not block.
func (l *ledger) settle(key string, decide func() (c Charge, ok bool)) (Charge, outcome) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if i, found := l.byKey[key]; found {
		return l.charges[i], outcomeReplayed
	}
	c, ok := decide()
	if !ok {
		return Charge{}, outcomeFailed
	}
	c.ID = newChargeID()
	c.IdempotencyKey = key
	c.CreatedAt = time.Now().UTC()
	if l.byKey == nil {
		l.byKey = make(map[string]int)
	}
	l.byKey[key] = len(l.charges)
	l.charges = append(l.charges, c)
	return c, outcomeNew
}

// byIdempotencyKey returns the charge recorded for key, if any.
func (l *ledger) byIdempotencyKey(key string) (Charge, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	i, ok := l.byKey[key]
	if !ok {
		return Charge{}, false
	}
	return l.charges[i], true
}

// all returns a copy of every charge in creation order, never nil.
func (l *ledger) all() []Charge {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]Charge, len(l.charges))
	copy(out, l.charges)
	return out
}

// newChargeID returns "ch_" and 128 random bits in hex.
func newChargeID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return "ch_" + hex.EncodeToString(b[:])
}
