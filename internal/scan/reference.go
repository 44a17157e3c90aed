package scan

import (
	"context"
	"crypto/rand"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
)

// A ticket's reference is its short name for people: ReferenceLength
// characters of Crockford's base32 (ReferenceAlphabet: the digits and the
// letters but I, L, O and U), 50 random bits from crypto/rand, unique among
// all tickets (tickets_reference_key). It is printed under the ticket's QR
// code, shown grouped as 7KQ4-M2X9-PA (ShowReference), and the door may type
// it instead of scanning the code: a scanner key finds only a reference of its
// own event (of its organizer's events when unbound). Typed, it is read as
// Crockford's base32 is: case aside, hyphens and spaces dropped, I and L read
// as 1, O as 0 (NormalizeReference).

// ReferenceAlphabet is Crockford's base32: a character's index is its value.
const ReferenceAlphabet = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

// ReferenceLength is how many characters a reference has: 50 bits.
const ReferenceLength = 10

// newReference draws a reference; a variable so that a test can make a
// collision happen.
var newReference = randomReference

// randomReference returns ReferenceLength characters drawn uniformly from
// ReferenceAlphabet: each the low 5 bits of a random byte (256 is a multiple
// of 32).
func randomReference() string {
	b := make([]byte, ReferenceLength)
	_, _ = rand.Read(b) // crypto/rand does not fail on supported platforms
	for i := range b {
		b[i] = ReferenceAlphabet[b[i]&31]
	}
	return string(b)
}

// NormalizeReference reads a typed reference as the one it means, and ok is
// false when the text is not one: its letters are taken in either case, the
// hyphens and spaces between them dropped, I and L read as 1 and O as 0 (as
// Crockford's base32 reads them); then it must be ReferenceLength characters
// of ReferenceAlphabet. No ticket's code is read as a reference: they are
// far longer.
func NormalizeReference(typed string) (ref string, ok bool) {
	typed = strings.TrimSpace(typed)
	if len(typed) > 3*ReferenceLength {
		return "", false
	}
	var b strings.Builder
	for _, r := range strings.ToUpper(typed) {
		switch {
		case r == '-' || r == ' ':
			continue
		case r == 'I' || r == 'L':
			r = '1'
		case r == 'O':
			r = '0'
		}
		if !strings.ContainsRune(ReferenceAlphabet, r) {
			return "", false
		}
		b.WriteRune(r)
	}
	if b.Len() != ReferenceLength {
		return "", false
	}
	return b.String(), true
}

// ShowReference groups a reference as people read it: 7KQ4-M2X9-PA.
func ShowReference(ref string) string {
	if len(ref) != ReferenceLength {
		return ref
	}
	return ref[:4] + "-" + ref[4:8] + "-" + ref[8:]
}

// maxReferenceDraws bounds the draws for one ticket: with 2^50 references a
// collision is already rare; eight in a row do not happen.
const maxReferenceDraws = 8

// newTicketRow is a ticket to insert, its Reference drawn by insertTickets.
type newTicketRow struct {
	NewTicket
	TransferredFrom string // the ticket it replaces, for a transfer's
}

// insertTickets inserts the tickets of an order in tx, each with a reference
// it draws: the rows whose reference another ticket has (ON CONFLICT … DO
// NOTHING leaves them out without failing the caller's transaction, also when
// that ticket is being issued concurrently) draw again. It sets the
// references of rows.
func insertTickets(ctx context.Context, tx pgx.Tx, orderID, buyerID, eventID string, rows []newTicketRow) error {
	pending := make([]int, len(rows))
	for i := range rows {
		pending[i] = i
	}
	for range maxReferenceDraws {
		n := len(pending)
		ticketIDs, seatIDs, codes, refs, from := make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
		for j, i := range pending {
			rows[i].Reference = newReference()
			ticketIDs[j], seatIDs[j], codes[j], refs[j], from[j] = rows[i].ID, rows[i].SeatID, rows[i].Code, rows[i].Reference, rows[i].TransferredFrom
		}
		r, err := tx.Query(ctx, `
			INSERT INTO tickets (id, order_id, buyer_id, event_id, seat_id, code, reference, transferred_from)
			SELECT t.id, $1, $2, $3, t.seat_id, t.code, t.reference, NULLIF(t.transferred_from, '')::uuid
			FROM unnest($4::uuid[], $5::uuid[], $6::text[], $7::text[], $8::text[]) AS t (id, seat_id, code, reference, transferred_from)
			ON CONFLICT (reference) DO NOTHING
			RETURNING id::text`, orderID, buyerID, eventID, ticketIDs, seatIDs, codes, refs, from)
		if err != nil {
			return err
		}
		inserted, err := pgx.CollectRows(r, pgx.RowTo[string])
		if err != nil {
			return err
		}
		done := make(map[string]bool, len(inserted))
		for _, id := range inserted {
			done[id] = true
		}
		left := pending[:0]
		for _, i := range pending {
			if !done[rows[i].ID] {
				left = append(left, i)
			}
		}
		if pending = left; len(pending) == 0 {
			return nil
		}
	}
	return fmt.Errorf("scan: no free reference in %d draws", maxReferenceDraws)
}
