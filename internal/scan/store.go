package scan

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/stagedoor/stagedoor/internal/ticketsign"
)

// store is the SQL of scans: the admission of tickets and the audit. Ids
// reaching it are valid UUIDs.
type store struct {
	db *pgxpool.Pool
}

// code is a scanned code as the store needs it: the code itself for the lookup,
// its SHA-256 and prefix for the audit, and what a signed code says.
type code struct {
	text   string
	hash   []byte
	prefix string
	// signed: the code starts with ticketsign.Prefix. canonical is then the
	// code it spells (itself unless respelled), empty when it is malformed;
	// claims are canonical's.
	signed    bool
	canonical string
	respelled bool
	claims    ticketsign.Claims
	// reference: text is a ticket's short reference (reference.go), as
	// normalized; it is looked up in the scanner's events only.
	reference bool
}

// lookup is the condition on tickets t that finds the ticket of the code $1.
func (c code) lookup() string {
	if c.reference {
		return "t.reference = $1"
	}
	return "t.code = $1"
}

// wellFormed: a signed code as it was issued (not respelled, not malformed).
func (c code) wellFormed() bool { return c.canonical != "" && !c.respelled }

// admit is the one conditional write: the ticket with this code is admitted if
// it was never scanned, its event is the scanner's organizer's and, when the key
// is bound, it is for the key's event, and it is neither revoked nor pending a
// refund (see HoldForRefund). Many concurrent scans of one ticket queue
// on its row lock and re-check scanned_at when they get it, so exactly one of
// them updates. The admission and its audit row are one statement. ok is false
// when nothing was admitted.
func (s store) admit(ctx context.Context, sc Scanner, c code) (a Admission, ok bool, err error) {
	err = s.db.QueryRow(ctx, `
		WITH admitted AS (
		    UPDATE tickets t SET scanned_at = now()
		    FROM events e
		    WHERE `+c.lookup()+` AND t.scanned_at IS NULL AND t.revoked_at IS NULL AND t.refund_status IS NULL
		      AND e.id = t.event_id AND e.organizer_id = $2
		      AND ($3::text = '' OR t.event_id = NULLIF($3::text, '')::uuid)
		    RETURNING t.id, t.event_id, t.seat_id, t.reference, t.scanned_at
		), audit AS (
		    INSERT INTO scans (scanner_key_id, event_id, ticket_id, code_hash, code_prefix, result, scanned_at)
		    SELECT $4, event_id, id, $5, $6, 'admitted', scanned_at FROM admitted
		)
		SELECT a.id::text, a.event_id::text, a.reference, s.section, s.row_label, s.number, a.scanned_at
		FROM admitted a JOIN seats s ON s.id = a.seat_id`,
		c.text, sc.OrganizerID, sc.EventID, sc.KeyID, c.hash, c.prefix).
		Scan(&a.TicketID, &a.EventID, &a.Reference, &a.Seat.Section, &a.Seat.Row, &a.Seat.Number, &a.ScannedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return Admission{}, false, nil
	}
	if err != nil {
		return Admission{}, false, fmt.Errorf("scan: admit: %w", err)
	}
	return a, true, nil
}

// ticket reads the ticket with this code after a scan that admitted nothing. It
// runs as a statement of its own, so under READ COMMITTED it sees the admission
// that made the conditional write skip. A reference is looked up in the
// scanner's event only (its organizer's when the key is unbound): another
// event's reads as none, so typing references tells nothing about other events.
func (s store) ticket(ctx context.Context, sc Scanner, c code) (ticketState, error) {
	t := ticketState{found: true}
	scope, args := "", []any{c.text, sc.OrganizerID}
	if c.reference {
		scope = ` AND e.organizer_id = $2 AND ($3::text = '' OR t.event_id = NULLIF($3::text, '')::uuid)`
		args = append(args, sc.EventID)
	}
	err := s.db.QueryRow(ctx, `
		SELECT t.id::text, t.event_id::text, e.organizer_id = $2, t.scanned_at,
		       t.revoked_at IS NOT NULL OR t.refund_status IS NOT NULL
		FROM tickets t JOIN events e ON e.id = t.event_id
		WHERE `+c.lookup()+scope, args...).
		Scan(&t.ticketID, &t.eventID, &t.mine, &t.scannedAt, &t.revoked)
	if errors.Is(err, pgx.ErrNoRows) {
		return ticketState{}, nil
	}
	if err != nil {
		return ticketState{}, fmt.Errorf("scan: read ticket: %w", err)
	}
	return t, nil
}

// record writes the audit row of a scan that admitted nothing. The attempt is
// listed under the key's event, else the ticket's when it is the organizer's,
// else the event a signed code names when it is the organizer's; else it
// belongs to no event that anyone can read, and is not stored.
func (s store) record(ctx context.Context, sc Scanner, c code, r Rejection) error {
	eventID := cmp.Or(sc.EventID, r.EventID, c.claims.EventID)
	if eventID == "" {
		return nil
	}
	_, err := s.db.Exec(ctx, `
		INSERT INTO scans (scanner_key_id, event_id, ticket_id, code_hash, code_prefix, result)
		SELECT $1, e.id, NULLIF($3::text, '')::uuid, $4, $5, $6
		FROM events e WHERE e.id = $2::uuid AND e.organizer_id = $7`,
		sc.KeyID, eventID, r.TicketID, c.hash, c.prefix, string(r.Result), sc.OrganizerID)
	if err != nil {
		return fmt.Errorf("scan: record attempt: %w", err)
	}
	return nil
}

// attempts returns a page of the event's audit, newest first, when the event is
// the organizer's; an errkind.NotFound error otherwise.
func (s store) attempts(ctx context.Context, organizerID, eventID string, limit int, before int64) (Page, error) {
	var mine bool
	if err := s.db.QueryRow(ctx, `
		SELECT EXISTS (SELECT 1 FROM events WHERE id = $1 AND organizer_id = $2)`,
		eventID, organizerID).Scan(&mine); err != nil {
		return Page{}, fmt.Errorf("scan: read event: %w", err)
	}
	if !mine {
		return Page{}, errNotFound
	}
	rows, err := s.db.Query(ctx, `
		SELECT sc.id, sc.scanner_key_id::text, k.label, coalesce(sc.ticket_id::text, ''),
		       sc.code_prefix, sc.result, sc.scanned_at, sc.offline, sc.uploaded_after_key_revoked,
		       CASE WHEN sc.device_scanned_at <> sc.scanned_at THEN sc.device_scanned_at END,
		       coalesce(t.reference, ''), coalesce(s.section, ''), coalesce(s.row_label, ''), coalesce(s.number, 0)
		FROM scans sc JOIN scanner_keys k ON k.id = sc.scanner_key_id
		LEFT JOIN tickets t ON t.id = sc.ticket_id LEFT JOIN seats s ON s.id = t.seat_id
		WHERE sc.event_id = $1 AND sc.id < $2
		ORDER BY sc.id DESC LIMIT $3`, eventID, before, limit+1)
	if err != nil {
		return Page{}, fmt.Errorf("scan: list attempts: %w", err)
	}
	attempts, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (Attempt, error) {
		var a Attempt
		var id int64
		err := row.Scan(&id, &a.ScannerKeyID, &a.ScannerLabel, &a.TicketID, &a.CodePrefix, &a.Result, &a.ScannedAt, &a.Offline, &a.AfterKeyRevoked, &a.DeviceScannedAt,
			&a.Reference, &a.Seat.Section, &a.Seat.Row, &a.Seat.Number)
		a.ID = strconv.FormatInt(id, 10)
		return a, err
	})
	if err != nil {
		return Page{}, fmt.Errorf("scan: list attempts: %w", err)
	}
	page := Page{Attempts: attempts}
	if len(attempts) > limit {
		page.Attempts = attempts[:limit]
		page.NextBefore = page.Attempts[limit-1].ID
	}
	return page, nil
}
