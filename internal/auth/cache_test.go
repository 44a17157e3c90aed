package auth

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/stagedoor/stagedoor/internal/errkind"
	"github.com/stagedoor/stagedoor/internal/testenv"
)

// watching starts s.Watch for the test and waits until it listens.
func watching(t *testing.T, s *Service) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); s.Watch(ctx, nil) }()
	t.Cleanup(func() { cancel(); <-done })
	testenv.Eventually(t, 5*time.Second, s.Watching, "Watch to listen")
}

// TestLogoutReachesEveryInstanceAtOnce: two instances trust a session they
// looked up; a logout on one is refused by the other within one notification,
// however long the cache would keep it; so is a revoked scanner key.
func TestLogoutReachesEveryInstanceAtOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a := newTestService(t)
	b := NewService(a.store.db, 4)
	watching(t, a)
	watching(t, b)
	if _, err := a.Register(ctx, Organizer, "o@example.com", "0123456789", "O"); err != nil {
		t.Fatal(err)
	}
	session, err := a.Login(ctx, "o@example.com", "0123456789", "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Authenticate(ctx, session.Token); err != nil { // cached on b now
		t.Fatal(err)
	}
	key, err := a.CreateScannerKey(ctx, session.Principal.AccountID, "Door", "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.AuthenticateScannerKey(ctx, key.Key); err != nil {
		t.Fatal(err)
	}
	if err := a.Logout(ctx, session.Token); err != nil {
		t.Fatal(err)
	}
	if err := a.RevokeScannerKey(ctx, session.Principal.AccountID, key.ID); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	testenv.Eventually(t, CredentialTTL/2, func() bool {
		_, sErr := b.Authenticate(ctx, session.Token)
		_, kErr := b.AuthenticateScannerKey(ctx, key.Key)
		return errors.Is(sErr, errkind.Unauthorized) && errors.Is(kErr, errkind.Unauthorized)
	}, "the other instance to stop trusting the session and the key (the notification)")
	t.Logf("the logout reached the other instance in %v", time.Since(start))
}

// TestAReconnectedWatcherForgetsEverything: with the listening connection cut,
// a logout's notification is lost; when the watcher listens again it empties
// the cache, so no stale session survives the reconnection.
func TestAReconnectedWatcherForgetsEverything(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a := newTestService(t)
	b := NewService(a.store.db, 4)
	if _, err := a.Register(ctx, Buyer, "b@example.com", "0123456789", "B"); err != nil {
		t.Fatal(err)
	}
	session, _ := a.Login(ctx, "b@example.com", "0123456789", "")
	if _, err := b.Authenticate(ctx, session.Token); err != nil {
		t.Fatal(err)
	}
	if err := a.Logout(ctx, session.Token); err != nil { // nobody listens on b yet: missed
		t.Fatal(err)
	}
	if _, err := b.Authenticate(ctx, session.Token); err != nil {
		t.Fatalf("b forgot at once without a listener (%v): the test shows nothing", err)
	}
	watching(t, b) // starting (or restarting) to listen empties the cache
	if _, err := b.Authenticate(ctx, session.Token); !errors.Is(err, errkind.Unauthorized) {
		t.Errorf("after the watcher listened again, the logged-out session: %v, want Unauthorized", err)
	}
	// Cut the listening connection: the watcher connects again, and forgets again.
	fresh, _ := a.Login(ctx, "b@example.com", "0123456789", "")
	if _, err := b.Authenticate(ctx, fresh.Token); err != nil {
		t.Fatal(err)
	}
	if _, err := a.store.db.Exec(ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
		WHERE application_name = 'stagedoor-credentials' AND datname = current_database()`); err != nil {
		t.Fatal(err)
	}
	if err := a.Logout(ctx, fresh.Token); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 3*time.Second, func() bool {
		_, err := b.Authenticate(ctx, fresh.Token)
		return errors.Is(err, errkind.Unauthorized)
	}, "a session logged out while the listener was cut to be trusted no more")
}

// TestABusyTokenIsLookedUpOnce: fifty requests carrying one session that is not
// in the cache (its second of trust just ended) make one query between them.
func TestABusyTokenIsLookedUpOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cfg, err := pgxpool.ParseConfig(testenv.DatabaseURL(t))
	if err != nil {
		t.Fatal(err)
	}
	var queries atomic.Int64
	cfg.ConnConfig.Tracer = countQueries{&queries}
	db, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	s := NewService(db, 4)
	if _, err := s.Register(ctx, Buyer, "b@example.com", "0123456789", "B"); err != nil {
		t.Fatal(err)
	}
	session, err := s.Login(ctx, "b@example.com", "0123456789", "")
	if err != nil {
		t.Fatal(err)
	}
	for round := range 3 {
		s.cache.drop(hashToken(session.Token))
		before := queries.Load()
		var wg sync.WaitGroup
		start := make(chan struct{})
		for range 50 {
			wg.Go(func() {
				<-start
				if _, err := s.Authenticate(ctx, session.Token); err != nil {
					t.Error(err)
				}
			})
		}
		close(start)
		wg.Wait()
		if n := queries.Load() - before; n > 2 { // a straggler may arrive after the first lookup ended
			t.Fatalf("round %d: 50 requests with one uncached token made %d queries, want 1", round, n)
		}
	}
}

// countQueries counts the statements a pool sends.
type countQueries struct{ n *atomic.Int64 }

func (c countQueries) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	c.n.Add(1)
	return ctx
}

func (countQueries) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// TestAScannerKeyIsNoSessionToken: a scanner key just verified (so in the
// cache for a second) is refused as a session token, and a session token as a
// scanner key: the cache keeps each credential with its kind, and each lookup
// takes its own kind only.
func TestAScannerKeyIsNoSessionToken(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newTestService(t)
	if _, err := s.Register(ctx, Organizer, "o@example.com", "0123456789", "O"); err != nil {
		t.Fatal(err)
	}
	session, err := s.Login(ctx, "o@example.com", "0123456789", "")
	if err != nil {
		t.Fatal(err)
	}
	key, err := s.CreateScannerKey(ctx, session.Principal.AccountID, "Door", "")
	if err != nil {
		t.Fatal(err)
	}
	if p, err := s.AuthenticateScannerKey(ctx, key.Key); err != nil || p.Kind != Scanner {
		t.Fatalf("the scanner key = %+v, %v", p, err)
	}
	if p, err := s.Authenticate(ctx, key.Key); !errors.Is(err, errkind.Unauthorized) {
		t.Errorf("the scanner key as a session token, within its second in the cache = %+v, %v; want Unauthorized", p, err)
	}
	if _, err := s.Authenticate(ctx, session.Token); err != nil {
		t.Fatal(err)
	}
	if p, err := s.AuthenticateScannerKey(ctx, session.Token); !errors.Is(err, errkind.Unauthorized) {
		t.Errorf("the session token as a scanner key = %+v, %v; want Unauthorized", p, err)
	}
}
