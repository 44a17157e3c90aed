package auth

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/stagedoor/stagedoor/internal/errkind"
)

// TestLookAlikeEmailsAreOneAccountOrNone: an email is stored as text.Email
// normalizes it, so its look-alikes are the same account (taken) or refused,
// and a login finds the account by any of its forms.
func TestLookAlikeEmailsAreOneAccountOrNone(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newTestService(t)
	a, err := s.Register(ctx, Buyer, "Jose\u0301@example.com", "0123456789", "Jose\u0301")
	if err != nil {
		t.Fatal(err)
	}
	if a.Email != "jos\u00e9@example.com" || a.Name != "Jos\u00e9" {
		t.Errorf("account = %+v, want email and name in NFC", a)
	}
	for _, email := range []string{"jos\u00e9@example.com", "JOS\u00c9@example.com", "\uff4a\uff4f\uff53\u00e9@example.com"} {
		if _, err := s.Register(ctx, Buyer, email, "0123456789", "B"); !errors.Is(err, ErrEmailTaken) {
			t.Errorf("register %q: %v, want ErrEmailTaken", email, err)
		}
		if _, err := s.Login(ctx, email, "0123456789", ""); err != nil {
			t.Errorf("login as %q: %v", email, err)
		}
	}
	for _, tt := range []struct{ email, name, says string }{
		{"jos\u00e9\u200b@example.com", "B", "email must not contain invisible characters"},
		{"j\u043es\u00e9@example.com", "B", "email mixes scripts"}, // a Cyrillic о
		{"b@example.com", "Bob\u200b", "name must not contain invisible characters"},
		{"b@example.com", "\u2060", "name must not contain invisible characters"},
		{"b@example.com", "B\ufeff", "name must not contain invisible characters"},
	} {
		if _, err := s.Register(ctx, Buyer, tt.email, "0123456789", tt.name); !errors.Is(err, errkind.Invalid) || !strings.Contains(err.Error(), tt.says) {
			t.Errorf("register %q named %q: %v, want Invalid saying %q", tt.email, tt.name, err, tt.says)
		}
	}
	var n int
	if err := s.store.db.QueryRow(ctx, `SELECT count(*) FROM accounts`).Scan(&n); err != nil || n != 1 {
		t.Errorf("%d accounts (%v), want the one", n, err)
	}
}

// TestEmailsStoredBeforeNFCAreFound: migration 00011 stores in NFC the emails
// stored before they were normalized, so that their accounts log in; of two
// accounts whose emails have one NFC form, the older gets it.
func TestEmailsStoredBeforeNFCAreFound(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newTestService(t)
	hash, err := s.hashPassword("0123456789")
	if err != nil {
		t.Fatal(err)
	}
	// As an older Stagedoor stored them: lower-cased, but in any form.
	for i, email := range []string{"jose\u0301@example.com", "jos\u00e9@example.com", "rene\u0301e@example.com", "ada@example.com"} {
		if _, err := s.store.db.Exec(ctx, `INSERT INTO accounts (id, kind, email, name, password_hash, created_at)
			VALUES (gen_random_uuid(), 'buyer', $1, 'A', $2, now() - $3 * interval '1 minute')`, email, string(hash), 10-i); err != nil {
			t.Fatal(err)
		}
	}
	sql, err := os.ReadFile("../../migrations/00011_emails_in_nfc.sql")
	if err != nil {
		t.Fatal(err)
	}
	up, _, _ := strings.Cut(string(sql), "-- +goose Down")
	if _, err := s.store.db.Exec(ctx, up); err != nil {
		t.Fatal(err)
	}
	rows, err := s.store.db.Query(ctx, `SELECT email FROM accounts ORDER BY created_at`)
	if err != nil {
		t.Fatal(err)
	}
	var emails []string
	for rows.Next() {
		var e string
		if err := rows.Scan(&e); err != nil {
			t.Fatal(err)
		}
		emails = append(emails, e)
	}
	// The oldest josé was decomposed and gets the NFC form only if nobody has
	// it: the second already does, so the first keeps its own.
	want := []string{"jose\u0301@example.com", "jos\u00e9@example.com", "ren\u00e9e@example.com", "ada@example.com"}
	if strings.Join(emails, " ") != strings.Join(want, " ") {
		t.Errorf("after the migration: %q, want %q", emails, want)
	}
	if _, err := s.Login(ctx, "rene\u0301e@example.com", "0123456789", ""); err != nil {
		t.Errorf("the account stored decomposed does not log in after the migration: %v", err)
	}
}
