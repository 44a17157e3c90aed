package auth

import (
	"context"
	"encoding/hex"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/stagedoor/stagedoor/internal/conn"
)

// CredentialTTL is how long an instance trusts a session or scanner key it
// looked up, without asking PostgreSQL again. A logout or a revocation is
// announced to every instance at once (NOTIFY stagedoor_credentials, heard by
// Watch); the TTL bounds the rest: a notification missed while the listening
// connection was down (its reconnection also empties the cache). So a request
// that is refused (429, 409) costs no query at all, and a logout is in force
// everywhere within a second at most.
const CredentialTTL = time.Second

// maxCachedCredentials bounds the cache; past it, it starts again empty.
const maxCachedCredentials = 200_000

// credentialsChannel is the NOTIFY channel of ended sessions ("session:<hash
// in hex>") and revoked scanner keys ("key:<id>").
const credentialsChannel = "stagedoor_credentials"

// credentialKind is what a cached secret was verified as. A secret is trusted
// from the cache only as the kind it was verified as: a scanner key found a
// moment ago is no session token, whatever a request claims it is.
type credentialKind byte

const (
	sessionCredential credentialKind = 's'
	scannerCredential credentialKind = 'k'
)

// credentialID names a cached credential: its kind and the SHA-256 of its secret.
type credentialID struct {
	kind credentialKind
	hash [32]byte
}

type cachedCredential struct {
	principal Principal
	until     time.Time
}

// credentialCache keeps verified credentials by their kind and the SHA-256 of
// their secret.
type credentialCache struct {
	mu      sync.RWMutex
	entries map[credentialID]cachedCredential
	now     func() time.Time
}

func newCredentialCache() *credentialCache {
	return &credentialCache{entries: map[credentialID]cachedCredential{}, now: time.Now}
}

func (c *credentialCache) get(kind credentialKind, hash []byte) (Principal, bool) {
	c.mu.RLock()
	e, ok := c.entries[credentialID{kind, [32]byte(hash)}]
	c.mu.RUnlock()
	if !ok || !c.now().Before(e.until) {
		return Principal{}, false
	}
	return e.principal, true
}

// put keeps p for CredentialTTL, or until expires when that is sooner.
func (c *credentialCache) put(kind credentialKind, hash []byte, p Principal, expires time.Time) {
	until := c.now().Add(CredentialTTL)
	if !expires.IsZero() && expires.Before(until) {
		until = expires
	}
	c.mu.Lock()
	if len(c.entries) >= maxCachedCredentials {
		clear(c.entries)
	}
	c.entries[credentialID{kind, [32]byte(hash)}] = cachedCredential{principal: p, until: until}
	c.mu.Unlock()
}

// drop forgets the session whose token has this hash.
func (c *credentialCache) drop(hash []byte) {
	c.mu.Lock()
	delete(c.entries, credentialID{sessionCredential, [32]byte(hash)})
	c.mu.Unlock()
}

// dropKey forgets the scanner key with this id (revocations name the key's id).
func (c *credentialCache) dropKey(id string) {
	c.mu.Lock()
	for k, e := range c.entries {
		if k.kind == scannerCredential && e.principal.ScannerKeyID == id {
			delete(c.entries, k)
		}
	}
	c.mu.Unlock()
}

func (c *credentialCache) clear() {
	c.mu.Lock()
	clear(c.entries)
	c.mu.Unlock()
}

// forget applies one notification's payload.
func (c *credentialCache) forget(payload string) {
	switch kind, v, _ := strings.Cut(payload, ":"); kind {
	case "session":
		if h, err := hex.DecodeString(v); err == nil && len(h) == 32 {
			c.drop(h)
		}
	case "key":
		c.dropKey(v)
	default:
		c.clear() // unknown: be safe
	}
}

// Watch empties this instance's cache of credentials as every instance ends
// sessions and revokes keys, until ctx ends: it LISTENs on its own connection
// (made as the pool's are, or WithSessions's), opened again (after a wait
// doubling from 100 ms to 5 s) whenever it is lost, and empties the whole
// cache each time it starts listening, since a notification may have been
// missed meanwhile.
func (s *Service) Watch(ctx context.Context, logger *slog.Logger) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	sessions := s.store.db
	if s.sessions != nil {
		sessions = s.sessions
	}
	cfg := sessions.Config().ConnConfig.Copy()
	if cfg.RuntimeParams == nil {
		cfg.RuntimeParams = map[string]string{}
	}
	cfg.RuntimeParams["application_name"] = "stagedoor-credentials"
	conn.Listener{
		Config:  cfg,
		Channel: credentialsChannel,
		Listening: func(context.Context) func() {
			s.cache.clear() // what was announced while nobody listened
			s.watching.Store(true)
			return func() { s.watching.Store(false) }
		},
		Notified: func(_ context.Context, payload string) { s.cache.forget(payload) },
		Lost: func(err error, retryIn time.Duration) {
			logger.Warn("credentials: not listening for logouts and revocations; trusting cached ones for at most "+CredentialTTL.String(),
				"error", err, "retry_in", retryIn.String())
		},
	}.Run(ctx)
}

// Watching reports whether this instance is listening for logouts and
// revocations now (tests wait for it).
func (s *Service) Watching() bool { return s.watching.Load() }
