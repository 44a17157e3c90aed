package scan

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/stagedoor/stagedoor/internal/errkind"
	"github.com/stagedoor/stagedoor/internal/text"
	"github.com/stagedoor/stagedoor/internal/ticketsign"
)

// MaxUpload is the most scans one upload carries.
const MaxUpload = 200

// DeviceScan is one scan a door device made and uploads later: one it could
// not send (the network was down) or one it admitted on its own, offline.
type DeviceScan struct {
	// DeviceScanID names the scan on its device: an upload of it again (a
	// retried batch) changes nothing and answers the same.
	DeviceScanID string
	Code         string
	ScannedAt    time.Time // the device's clock
	Offline      bool      // the device admitted it on its own, offline
}

// Settled is what became of an uploaded scan.
type Settled struct {
	DeviceScanID string
	Result       Result // Admitted, AlreadyScanned, Conflict, Invalid, WrongEvent, Revoked or KeyRevoked
	TicketID     string
	// FirstScannedAt is the ticket's admission, for the organizer's own ticket.
	FirstScannedAt *time.Time
	Replayed       bool // uploaded before: the answer of what was stored then
}

// Upload settles a device's scans in the order the device made them.
//
// A device's clock is believed only within the window of what can be true:
// not before its key was made nor before the newest scan the key uploaded
// before (a device uploads its queue oldest first), not after now, and for a
// revoked key not after its revocation. A scan dated outside it is taken as
// made when it arrives; a revoked key's is refused (KeyRevoked) and not
// recorded: only what it did before it was revoked is heard.
//
// A ticket has one admission: the earliest a device made. A scan the device
// admitted offline (Offline) dated before the ticket's recorded admission
// takes its place, and that one becomes a conflict; one dated after it is a
// conflict (someone got in twice). A scan the device only queued is decided
// now: admitted if the ticket never was, already_scanned if it was, whatever
// its date. A signed code is settled by the ticket its signature names, once
// the signature is checked; a respelling of one counts only as an offline
// admission (a device accepted it: someone got in), and is refused otherwise.
// Each scan is recorded once per device scan id, whatever the retries.
//
// spend is asked before each scan is settled, oldest first; when it refuses,
// Upload returns the scans settled so far (the others are for a later
// upload), or spend's error when it refused the first. The Settled are in the
// order of scans.
func (s *Service) Upload(ctx context.Context, sc Scanner, scans []DeviceScan, spend func(context.Context) error) ([]Settled, error) {
	if len(scans) == 0 || len(scans) > MaxUpload {
		return nil, errkind.Invalidf("scans must list 1 to %d scans; it lists %d", MaxUpload, len(scans))
	}
	seen := make(map[string]bool, len(scans))
	for i, d := range scans {
		if err := text.Required(fmt.Sprintf("scans[%d].device_scan_id", i), d.DeviceScanID, 100); err != nil {
			return nil, err
		}
		if len(d.Code) > MaxCodeBytes { // a shorter code that is none is answered invalid, not refused
			return nil, errkind.Invalidf("scans[%d].code is longer than %d bytes; no ticket has such a code", i, MaxCodeBytes)
		}
		if seen[d.DeviceScanID] {
			return nil, errkind.Invalidf("scans lists device_scan_id %q twice", d.DeviceScanID)
		}
		seen[d.DeviceScanID] = true
	}
	order := make([]int, len(scans))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return scans[a].ScannedAt.Compare(scans[b].ScannedAt) })
	w, err := s.store.window(ctx, sc)
	if err != nil {
		return nil, err
	}
	out := make([]Settled, len(scans))
	done := make([]bool, len(scans))
	for n, i := range order {
		if spend != nil {
			if err := spend(ctx); err != nil {
				if n == 0 {
					return nil, err
				}
				break
			}
		}
		if out[i], err = s.settle(ctx, sc, w, scans[i]); err != nil {
			return nil, err
		}
		done[i] = true
	}
	settled := out[:0]
	for i, st := range out {
		if done[i] {
			settled = append(settled, st)
		}
	}
	return settled, nil
}

// window is the span of time within which an upload's dates are believed.
type window struct {
	now, from, until time.Time
	revoked          bool // the key is revoked: until is its revocation
}

// believe returns when a scan dated at is taken as made; ok is false for a
// revoked key's scan not dated within its life.
func (w window) believe(at time.Time) (time.Time, bool) {
	switch {
	case !at.Before(w.from) && !at.After(w.until):
		return at, true
	case w.revoked:
		return time.Time{}, false
	}
	return w.now, true
}

// settle records one uploaded scan, in one transaction that holds the
// ticket's row: uploads of one ticket from several devices, and its live
// scans, settle one by one.
func (s *Service) settle(ctx context.Context, sc Scanner, w window, d DeviceScan) (Settled, error) {
	out := Settled{DeviceScanID: d.DeviceScanID}
	c, err := parseCode(d.Code)
	if err != nil {
		out.Result = Invalid // not a code at all: answered, not recorded
		return out, nil
	}
	// A replay is answered from what was stored for this device scan, before
	// the code sent this time is looked at.
	if replay, ok, err := uploaded(ctx, s.store.db, sc.KeyID, d.DeviceScanID); err != nil || ok {
		return replay, err
	}
	at, ok := w.believe(d.ScannedAt)
	if !ok {
		out.Result = KeyRevoked
		return out, nil
	}
	lookUp := true
	if c.signed {
		// Settled by the ticket the signature names, never by the code's
		// spelling; a respelling stands for its code only as a fact (the
		// device admitted someone with it), never as a request to admit.
		lookUp = c.canonical != "" && (!c.respelled || d.Offline)
		if lookUp {
			if lookUp, err = s.genuine(ctx, c); err != nil {
				return Settled{}, fmt.Errorf("scan: settle an uploaded scan: %w", err)
			}
		}
	}
	err = pgx.BeginFunc(ctx, s.store.db, func(tx pgx.Tx) error {
		var t ticketState
		if lookUp {
			if t, err = lockTicket(ctx, tx, sc.OrganizerID, sc.EventID, c); err != nil {
				return err
			}
		}
		r, rejected := classify(sc, t)
		switch {
		case rejected && r.Result != AlreadyScanned:
			out.Result, out.TicketID = r.Result, r.TicketID
		case t.scannedAt == nil:
			if err := admitAt(ctx, tx, t.ticketID, at); err != nil {
				return err
			}
			out.Result, out.TicketID = Admitted, t.ticketID
		case d.Offline && at.Before(*t.scannedAt):
			// An admission made offline before the recorded one: it is the
			// ticket's, and the recorded one becomes a conflict.
			if err := displace(ctx, tx, t.ticketID); err != nil {
				return err
			}
			if err := admitAt(ctx, tx, t.ticketID, at); err != nil {
				return err
			}
			out.Result, out.TicketID = Admitted, t.ticketID
		case d.Offline:
			out.Result, out.TicketID = Conflict, t.ticketID
		default:
			out.Result, out.TicketID = AlreadyScanned, t.ticketID
		}
		eventID := sc.EventID
		if t.found && t.mine {
			eventID = cmp.Or(eventID, t.eventID)
			out.FirstScannedAt = t.scannedAt
			if out.Result == Admitted {
				out.FirstScannedAt = &at
			}
		}
		if eventID == "" && c.claims.EventID != "" {
			if eventID, err = organizersEvent(ctx, tx, sc.OrganizerID, c.claims.EventID); err != nil {
				return err
			}
		}
		if eventID == "" {
			return nil // a code of no event of the organizer's: answered, not stored
		}
		return recordUpload(ctx, tx, sc, w, d, c, out, eventID, at)
	})
	if errors.Is(err, errUploadedMeanwhile) {
		replay, _, err := uploaded(ctx, s.store.db, sc.KeyID, d.DeviceScanID)
		if err != nil {
			return Settled{}, fmt.Errorf("scan: settle an uploaded scan: %w", err)
		}
		return replay, nil
	}
	if err != nil {
		return Settled{}, fmt.Errorf("scan: settle an uploaded scan: %w", err)
	}
	return out, nil
}

// errUploadedMeanwhile: the same device scan, uploaded at the same moment by a
// retry, was recorded first.
var errUploadedMeanwhile = errors.New("scan: the device scan was uploaded meanwhile")

// genuine checks a signed code's signature (of its canonical spelling) with
// its event's key.
func (s *Service) genuine(ctx context.Context, c code) (bool, error) {
	key, ok, err := s.keys.PublicOf(ctx, c.claims.EventID)
	if err != nil || !ok {
		return false, err
	}
	_, err = ticketsign.Verify(key, c.canonical)
	return err == nil, nil
}
