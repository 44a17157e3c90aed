// Package auth holds accounts (buyers and organizers), their bcrypt passwords,
// sessions and scanner keys: opaque secrets stored only as their SHA-256. A
// verified credential becomes a Principal; handlers never parse tokens themselves.
//
// It owns the accounts, sessions, devices and scanner_keys tables, and its SQL
// names no other: a bound scanner key's event is checked through the Events
// given to WithEvents (event.Service). It does not decide
// what a principal may do (internal/httpapi's rings do) nor limit logins (the
// limiter does, before any hash is computed here).
package auth

import (
	"errors"
	"net/mail"
	"strings"
	"time"

	"github.com/stagedoor/stagedoor/internal/errkind"
	"github.com/stagedoor/stagedoor/internal/text"
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
	// DeviceToken identifies the device this login came from; presented at the
	// next login, it spares the owner the limits an attacker's guesses exhaust.
	DeviceToken     string
	DeviceExpiresAt time.Time
}

// Errors returned by this package; internal/httpapi maps them to problems.
// Besides these: malformed input is an errkind.Invalid error saying what is
// wrong, an unknown, expired or revoked session or scanner key is
// errkind.Unauthorized, and an unknown scanner key or account errkind.NotFound.
var (
	ErrEmailTaken         = errors.New("an account with this email already exists")
	ErrInvalidCredentials = errors.New("the email and password do not match an account")
	// ErrNoSuchBuyer: no buyer account has this email (an organizer's
	// account is none either; the two are not told apart).
	ErrNoSuchBuyer = errors.New("no buyer account has this email")

	errUnauthenticated = errkind.Unauthorizedf("the session token is unknown, expired or revoked")
	errUnknownKey      = errkind.Unauthorizedf("the scanner key is unknown or revoked")
)

// Password length bounds, in bytes. bcrypt reads at most 72 bytes; a longer
// password is refused rather than silently truncated.
const (
	MinPasswordBytes = 10
	MaxPasswordBytes = 72
)

// NormalizeEmail trims and lower-cases an email address and puts it in NFC
// (text.NormalizeEmail).
func NormalizeEmail(email string) string {
	return text.NormalizeEmail(email)
}

// MaxEmailBytes is the longest email address accepted (RFC 5321's path limit).
const MaxEmailBytes = 254

// ParseEmail normalizes email and checks that it is a plain address such as
// ada@example.com, at most MaxEmailBytes long, that cannot pass for another
// (text.Email: no invisible character, one script before the @), or returns an
// errkind.Invalid error. Handlers call it before an email becomes a limiter
// key; accounts are stored, found and limited by what it returns.
func ParseEmail(email string) (string, error) {
	email = strings.TrimSpace(email)
	if email == "" {
		return "", errkind.Invalidf("email is required")
	}
	if len(email) > MaxEmailBytes {
		return "", errkind.Invalidf("email is longer than %d bytes", MaxEmailBytes)
	}
	email, err := text.Email("email", email, MaxEmailBytes)
	if err != nil {
		return "", err
	}
	addr, err := mail.ParseAddress(email)
	if err != nil || addr.Address != email || addr.Name != "" {
		return "", errkind.Invalidf("email %s is not an address such as ada@example.com", text.Describe(email))
	}
	return email, nil
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

// MaxNameRunes is the longest account name, in characters.
const MaxNameRunes = 200

// checkName returns the name to store (trimmed, in NFC), or an errkind.Invalid error.
func checkName(name string) (string, error) {
	return text.Name("name", name, MaxNameRunes)
}
