package auth

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"golang.org/x/crypto/bcrypt"
	"golang.org/x/sync/singleflight"

	"github.com/stagedoor/stagedoor/internal/errkind"
	"github.com/stagedoor/stagedoor/internal/event"
)

// SessionTTL is how long a session lasts.
const SessionTTL = 12 * time.Hour

// Service registers accounts, checks passwords and keeps sessions.
type Service struct {
	store    store
	cost     int
	dummies  [bcrypt.MaxCost + 1]dummyHash // by cost: what unknown emails and padding compare with
	hashes   atomic.Int64
	work     atomic.Int64       // bcrypt's rounds, 2^cost a computation (see bcryptWork)
	cache    *credentialCache   // sessions and scanner keys verified lately
	lookups  singleflight.Group // one query a credential at a time, however many requests carry it
	watching atomic.Bool        // Watch is listening
	sessions *pgxpool.Pool      // Watch's connection is configured as this pool's
	events   Events             // who organizes a bound scanner key's event
}

// Events is what binding a scanner key to an event needs to know about events
// (*event.Service): the events table is internal/event's.
type Events interface {
	// Info returns the event's unchanging facts, or errkind.NotFound.
	Info(ctx context.Context, eventID string) (event.Info, error)
}

// NewService returns a Service storing passwords at the given bcrypt cost
// (bcrypt's least or most when it is out of their range).
func NewService(db *pgxpool.Pool, bcryptCost int) *Service {
	s := &Service{store: store{db: db}, cost: min(max(bcryptCost, bcrypt.MinCost), bcrypt.MaxCost), cache: newCredentialCache()}
	// Unknown emails are compared against a dummy hash of the current cost,
	// so they cost the same time as a wrong password and do not reveal which
	// emails exist. Made now, so that no login waits for it.
	s.dummy(s.cost)
	return s
}

// WithSessions makes Watch connect as sessions' connections do instead of
// the service's pool's: PostgreSQL itself, when the pool's URL is a
// transaction pooler, on which a LISTEN would not outlast its transaction.
func (s *Service) WithSessions(sessions *pgxpool.Pool) *Service {
	s.sessions = sessions
	return s
}

// WithEvents makes CreateScannerKey check a bound key's event with events,
// and returns the Service; without it a key can only be made unbound. Call it
// before the Service is used.
func (s *Service) WithEvents(events Events) *Service {
	s.events = events
	return s
}

// Hashes is how many bcrypt computations the service has made (tests use it to
// prove a refused login cost none).
func (s *Service) Hashes() int64 { return s.hashes.Load() }

// Register creates an account. It returns an errkind.Invalid error
// (with what is wrong) or ErrEmailTaken.
func (s *Service) Register(ctx context.Context, kind Kind, email, password, name string) (Account, error) {
	email, err := ParseEmail(email)
	if err != nil {
		return Account{}, err
	}
	if err := validatePassword(password); err != nil {
		return Account{}, err
	}
	name, err = checkName(name)
	if err != nil {
		return Account{}, err
	}
	hash, err := s.hashPassword(password)
	if err != nil {
		return Account{}, err
	}
	return s.store.createAccount(ctx, Account{Kind: kind, Email: email, Name: name}, hash)
}

// Login checks the password of the account with this email and opens a
// session, and remembers the device: the session carries the device token to
// present at the next login (deviceToken again, when it is the account's live
// one; else a new one). Unknown email and wrong password both return
// ErrInvalidCredentials, after bcrypt work of the current cost each (see
// comparePassword). A password stored at another cost is stored again at the
// current one once it matches. A malformed email or password wraps an
// errkind.Invalid error and costs no hash.
func (s *Service) Login(ctx context.Context, email, password, deviceToken string) (Session, error) {
	email, err := ParseEmail(email)
	if err != nil {
		return Session{}, err
	}
	if password == "" {
		return Session{}, errkind.Invalidf("password is required")
	}
	if len(password) > MaxPasswordBytes {
		return Session{}, errkind.Invalidf("password must be at most %d bytes", MaxPasswordBytes)
	}
	account, hash, err := s.store.accountByEmail(ctx, email)
	if errors.Is(err, pgx.ErrNoRows) {
		s.compareDummy(s.cost, password)
		return Session{}, ErrInvalidCredentials
	}
	if err != nil {
		return Session{}, fmt.Errorf("auth: look up account: %w", err)
	}
	if !s.comparePassword(hash, password) {
		return Session{}, ErrInvalidCredentials
	}
	if err := s.rehash(ctx, account.ID, hash, password); err != nil {
		return Session{}, err
	}

	token, tokenHash := newToken()
	expires := time.Now().Add(SessionTTL).UTC().Truncate(time.Second)
	if err := s.store.createSession(ctx, tokenHash, account.ID, expires); err != nil {
		return Session{}, err
	}
	device, deviceExpires, err := s.rememberDevice(ctx, account.ID, deviceToken)
	if err != nil {
		return Session{}, err
	}
	return Session{
		Token:           token,
		ExpiresAt:       expires,
		Principal:       Principal{AccountID: account.ID, Kind: account.Kind, Email: account.Email},
		DeviceToken:     device,
		DeviceExpiresAt: deviceExpires,
	}, nil
}

// AccountByEmail returns the account with this email (normalized), or
// an errkind.NotFound error. It checks no password: it is for tools such as stagedoor seed.
func (s *Service) AccountByEmail(ctx context.Context, email string) (Account, error) {
	a, _, err := s.store.accountByEmail(ctx, NormalizeEmail(email))
	if errors.Is(err, pgx.ErrNoRows) {
		return Account{}, errkind.NotFoundf("no account has email %s", NormalizeEmail(email))
	}
	if err != nil {
		return Account{}, fmt.Errorf("auth: look up account: %w", err)
	}
	return a, nil
}

// BuyerByEmail returns the buyer account with this email, normalized as at
// signup (ParseEmail), read with q: the caller's transaction when the lookup
// is part of it (a ticket's transfer finds its receiver so). ErrNoSuchBuyer
// when no account has the email or an organizer's has, which it does not tell
// apart; an errkind.Invalid error for a malformed email.
func BuyerByEmail(ctx context.Context, q Querier, email string) (Account, error) {
	email, err := ParseEmail(email)
	if err != nil {
		return Account{}, err
	}
	a, err := accountWhere(ctx, q, whereEmail, email)
	if errors.Is(err, pgx.ErrNoRows) || err == nil && a.Kind != Buyer {
		return Account{}, ErrNoSuchBuyer
	}
	if err != nil {
		return Account{}, fmt.Errorf("auth: look up the buyer: %w", err)
	}
	return a, nil
}

// AccountByID returns the account with this id, read with q (the caller's
// transaction when the lookup is part of it), or an errkind.NotFound error.
func AccountByID(ctx context.Context, q Querier, id string) (Account, error) {
	a, err := accountWhere(ctx, q, whereID, id)
	if errors.Is(err, pgx.ErrNoRows) {
		return Account{}, errkind.NotFoundf("no account %s", id)
	}
	if err != nil {
		return Account{}, fmt.Errorf("auth: look up account %s: %w", id, err)
	}
	return a, nil
}

// Emails returns the email of each of the accounts with these ids, by id;
// ids of no account are left out.
func (s *Service) Emails(ctx context.Context, accountIDs []string) (map[string]string, error) {
	emails, err := s.store.emails(ctx, accountIDs)
	if err != nil {
		return nil, fmt.Errorf("auth: read the accounts' emails: %w", err)
	}
	return emails, nil
}

// Authenticate returns the principal of a live session token, or an
// errkind.Unauthorized error. A session verified in the last CredentialTTL is
// trusted without a query (see Watch for how a logout reaches every instance).
func (s *Service) Authenticate(ctx context.Context, token string) (Principal, error) {
	if token == "" || len(token) > 100 {
		return Principal{}, errUnauthenticated
	}
	hash := hashToken(token)
	if p, ok := s.cache.get(sessionCredential, hash); ok {
		return p, nil
	}
	return s.lookup(ctx, sessionCredential, hash, func(ctx context.Context) (Principal, time.Time, error) {
		return s.store.principalBySession(ctx, hash)
	})
}

// lookup runs find for a credential not in the cache, once however many
// requests carrying it arrive together (when a busy token's second of trust
// ends, fifty requests would otherwise make fifty queries), and caches what it
// finds. The query outlives a caller that goes away: the others wait on it.
func (s *Service) lookup(ctx context.Context, kind credentialKind, hash []byte, find func(context.Context) (Principal, time.Time, error)) (Principal, error) {
	v, err, _ := s.lookups.Do(string(kind)+string(hash), func() (any, error) {
		p, expires, err := find(context.WithoutCancel(ctx))
		if err != nil {
			return nil, err
		}
		s.cache.put(kind, hash, p, expires)
		return p, nil
	})
	if err != nil {
		return Principal{}, err
	}
	return v.(Principal), nil
}

// Logout revokes a session token, and announces it to every instance.
func (s *Service) Logout(ctx context.Context, token string) error {
	hash := hashToken(token)
	s.cache.drop(hash)
	return s.store.revokeSession(ctx, hash)
}

// newToken returns 256 random bits, URL-safe, and their SHA-256.
func newToken() (string, []byte) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	token := base64.RawURLEncoding.EncodeToString(b)
	return token, hashToken(token)
}

func hashToken(token string) []byte {
	sum := sha256.Sum256([]byte(token))
	return sum[:]
}
