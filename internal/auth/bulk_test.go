package auth

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/stagedoor/stagedoor/internal/errkind"
	"github.com/stagedoor/stagedoor/internal/testenv"
)

// TestPrepareBuyersAtProductionCost: 1,000 buyers at bcrypt cost 12 are
// prepared with one hash, not the minutes of 1,000 hashes: the service counts
// one. The time it took is logged beside one hash's, not asserted (a loaded
// machine under the race detector takes seconds for either). Every session
// authenticates as its buyer.
func TestPrepareBuyersAtProductionCost(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := NewService(testenv.Postgres(t), 12)
	start := time.Now()
	if _, err := bcrypt.GenerateFromPassword([]byte("load-test-password"), 12); err != nil {
		t.Fatal(err)
	}
	oneHash := time.Since(start)
	emails := make([]string, 1000)
	for i := range emails {
		emails[i] = fmt.Sprintf("Bulk-%04d@Example.com", i)
	}
	hashes := s.Hashes()
	start = time.Now()
	sessions, err := s.PrepareBuyers(ctx, emails, "load-test-password")
	took := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("1,000 buyers prepared at bcrypt cost 12 in %s (one hash: %s)", took.Round(time.Millisecond), oneHash.Round(time.Millisecond))
	if n := s.Hashes() - hashes; n != 1 {
		t.Errorf("preparing 1,000 buyers made %d bcrypt hashes, want 1", n)
	}
	if len(sessions) != len(emails) {
		t.Fatalf("%d sessions for %d emails", len(sessions), len(emails))
	}
	seen := map[string]bool{}
	for i, sess := range sessions {
		p, err := s.Authenticate(ctx, sess.Token)
		if err != nil {
			t.Fatalf("session %d does not authenticate: %v", i, err)
		}
		if p.AccountID != sess.Principal.AccountID || p.Kind != Buyer || p.Email != fmt.Sprintf("bulk-%04d@example.com", i) {
			t.Fatalf("session %d authenticates as %+v, want buyer %s", i, p, sess.Principal.Email)
		}
		if seen[p.AccountID] {
			t.Fatalf("two sessions for account %s", p.AccountID)
		}
		seen[p.AccountID] = true
	}
}

// TestPrepareBuyersReusesAccounts: an email that has an account keeps it (and
// its password) and gets a new session; an organizer's email, a malformed
// email or password is refused before anything is written.
func TestPrepareBuyersReusesAccounts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := NewService(testenv.Postgres(t), 4)
	ada, err := s.Register(ctx, Buyer, "ada@example.com", "ada's own password", "Ada")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Register(ctx, Organizer, "org@example.com", "organizer password", "Org"); err != nil {
		t.Fatal(err)
	}
	sessions, err := s.PrepareBuyers(ctx, []string{"ada@example.com", "new@example.com", "ada@example.com"}, "load-test-password")
	if err != nil {
		t.Fatal(err)
	}
	if len(sessions) != 3 || sessions[0].Principal.AccountID != ada.ID || sessions[2].Principal.AccountID != ada.ID ||
		sessions[0].Token == sessions[2].Token || sessions[1].Principal.AccountID == ada.ID {
		t.Fatalf("sessions = %+v; want Ada's account twice (two sessions) and a new one", sessions)
	}
	for _, sess := range sessions {
		if _, err := s.Authenticate(ctx, sess.Token); err != nil {
			t.Errorf("session of %s: %v", sess.Principal.Email, err)
		}
	}
	if _, err := s.Login(ctx, "ada@example.com", "ada's own password", ""); err != nil {
		t.Errorf("Ada's password changed: %v", err)
	}
	if _, err := s.Login(ctx, "new@example.com", "load-test-password", ""); err != nil {
		t.Errorf("a prepared buyer cannot log in with the password: %v", err)
	}

	for name, call := range map[string]func() error{
		"an organizer's email": func() error {
			_, err := s.PrepareBuyers(ctx, []string{"late@example.com", "org@example.com"}, "load-test-password")
			return err
		},
		"a malformed email": func() error {
			_, err := s.PrepareBuyers(ctx, []string{"late@example.com", "not an email"}, "load-test-password")
			return err
		},
		"a short password": func() error {
			_, err := s.PrepareBuyers(ctx, []string{"late@example.com"}, "short")
			return err
		},
	} {
		if err := call(); !errors.Is(err, errkind.Invalid) {
			t.Errorf("%s: %v, want an errkind.Invalid error", name, err)
		}
	}
	if _, err := s.AccountByEmail(ctx, "late@example.com"); !errors.Is(err, errkind.NotFound) {
		t.Errorf("a refused call made an account: %v", err)
	}
}
