// Package errkind is the handful of kinds that Stagedoor's errors fall into
// when a client is to be told: invalid input, not found, unauthorized,
// forbidden, unavailable. A feature package wraps a kind with its own message,
// written for the client:
//
//	return errkind.Invalidf("seat_ids must list 1 to %d seats; it lists %d", MaxSeats, n)
//
// and internal/httpapi maps each kind to one problem type. An error that a
// client must tell apart from its kind (seats taken, a payment declined) is a
// named error of its package instead, and an exception in that table.
package errkind

//lint:file-ignore ST1012 the kinds are read as errkind.Invalid, errkind.NotFound: the package's name says they are errors.

import (
	"errors"
	"fmt"
)

// The kinds. Match them with errors.Is.
var (
	// Invalid: the request is malformed or out of range; nothing was changed.
	Invalid = errors.New("invalid request")
	// NotFound: no such thing, or one that belongs to someone else (whose
	// existence is not revealed).
	NotFound = errors.New("not found")
	// Unauthorized: no credential, or one that is unknown, expired or revoked.
	Unauthorized = errors.New("unauthorized")
	// Forbidden: a valid credential without the right.
	Forbidden = errors.New("forbidden")
	// Unavailable: a service the request needs did not answer; it may not
	// have been carried out, and may be retried.
	Unavailable = errors.New("unavailable")
)

// kindError is an error of a kind: its text is the message alone, and
// errors.Is matches both the kind and whatever the message wraps.
type kindError struct {
	kind error
	err  error
}

func (e *kindError) Error() string   { return e.err.Error() }
func (e *kindError) Unwrap() []error { return []error{e.kind, e.err} }

func newf(kind error, format string, args ...any) error {
	return &kindError{kind: kind, err: fmt.Errorf(format, args...)}
}

// Invalidf is an Invalid error with the message format makes (%w allowed).
func Invalidf(format string, args ...any) error { return newf(Invalid, format, args...) }

// NotFoundf is a NotFound error with the message format makes.
func NotFoundf(format string, args ...any) error { return newf(NotFound, format, args...) }

// Unauthorizedf is an Unauthorized error with the message format makes.
func Unauthorizedf(format string, args ...any) error { return newf(Unauthorized, format, args...) }

// Forbiddenf is a Forbidden error with the message format makes.
func Forbiddenf(format string, args ...any) error { return newf(Forbidden, format, args...) }

// Unavailablef is an Unavailable error with the message format makes.
func Unavailablef(format string, args ...any) error { return newf(Unavailable, format, args...) }
