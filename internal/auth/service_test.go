package auth

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/stagedoor/stagedoor/internal/errkind"
	"github.com/stagedoor/stagedoor/internal/testenv"
)

func newTestService(t *testing.T) *Service {
	t.Helper()
	return NewService(testenv.Postgres(t), 4)
}

func TestRegisterAndLogin(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newTestService(t)
	a, err := s.Register(ctx, Buyer, "  Ada@Example.COM ", "correct horse battery", "Ada")
	if err != nil {
		t.Fatal(err)
	}
	if a.Email != "ada@example.com" || a.Kind != Buyer || a.ID == "" {
		t.Fatalf("account = %+v, want the normalized email", a)
	}
	sess, err := s.Login(ctx, "ADA@example.com", "correct horse battery", "")
	if err != nil {
		t.Fatal(err)
	}
	if len(sess.Token) < 43 || sess.Principal.AccountID != a.ID {
		t.Fatalf("session = %+v", sess)
	}
	p, err := s.Authenticate(ctx, sess.Token)
	if err != nil || p.AccountID != a.ID || p.Kind != Buyer {
		t.Fatalf("Authenticate = %+v, %v", p, err)
	}

	var stored int
	if err := s.store.db.QueryRow(ctx, `SELECT count(*) FROM sessions WHERE position($1::bytea in token_hash) > 0`,
		[]byte(sess.Token)).Scan(&stored); err != nil || stored != 0 {
		t.Errorf("the token itself is stored (%d rows, %v)", stored, err)
	}
}

func TestWrongPasswordAndUnknownEmailAnswerAlike(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newTestService(t)
	if _, err := s.Register(ctx, Organizer, "org@example.com", "0123456789", "Org"); err != nil {
		t.Fatal(err)
	}
	before := s.Hashes()
	_, wrong := s.Login(ctx, "org@example.com", "9876543210", "")
	_, unknown := s.Login(ctx, "nobody@example.com", "9876543210", "")
	if !errors.Is(wrong, ErrInvalidCredentials) || !errors.Is(unknown, ErrInvalidCredentials) {
		t.Fatalf("wrong password = %v, unknown email = %v; want ErrInvalidCredentials for both", wrong, unknown)
	}
	if got := s.Hashes() - before; got != 2 {
		t.Errorf("%d hashes for the two logins, want one each (an unknown email is compared to a dummy hash)", got)
	}
}

func TestRegisterValidation(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newTestService(t)
	if _, err := s.Register(ctx, Buyer, "taken@example.com", strings.Repeat("p", 72), "T"); err != nil {
		t.Fatalf("a 72-byte password: %v", err)
	}
	tests := []struct {
		name, email, password, display string
		want                           error
		says                           string
	}{
		{"73-byte password", "a@example.com", strings.Repeat("p", 73), "A", errkind.Invalid, "at most 72 bytes"},
		{"9-byte password", "a@example.com", "123456789", "A", errkind.Invalid, "at least 10"},
		{"no email", "", "0123456789", "A", errkind.Invalid, "email is required"},
		{"bad email", "not-an-email", "0123456789", "A", errkind.Invalid, "not an address"},
		{"no name", "a@example.com", "0123456789", " ", errkind.Invalid, "name is required"},
		{"taken", "TAKEN@example.com", "0123456789", "B", ErrEmailTaken, "already exists"},
	}
	for _, tt := range tests {
		_, err := s.Register(ctx, Buyer, tt.email, tt.password, tt.display)
		if !errors.Is(err, tt.want) || !strings.Contains(err.Error(), tt.says) {
			t.Errorf("%s: %v, want %v saying %q", tt.name, err, tt.want, tt.says)
		}
	}
	var n int
	_ = s.store.db.QueryRow(ctx, `SELECT count(*) FROM accounts`).Scan(&n)
	if n != 1 {
		t.Errorf("%d accounts stored, want only the first", n)
	}
}

func TestConcurrentRegistrationsOfOneEmail(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newTestService(t)
	var wg sync.WaitGroup
	var mu sync.Mutex
	created, taken := 0, 0
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := s.Register(ctx, Buyer, "race@example.com", "0123456789", "R")
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				created++
			case errors.Is(err, ErrEmailTaken):
				taken++
			default:
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if created != 1 || taken != 19 {
		t.Errorf("created %d, taken %d; want 1 and 19", created, taken)
	}
}

func TestLogoutAndExpiry(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newTestService(t)
	if _, err := s.Register(ctx, Buyer, "b@example.com", "0123456789", "B"); err != nil {
		t.Fatal(err)
	}
	first, _ := s.Login(ctx, "b@example.com", "0123456789", "")
	second, _ := s.Login(ctx, "b@example.com", "0123456789", "")
	if err := s.Logout(ctx, first.Token); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Authenticate(ctx, first.Token); !errors.Is(err, errkind.Unauthorized) {
		t.Errorf("after logout Authenticate = %v", err)
	}
	if _, err := s.Authenticate(ctx, second.Token); err != nil {
		t.Errorf("logout revoked another session too: %v", err)
	}
	if _, err := s.store.db.Exec(ctx, `UPDATE sessions SET expires_at = now() - interval '1 second'`); err != nil {
		t.Fatal(err)
	}
	other := NewService(s.store.db, 4) // another instance: nothing cached
	if _, err := other.Authenticate(ctx, second.Token); !errors.Is(err, errkind.Unauthorized) {
		t.Errorf("an expired session authenticates: %v", err)
	}
	if _, err := s.Authenticate(ctx, "made-up"); !errors.Is(err, errkind.Unauthorized) {
		t.Errorf("a made-up token: %v", err)
	}
}
