package scan

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// The SQL of uploads: each uploaded scan is settled in one transaction that
// holds its ticket's row (upload.go has the rules).

// lockTicket reads and locks the organizer's ticket of a code: a signed
// code's by the ticket id it names (its signature was checked), an older
// code's by the code, a reference's by the reference among the tickets of
// eventID (the scanner's; all the organizer's when empty). Another
// organizer's ticket reads as none, and is not locked.
func lockTicket(ctx context.Context, tx pgx.Tx, organizerID, eventID string, c code) (ticketState, error) {
	const sel = `SELECT t.id::text, t.event_id::text, true, t.scanned_at, t.revoked_at IS NOT NULL OR t.refund_status IS NOT NULL
		FROM tickets t JOIN events e ON e.id = t.event_id AND e.organizer_id = $1 `
	var row pgx.Row
	switch {
	case c.reference: // of the scanner's event(s) only, as online
		row = tx.QueryRow(ctx, sel+`WHERE t.reference = $2 AND ($3::text = '' OR t.event_id = NULLIF($3::text, '')::uuid) FOR UPDATE OF t`,
			organizerID, c.text, eventID)
	case c.signed:
		row = tx.QueryRow(ctx, sel+`WHERE t.id = $2::uuid AND t.event_id = $3::uuid FOR UPDATE OF t`,
			organizerID, c.claims.TicketID, c.claims.EventID)
	default:
		row = tx.QueryRow(ctx, sel+`WHERE t.code = $2 FOR UPDATE OF t`, organizerID, c.text)
	}
	t := ticketState{found: true}
	err := row.Scan(&t.ticketID, &t.eventID, &t.mine, &t.scannedAt, &t.revoked)
	if errors.Is(err, pgx.ErrNoRows) {
		return ticketState{}, nil
	}
	return t, err
}

// admitAt records the ticket's admission at: its scanned_at, and the admitted
// row of the audit that the caller inserts next.
func admitAt(ctx context.Context, tx pgx.Tx, ticketID string, at time.Time) error {
	_, err := tx.Exec(ctx, `UPDATE tickets SET scanned_at = $2 WHERE id = $1`, ticketID, at)
	return err
}

// organizersEvent returns eventID when it names an event of the organizer's,
// else "".
func organizersEvent(ctx context.Context, q querier, organizerID, eventID string) (string, error) {
	var mine bool
	err := q.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM events WHERE id = $1::uuid AND organizer_id = $2)`,
		eventID, organizerID).Scan(&mine)
	if err != nil || !mine {
		return "", err
	}
	return eventID, nil
}

// querier is a pool or a transaction.
type querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// uploaded reads what was stored for this device scan, if it was uploaded
// before: its result as it stands (an admission displaced since is a
// conflict), and for the organizer's own ticket (the only kind a row names)
// the ticket's admission.
func uploaded(ctx context.Context, q querier, keyID, deviceScanID string) (Settled, bool, error) {
	out := Settled{DeviceScanID: deviceScanID, Replayed: true}
	err := q.QueryRow(ctx, `
		SELECT s.result, coalesce(s.ticket_id::text, ''), t.scanned_at
		FROM scans s LEFT JOIN tickets t ON t.id = s.ticket_id
		WHERE s.scanner_key_id = $1 AND s.device_scan_id = $2`,
		keyID, deviceScanID).Scan(&out.Result, &out.TicketID, &out.FirstScannedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return Settled{}, false, nil
	}
	if err != nil {
		return Settled{}, false, err
	}
	return out, true, nil
}

// window reads the span within which the key's upload is believed: from the
// later of its creation and its newest uploaded scan whose date was believed,
// to now (PostgreSQL's clock, as the key's times are) or its revocation.
func (s store) window(ctx context.Context, sc Scanner) (window, error) {
	var w window
	var newest *time.Time
	err := s.db.QueryRow(ctx, `
		SELECT now(), k.created_at,
		       (SELECT max(u.scanned_at) FROM scans u
		        WHERE u.scanner_key_id = k.id AND u.device_scan_id IS NOT NULL AND u.scanned_at = u.device_scanned_at)
		FROM scanner_keys k WHERE k.id = $1`, sc.KeyID).Scan(&w.now, &w.from, &newest)
	if err != nil {
		return window{}, fmt.Errorf("scan: the key's window: %w", err)
	}
	if newest != nil && newest.After(w.from) {
		w.from = *newest
	}
	w.until = w.now
	if sc.KeyRevokedAt != nil {
		w.until, w.revoked = *sc.KeyRevokedAt, true
	}
	return w, nil
}

// displace makes the ticket's admitted audit row a conflict: an admission
// made offline before it takes its place.
func displace(ctx context.Context, tx pgx.Tx, ticketID string) error {
	_, err := tx.Exec(ctx, `UPDATE scans SET result = 'conflict' WHERE ticket_id = $1 AND result = 'admitted'`, ticketID)
	return err
}

// recordUpload writes the audit row of an uploaded scan, settled as out and
// taken as made at, listed under eventID. errUploadedMeanwhile when a retry of
// the same device scan was recorded first.
func recordUpload(ctx context.Context, tx pgx.Tx, sc Scanner, w window, d DeviceScan, c code, out Settled, eventID string, at time.Time) error {
	tag, err := tx.Exec(ctx, `
		INSERT INTO scans (scanner_key_id, event_id, ticket_id, code_hash, code_prefix, result, scanned_at,
		                   device_scan_id, offline, uploaded_after_key_revoked, device_scanned_at)
		VALUES ($1, $2::uuid, NULLIF($3::text, '')::uuid, $4, $5, $6, $7, $8, $9, $10, $11)
		ON CONFLICT (scanner_key_id, device_scan_id) WHERE device_scan_id IS NOT NULL DO NOTHING`,
		sc.KeyID, eventID, out.TicketID, c.hash, c.prefix, string(out.Result), at, d.DeviceScanID, d.Offline,
		w.revoked, d.ScannedAt)
	if err == nil && tag.RowsAffected() == 0 {
		return errUploadedMeanwhile // roll this one back: the other upload's answer stands
	}
	return err
}
