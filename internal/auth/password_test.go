package auth

import (
	"context"
	"errors"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"github.com/stagedoor/stagedoor/internal/testenv"
)

// storedCost is the bcrypt cost of the account's password hash in the table.
func storedCost(t *testing.T, s *Service, email string) int {
	t.Helper()
	var hash string
	if err := s.store.db.QueryRow(context.Background(), `SELECT password_hash FROM accounts WHERE email = $1`, email).Scan(&hash); err != nil {
		t.Fatal(err)
	}
	cost, err := bcrypt.Cost([]byte(hash))
	if err != nil {
		t.Fatal(err)
	}
	return cost
}

// workOf is the bcrypt work (2^cost a computation) that login does on s.
func workOf(t *testing.T, s *Service, email, password string) (int64, error) {
	t.Helper()
	before := s.work.Load()
	_, err := s.Login(context.Background(), email, password, "")
	return s.work.Load() - before, err
}

// TestALoginCostsTheCurrentCostWhateverTheStoredOne: accounts made at cost 6,
// then STAGEDOOR_BCRYPT_COST raised to 8. An unknown email and a wrong
// password on an old account both cost bcrypt work of cost 8 (the old hash is
// padded to it), so a login's time does not say which emails exist; a
// successful login stores the password again at cost 8 (read from the table),
// after which a wrong password costs cost 8 without padding. Lowered back to
// 6, the next successful login stores it at 6 again.
func TestALoginCostsTheCurrentCostWhateverTheStoredOne(t *testing.T) {
	t.Parallel()
	db := testenv.Postgres(t)
	ctx := context.Background()
	old := NewService(db, 6)
	for _, email := range []string{"stays@example.com", "logs-in@example.com"} {
		if _, err := old.Register(ctx, Buyer, email, "0123456789", "A"); err != nil {
			t.Fatal(err)
		}
	}
	if c := storedCost(t, old, "stays@example.com"); c != 6 {
		t.Fatalf("stored at cost %d, want 6", c)
	}

	raised := NewService(db, 8)
	unknown, err := workOf(t, raised, "nobody@example.com", "0123456789")
	if !errors.Is(err, ErrInvalidCredentials) || unknown != bcryptWork(8) {
		t.Errorf("an unknown email: %v after work %d, want ErrInvalidCredentials after %d (cost 8)", err, unknown, bcryptWork(8))
	}
	wrong, err := workOf(t, raised, "stays@example.com", "9876543210")
	if !errors.Is(err, ErrInvalidCredentials) || wrong != unknown {
		t.Errorf("a wrong password on an account stored at cost 6: %v after work %d, want %d as an unknown email's", err, wrong, unknown)
	}
	if c := storedCost(t, raised, "stays@example.com"); c != 6 {
		t.Errorf("a wrong password changed the stored hash to cost %d", c)
	}

	if _, err := workOf(t, raised, "logs-in@example.com", "0123456789"); err != nil {
		t.Fatal(err)
	}
	if c := storedCost(t, raised, "logs-in@example.com"); c != 8 {
		t.Errorf("after a successful login at cost 8 the password is stored at cost %d, want 8", c)
	}
	if wrong, err := workOf(t, raised, "logs-in@example.com", "9876543210"); !errors.Is(err, ErrInvalidCredentials) || wrong != bcryptWork(8) {
		t.Errorf("a wrong password after the rehash: %v after work %d, want %d", err, wrong, bcryptWork(8))
	}
	if _, err := workOf(t, raised, "logs-in@example.com", "0123456789"); err != nil {
		t.Errorf("the password stored again does not log in: %v", err)
	}

	lowered := NewService(db, 6)
	if _, err := workOf(t, lowered, "logs-in@example.com", "0123456789"); err != nil {
		t.Fatal(err)
	}
	if c := storedCost(t, lowered, "logs-in@example.com"); c != 6 {
		t.Errorf("after a successful login at cost 6 the password is stored at cost %d, want 6", c)
	}
}

// BenchmarkLoginAfterTheCostRose compares, side by side, what a refused login
// costs when STAGEDOOR_BCRYPT_COST was raised from 8 to 10 and the account has
// not logged in since: an unknown email and a wrong password should take the
// same time.
func BenchmarkLoginAfterTheCostRose(b *testing.B) {
	db := testenv.Postgres(b)
	ctx := context.Background()
	if _, err := NewService(db, 8).Register(ctx, Buyer, "old@example.com", "0123456789", "A"); err != nil {
		b.Fatal(err)
	}
	s := NewService(db, 10)
	s.dummy(8) // the padding's hashes are made once, at the first wrong password
	s.dummy(9)
	for _, bb := range []struct{ name, email string }{{"unknown-email", "nobody@example.com"}, {"wrong-password", "old@example.com"}} {
		b.Run(bb.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := s.Login(ctx, bb.email, "9876543210", ""); !errors.Is(err, ErrInvalidCredentials) {
					b.Fatal(err)
				}
			}
		})
	}
}
