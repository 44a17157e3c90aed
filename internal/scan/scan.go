// Package scan admits tickets at the door. One conditional write admits a
// ticket exactly once, however many devices scan it at the same moment; a scan
// that admits nothing is told apart afterwards (already scanned, unknown or
// another organizer's, or another event's) by one read. Every attempt is
// recorded in an append-only audit, which organizers page through per event.
//
// The scanned code itself is never stored nor logged: the audit keeps its
// SHA-256 and its first few characters.
//
// It owns the tickets, scans (the audit) and ticket_revocations tables: an
// admission is one conditional write of the ticket's scanned_at and its audit
// row, so the tickets are this package's. internal/checkout issues a confirmed
// order's tickets through IssueTickets, holds tickets for a refund and refunds
// them through HoldForRefund, EndRefund and RefundOrder (refund.go), each in
// its own transaction, and lists a buyer's through TicketsOf. A ticket pending
// a refund admits no one, as a revoked one. A holder transfers a ticket to
// another buyer (Transfer): the ticket is revoked and a new one issued for its
// seat, in one transaction that finds the receiver through internal/auth and
// writes the notices to both through internal/mail. Its SQL reads events (the
// organizer of a ticket's event), seats (a ticket's seat), scanner keys (a
// key's label and life) and accounts (an attendee's email), each in the
// statement that needs it, and writes none of them (docs/design.md, "Where
// each rule lives"; internal/archtest checks it). The store*.go files hold its
// SQL. A ticket has at most one admitted row in the audit, always.
//
// Devices that scanned offline upload their scans (Upload); the earliest
// admission a device made offline wins, and a later one becomes a conflict in
// the audit. A scan of a code that is no ticket of the key's organizer is
// listed under the key's event, or the event a signed code names when it is
// the organizer's, or not stored at all; the janitor purges such rows
// (PurgeJunk).
package scan

import (
	"errors"
	"fmt"
	"time"

	"github.com/stagedoor/stagedoor/internal/errkind"
)

// Result is what a scan decided; it is the "result" member of the scan replies and problems.
type Result string

// The results of a scan.
const (
	// Admitted: the ticket was valid and is now scanned; this is its only admission.
	Admitted Result = "admitted"
	// AlreadyScanned: the ticket was admitted before, at FirstScannedAt.
	AlreadyScanned Result = "already_scanned"
	// Invalid: no ticket has the code, or the ticket is another organizer's
	// (its existence is not revealed).
	Invalid Result = "invalid"
	// WrongEvent: the ticket is the organizer's, but for another event than the
	// one the scanner key is bound to. Nothing was admitted.
	WrongEvent Result = "wrong_event"
	// Revoked: the ticket was revoked (by its organizer, or because it was
	// refunded), or a refund of it is under way; it admits no one.
	Revoked Result = "revoked"
	// Conflict: a scan a device admitted offline, uploaded after the ticket had
	// been admitted earlier elsewhere: someone got in twice. Only uploads
	// (Upload) have this result, and an admission that an earlier one
	// uploaded later displaced.
	Conflict Result = "conflict"
	// KeyRevoked: an uploaded scan of a revoked key, not dated within the
	// key's life before its revocation: refused and not recorded. Only
	// uploads have this result.
	KeyRevoked Result = "key_revoked"
)

// Errors returned by this package; internal/httpapi maps them to problems.
// A scan that admits nothing returns a *Rejection, which matches one of
// ErrAlreadyScanned, ErrInvalid and ErrWrongEvent with errors.Is.
var (
	// errNotFound: no such event of this organizer (another's is not revealed).
	errNotFound = errkind.NotFoundf("no such event of yours")

	ErrAlreadyScanned = errors.New("the ticket was already scanned")
	ErrInvalid        = errors.New("no ticket of yours has this code")
	ErrWrongEvent     = errors.New("the ticket is for another event than this scanner key's")
	ErrRevoked        = errors.New("the ticket was revoked (by its organizer, or it was refunded or is being refunded)")
)

// Scanner is the device that scans, as its scanner key says.
type Scanner struct {
	KeyID       string
	OrganizerID string
	EventID     string // the event the key is bound to; empty when unbound
	// KeyRevokedAt is when the key was revoked; nil while it works. Only an
	// upload hears a revoked key (of the scans dated before this).
	KeyRevokedAt *time.Time
}

// Seat is where an admitted ticket sits.
type Seat struct {
	Section string
	Row     string
	Number  int
}

// Admission is a ticket admitted by a scan.
type Admission struct {
	TicketID  string
	EventID   string
	Reference string // the ticket's short reference
	Seat      Seat
	ScannedAt time.Time
}

// Rejection is a scan that admitted nothing, and why.
type Rejection struct {
	Result Result // AlreadyScanned, Invalid, WrongEvent or Revoked
	// TicketID and EventID are the ticket's, set for AlreadyScanned and
	// WrongEvent (the organizer's own ticket); empty for Invalid.
	TicketID, EventID string
	// FirstScannedAt is when the ticket was admitted, for AlreadyScanned.
	FirstScannedAt time.Time
}

// Error says why nothing was admitted; it never holds the scanned code.
func (r *Rejection) Error() string {
	switch r.Result {
	case AlreadyScanned:
		return fmt.Sprintf("%v: it was admitted at %s", ErrAlreadyScanned, r.FirstScannedAt.UTC().Format(time.RFC3339Nano))
	case WrongEvent:
		return fmt.Sprintf("%v: it is for event %s; nothing was admitted", ErrWrongEvent, r.EventID)
	case Revoked:
		return ErrRevoked.Error()
	default:
		return ErrInvalid.Error()
	}
}

// Is lets errors.Is match the sentinel of the rejection's result.
func (r *Rejection) Is(target error) bool {
	switch r.Result {
	case AlreadyScanned:
		return target == ErrAlreadyScanned
	case WrongEvent:
		return target == ErrWrongEvent
	case Revoked:
		return target == ErrRevoked
	default:
		return target == ErrInvalid
	}
}

// Attempt is one recorded scan attempt.
type Attempt struct {
	ID           string // opaque; the audit is ordered by it
	ScannerKeyID string
	ScannerLabel string
	TicketID     string // set when the code was a ticket of the key's organizer
	CodePrefix   string // the code's first CodePrefixRunes characters
	// Reference and Seat are the ticket's, when TicketID is set: what the
	// audit shows of it (a code's prefix says nothing to people).
	Reference string
	Seat      Seat
	Result    Result
	ScannedAt time.Time // the device's time for a scan made offline
	Offline   bool      // made offline, uploaded later
	// AfterKeyRevoked: uploaded once its key was revoked (a scan dated before
	// the revocation).
	AfterKeyRevoked bool
	// DeviceScannedAt is the date an uploaded scan's device gave when it was
	// not believed (ScannedAt is then when the scan arrived); nil otherwise.
	DeviceScannedAt *time.Time
}

// Page is one page of an event's audit, newest first. NextBefore, when not
// empty, is the cursor of the next (older) page.
type Page struct {
	Attempts   []Attempt
	NextBefore string
}

// Audit paging bounds.
const (
	DefaultPageSize = 100
	MaxPageSize     = 500
)

// CodePrefixRunes is how much of a scanned code the audit keeps in clear: an
// older ticket code has 160 random bits in 32 base32 characters, so 6 of them
// leave 130 bits unknown; a signed code's first 6 are "SD1" and 15 bits of
// its version and ticket id.
const CodePrefixRunes = 6

// MaxCodeBytes bounds a scanned code as sent, surrounding space included;
// ticket codes are 159 characters (32 for tickets issued before codes were signed).
const MaxCodeBytes = 256

// ticketState is what the read after a scan that updated nothing found.
type ticketState struct {
	found     bool
	ticketID  string
	eventID   string
	mine      bool // the ticket's event belongs to the scanner's organizer
	scannedAt *time.Time
	revoked   bool // or pending a refund
}

// classify tells why a scan admitted nothing. The bound event is checked before
// the first scan, so that a ticket of another event reads as wrong_event even
// once it was admitted at its own event. ok is false when the ticket was
// admittable after all (the caller tries again).
func classify(sc Scanner, t ticketState) (r Rejection, ok bool) {
	switch {
	case !t.found || !t.mine:
		return Rejection{Result: Invalid}, true
	case sc.EventID != "" && t.eventID != sc.EventID:
		return Rejection{Result: WrongEvent, TicketID: t.ticketID, EventID: t.eventID}, true
	case t.revoked:
		return Rejection{Result: Revoked, TicketID: t.ticketID, EventID: t.eventID}, true
	case t.scannedAt != nil:
		return Rejection{Result: AlreadyScanned, TicketID: t.ticketID, EventID: t.eventID, FirstScannedAt: t.scannedAt.UTC()}, true
	}
	return Rejection{}, false
}
