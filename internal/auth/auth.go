// Package auth holds accounts (buyers and organizers), their bcrypt passwords,
// sessions and scanner keys: opaque secrets stored only as their SHA-256. A
// verified credential becomes a Principal; handlers never parse tokens themselves.
//
// It owns the accounts, sessions and scanner_keys tables. It does not decide
// what a principal may do (internal/httpapi's rings do) nor limit logins (the
// limiter does, before any hash is computed here).
package auth

import (
	"errors"
	"net/mail"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/stagedoor/stagedoor/internal/errkind"
)

// Kind is what an account is.
type Kind string

// The kinds of account.
const (
	Buyer     Kind = "buyer"
	Organizer Kind = "organizer"
)

// Account is a buyer or an organizer.
type Account struct {
	ID    string
	Kind  Kind
	Email string
	Name  string
}

// Principal is who a request acts for, once its credential is verified.
type Principal struct {
	// AccountID is the buyer or organizer; for a scanner key, its organizer.
	AccountID string
	Kind      Kind
	Email     string // empty for a scanner key
	// ScannerKeyID is the key of a Scanner principal, and EventID the event that
	// key is bound to (empty when unbound); both empty for sessions.
	ScannerKeyID string
	EventID      string
}

// Session is a signed-in account's bearer token. Token is shown once, at login.
type Session struct {
	Token     string
	ExpiresAt time.Time
	Principal Principal
}

// Errors returned by this package; internal/httpapi maps them to problems.
// Besides these: malformed input is an errkind.Invalid error saying what is
// wrong, an unknown, expired or revoked session or scanner key is
// errkind.Unauthorized, and an unknown scanner key or account errkind.NotFound.
var (
	ErrEmailTaken         = errors.New("an account with this email already exists")
	ErrInvalidCredentials = errors.New("the email and password do not match an account")

	errUnauthenticated = errkind.Unauthorizedf("the session token is unknown, expired or revoked")
	errUnknownKey      = errkind.Unauthorizedf("the scanner key is unknown or revoked")
)

// Password length bounds, in bytes. bcrypt reads at most 72 bytes; a longer
// password is refused rather than silently truncated.
const (
	MinPasswordBytes = 10
	MaxPasswordBytes = 72
)

// NormalizeEmail trims and lower-cases an email address.
func NormalizeEmail(email string) string {
	return strings.ToLower(strings.TrimSpace(email))
}

// validateEmail reports an errkind.Invalid error unless email (normalized) is a plain address.
func validateEmail(email string) error {
	if email == "" {
		return errkind.Invalidf("email is required")
	}
	if len(email) > 254 {
		return errkind.Invalidf("email is longer than 254 characters")
	}
	addr, err := mail.ParseAddress(email)
	if err != nil || addr.Address != email || addr.Name != "" {
		return errkind.Invalidf("email %q is not an address such as ada@example.com", email)
	}
	return nil
}

func validatePassword(password string) error {
	switch n := len(password); {
	case password == "":
		return errkind.Invalidf("password is required")
	case n < MinPasswordBytes:
		return errkind.Invalidf("password must be at least %d bytes", MinPasswordBytes)
	case n > MaxPasswordBytes:
		return errkind.Invalidf("password must be at most %d bytes (it is %d); bcrypt reads no more, and Stagedoor never truncates it", MaxPasswordBytes, n)
	}
	return nil
}

func validateName(name string) error {
	switch n := utf8.RuneCountInString(strings.TrimSpace(name)); {
	case n == 0:
		return errkind.Invalidf("name is required")
	case n > 200:
		return errkind.Invalidf("name is longer than 200 characters")
	}
	return nil
}
