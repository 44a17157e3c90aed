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
	"github.com/stagedoor/stagedoor/internal/ids"
	"github.com/stagedoor/stagedoor/internal/text"
)

// MaxUpload is the most scans one upload carries.
const MaxUpload = 200

// maxClockAhead is how far in the future a device's clock may put a scan; a
// scan dated later is taken as made now.
const maxClockAhead = time.Minute

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
	Result       Result // Admitted, AlreadyScanned, Conflict, Invalid, WrongEvent or Revoked
	TicketID     string
	// FirstScannedAt is the ticket's admission, for AlreadyScanned and Conflict.
	FirstScannedAt *time.Time
	Replayed       bool // uploaded before: the answer of then
}

// Upload settles a device's scans in the order the device made them. A
// ticket's admission is its earliest: a scan admitted offline before the
// ticket's recorded admission takes its place (and the later one becomes a
// conflict in the audit), one after it is a conflict (someone got in twice),
// one the device did not admit is already_scanned. Each scan is recorded once
// per device scan id, whatever the retries.
func (s *Service) Upload(ctx context.Context, sc Scanner, scans []DeviceScan) ([]Settled, error) {
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
	out := make([]Settled, len(scans))
	now := time.Now()
	for _, i := range order {
		d := scans[i]
		if d.ScannedAt.IsZero() || d.ScannedAt.After(now.Add(maxClockAhead)) {
			d.ScannedAt = now
		}
		settled, err := s.settle(ctx, sc, d)
		if err != nil {
			return nil, err
		}
		out[i] = settled
	}
	return out, nil
}

// settle records one uploaded scan, in one transaction that holds the
// ticket's row: uploads of one ticket from several devices settle one by one.
func (s *Service) settle(ctx context.Context, sc Scanner, d DeviceScan) (Settled, error) {
	out := Settled{DeviceScanID: d.DeviceScanID}
	c, err := parseCode(d.Code)
	if err != nil {
		out.Result = Invalid // not a code at all: answered, not recorded
		return out, nil
	}
	err = pgx.BeginFunc(ctx, s.store.db, func(tx pgx.Tx) error {
		var t ticketState
		err := tx.QueryRow(ctx, `
			SELECT t.id::text, t.event_id::text, e.organizer_id = $2, t.scanned_at, t.revoked_at IS NOT NULL
			FROM tickets t JOIN events e ON e.id = t.event_id
			WHERE t.code = $1 FOR UPDATE OF t`, c.text, sc.OrganizerID).
			Scan(&t.ticketID, &t.eventID, &t.mine, &t.scannedAt, &t.revoked)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
		case err != nil:
			return err
		default:
			t.found = true
		}
		if replay, ok, err := uploaded(ctx, tx, sc.KeyID, d.DeviceScanID); err != nil || ok {
			out = replay
			out.FirstScannedAt = t.scannedAt
			return err
		}
		eventID := sc.EventID
		r, rejected := classify(sc, t)
		switch {
		case rejected && r.Result != AlreadyScanned:
			out.Result, out.TicketID = r.Result, r.TicketID
		case t.scannedAt == nil || d.ScannedAt.Before(*t.scannedAt):
			// The earliest admission wins; one recorded later becomes a conflict.
			if t.scannedAt != nil {
				if err := displace(ctx, tx, t.ticketID); err != nil {
					return err
				}
			}
			if _, err := tx.Exec(ctx, `UPDATE tickets SET scanned_at = $2 WHERE id = $1`, t.ticketID, d.ScannedAt); err != nil {
				return err
			}
			out.Result, out.TicketID = Admitted, t.ticketID
		case d.Offline:
			out.Result, out.TicketID = Conflict, t.ticketID
		default:
			out.Result, out.TicketID = AlreadyScanned, t.ticketID
		}
		if t.found && t.mine {
			eventID = cmp.Or(eventID, t.eventID)
			if out.Result != Admitted {
				out.FirstScannedAt = t.scannedAt
			} else {
				at := d.ScannedAt
				out.FirstScannedAt = &at
			}
		}
		tag, err := tx.Exec(ctx, `
			INSERT INTO scans (scanner_key_id, event_id, ticket_id, code_hash, code_prefix, result, scanned_at, device_scan_id, offline)
			VALUES ($1, NULLIF($2::text, '')::uuid, NULLIF($3::text, '')::uuid, $4, $5, $6, $7, $8, $9)
			ON CONFLICT (scanner_key_id, device_scan_id) WHERE device_scan_id IS NOT NULL DO NOTHING`,
			sc.KeyID, eventID, out.TicketID, c.hash, c.prefix, string(out.Result), d.ScannedAt, d.DeviceScanID, d.Offline)
		if err == nil && tag.RowsAffected() == 0 {
			return errUploadedMeanwhile // roll this one back: the other upload's answer stands
		}
		return err
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
// retry, was recorded first (only a code that is no ticket takes no row lock).
var errUploadedMeanwhile = errors.New("scan: the device scan was uploaded meanwhile")

// querier is a pool or a transaction.
type querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// uploaded reads what an earlier upload of this device scan settled, if any.
func uploaded(ctx context.Context, tx querier, keyID, deviceScanID string) (Settled, bool, error) {
	out := Settled{DeviceScanID: deviceScanID, Replayed: true}
	var ticketID *string
	err := tx.QueryRow(ctx, `
		SELECT result, ticket_id::text FROM scans WHERE scanner_key_id = $1 AND device_scan_id = $2`,
		keyID, deviceScanID).Scan(&out.Result, &ticketID)
	if errors.Is(err, pgx.ErrNoRows) {
		return Settled{}, false, nil
	}
	if err != nil {
		return Settled{}, false, err
	}
	if ticketID != nil {
		out.TicketID = *ticketID
	}
	return out, true, nil
}

// displace records, when an earlier offline admission takes the place of the
// ticket's recorded one, that the recorded one was a conflict after all.
func displace(ctx context.Context, tx pgx.Tx, ticketID string) error {
	_, err := tx.Exec(ctx, `
		INSERT INTO scans (scanner_key_id, event_id, ticket_id, code_hash, code_prefix, result, scanned_at, offline)
		SELECT scanner_key_id, event_id, ticket_id, code_hash, code_prefix, 'conflict', scanned_at, offline
		FROM scans WHERE ticket_id = $1 AND result = 'admitted'
		ORDER BY scanned_at DESC, id DESC LIMIT 1`, ticketID)
	return err
}

// Revocation is a ticket its organizer revoked, as a scanner learns of it.
type Revocation struct {
	ID        int64 // the list's order: ask for those after the last one seen
	TicketID  string
	EventID   string
	RevokedAt time.Time
}

// Revoke makes the organizer's ticket admit no one, online at once and offline
// once devices have synced the revocations. Revoking it again changes nothing;
// another organizer's ticket is errkind.NotFound.
func (s *Service) Revoke(ctx context.Context, organizerID, ticketID string) error {
	id, ok := ids.Parse(ticketID)
	if !ok {
		return errkind.NotFoundf("no such ticket of yours")
	}
	return pgx.BeginFunc(ctx, s.store.db, func(tx pgx.Tx) error {
		var eventID string
		var revoked bool
		err := tx.QueryRow(ctx, `
			SELECT t.event_id::text, t.revoked_at IS NOT NULL FROM tickets t JOIN events e ON e.id = t.event_id
			WHERE t.id = $1 AND e.organizer_id = $2 FOR UPDATE OF t`, id, organizerID).Scan(&eventID, &revoked)
		if errors.Is(err, pgx.ErrNoRows) {
			return errkind.NotFoundf("no such ticket of yours")
		}
		if err != nil || revoked {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE tickets SET revoked_at = now() WHERE id = $1`, id); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `INSERT INTO ticket_revocations (ticket_id, event_id) VALUES ($1, $2)`, id, eventID)
		return err
	})
}

// Revocations lists, in order, the revocations after the one numbered after
// that the scanner's key may see: of its event when bound, else of its
// organizer's events; at most limit.
func (s *Service) Revocations(ctx context.Context, sc Scanner, after int64, limit int) ([]Revocation, error) {
	rows, err := s.store.db.Query(ctx, `
		SELECT r.id, r.ticket_id::text, r.event_id::text, r.revoked_at
		FROM ticket_revocations r JOIN events e ON e.id = r.event_id
		WHERE r.id > $1 AND e.organizer_id = $2 AND ($3::text = '' OR r.event_id = NULLIF($3::text, '')::uuid)
		ORDER BY r.id LIMIT $4`, after, sc.OrganizerID, sc.EventID, limit)
	if err != nil {
		return nil, fmt.Errorf("scan: revocations: %w", err)
	}
	list, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Revocation, error) {
		var v Revocation
		err := r.Scan(&v.ID, &v.TicketID, &v.EventID, &v.RevokedAt)
		return v, err
	})
	if err != nil {
		return nil, fmt.Errorf("scan: revocations: %w", err)
	}
	return list, nil
}
