package scan

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/stagedoor/stagedoor/internal/event"
	"github.com/stagedoor/stagedoor/internal/hold"
	"github.com/stagedoor/stagedoor/internal/ids"
)

// TestReferencesAreCrockfordBase32: a drawn reference is 10 characters of the
// alphabet (no I, L, O, U), every character of which turns up; typed, a
// reference is read in either case, with hyphens and spaces, I and L as 1
// and O as 0, and nothing else is read as one (no ticket code either).
func TestReferencesAreCrockfordBase32(t *testing.T) {
	t.Parallel()
	seen := map[rune]int{}
	drawn := map[string]bool{}
	for range 5000 {
		r := randomReference()
		if len(r) != ReferenceLength || strings.ContainsAny(r, "ILOU") {
			t.Fatalf("drew %q: want 10 characters without I, L, O, U", r)
		}
		for _, c := range r {
			if !strings.ContainsRune(ReferenceAlphabet, c) {
				t.Fatalf("drew %q: %q is not Crockford base32", r, c)
			}
			seen[c]++
		}
		drawn[r] = true
	}
	if len(seen) != 32 {
		t.Errorf("5000 draws used %d characters, want all 32", len(seen))
	}
	for c, n := range seen { // 50,000 characters: about 1,562 each
		if n < 1300 || n > 1850 {
			t.Errorf("%q drawn %d times in 50,000, want about 1,562 (uniform)", c, n)
		}
	}
	if len(drawn) != 5000 {
		t.Errorf("5000 draws gave %d different references", len(drawn))
	}
	for typed, want := range map[string]string{
		"7KQ40M2X9P":       "7KQ40M2X9P",
		"7kq4-0m2x-9p":     "7KQ40M2X9P",
		" 7KQ4 0M2X 9P \n": "7KQ40M2X9P",
		"7KQ4-OM2X-9P":     "7KQ40M2X9P", // O read as 0
		"iL34-5678-9A":     "113456789A",
	} {
		if got, ok := NormalizeReference(typed); !ok || got != want {
			t.Errorf("NormalizeReference(%q) = %q, %v; want %q", typed, got, ok, want)
		}
	}
	for _, bad := range []string{"", "7KQ4-0M2X-9", "7KQ4-0M2X-9PA", "7KQ4-UM2X-9P", "7KQ4_0M2X_9P", "ÄKQ40M2X9P",
		"SD1AAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "Y4J6FN35FCCKJ3RP5RTCPIXGMUYCRI2U", strings.Repeat("-", 100) + "7KQ40M2X9P"} {
		if got, ok := NormalizeReference(bad); ok {
			t.Errorf("NormalizeReference(%q) = %q, want no reference", bad, got)
		}
	}
	if got := ShowReference("7KQ40M2X9P"); got != "7KQ4-0M2X-9P" {
		t.Errorf("ShowReference = %q, want 7KQ4-0M2X-9P", got)
	}
}

// referenceOf reads a ticket's reference.
func (d *door) referenceOf(t *testing.T, ticketID string) string {
	t.Helper()
	var ref string
	if err := d.db.QueryRow(context.Background(), `SELECT reference FROM tickets WHERE id = $1`, ticketID).Scan(&ref); err != nil {
		t.Fatal(err)
	}
	return ref
}

// TestIssuedTicketsGetUniqueReferencesUnderARace: eight buyers buy at once,
// forty tickets issued in eight concurrent transactions: each ticket has a
// well-formed reference, all different, as TicketsOf lists them.
func TestIssuedTicketsGetUniqueReferencesUnderARace(t *testing.T) {
	t.Parallel()
	d := newDoor(t)
	ctx := context.Background()
	events := event.NewService(d.db, hold.CreateSeats)
	ev, err := events.Create(ctx, event.Draft{OrganizerID: d.organizer, Name: "Rush", Venue: "Hall",
		StartsAt: time.Now().Add(24 * time.Hour), Sections: []event.Section{{Name: "Floor", Rows: 4, SeatsPerRow: 10, PriceCents: 100}}})
	if err != nil {
		t.Fatal(err)
	}
	m, err := events.SeatMap(ctx, ev.ID)
	if err != nil {
		t.Fatal(err)
	}
	holds := hold.NewService(d.db, events, time.Minute, 10)
	const buyers = 8
	var wg sync.WaitGroup
	start := make(chan struct{})
	buyerIDs := make([]string, buyers)
	for g := range buyers {
		buyerIDs[g] = d.newBuyer(t).ID
		seats := make([]string, 0, 5)
		for _, s := range m.Seats[g*5 : g*5+5] {
			seats = append(seats, s.ID)
		}
		buyer := *d
		buyer.buyer = buyerIDs[g]
		wg.Go(func() {
			<-start
			if _, _, _, err := buyer.tryBuy(holds, ev.ID, seats); err != nil {
				t.Error(err)
			}
		})
	}
	close(start)
	wg.Wait()
	refs := map[string]bool{}
	for _, b := range buyerIDs {
		tickets, err := TicketsOf(ctx, d.db, b, "")
		if err != nil {
			t.Fatal(err)
		}
		if len(tickets) != 5 {
			t.Fatalf("buyer has %d tickets, want 5", len(tickets))
		}
		for _, tk := range tickets {
			if n, ok := NormalizeReference(tk.Reference); !ok || n != tk.Reference {
				t.Errorf("ticket %s has reference %q, not one as issued", tk.ID, tk.Reference)
			}
			refs[tk.Reference] = true
		}
	}
	if len(refs) != buyers*5 {
		t.Errorf("%d tickets have %d different references", buyers*5, len(refs))
	}
}

// TestAReferenceTakenIsDrawnAgain: when the references drawn are another
// ticket's (forced here: each draw of the first three is a ticket's
// reference already issued, or one drawn for another ticket of the same
// order), the tickets are issued all the same, each with a reference of its
// own, in the caller's transaction that goes on. Not parallel: it changes the
// package's draw.
func TestAReferenceTakenIsDrawnAgain(t *testing.T) {
	d := newDoor(t)
	taken := d.referenceOf(t, d.tickets[0][0])
	var n atomic.Int64
	newReference = func() string {
		if i := n.Add(1); i <= 3 {
			return taken
		} else if i <= 5 {
			return "ZZZZZZZZZZ" // twice in one statement: one of them draws again
		}
		return randomReference()
	}
	t.Cleanup(func() { newReference = randomReference })
	ctx := context.Background()
	events := event.NewService(d.db, hold.CreateSeats)
	ev, err := events.Create(ctx, event.Draft{OrganizerID: d.organizer, Name: "Again", Venue: "Hall",
		StartsAt: time.Now().Add(24 * time.Hour), Sections: []event.Section{{Name: "Floor", Rows: 1, SeatsPerRow: 3, PriceCents: 100}}})
	if err != nil {
		t.Fatal(err)
	}
	m, err := events.SeatMap(ctx, ev.ID)
	if err != nil {
		t.Fatal(err)
	}
	seats := []string{m.Seats[0].ID, m.Seats[1].ID, m.Seats[2].ID}
	_, ticketIDs, _, err := d.tryBuy(hold.NewService(d.db, events, time.Minute, 10), ev.ID, seats)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, id := range ticketIDs {
		got[d.referenceOf(t, id)] = true
	}
	if len(got) != 3 || got[taken] || !got["ZZZZZZZZZZ"] {
		t.Errorf("references %v: want 3 different, ZZZZZZZZZZ one of them, none %s", got, taken)
	}
	if n.Load() < 7 {
		t.Errorf("%d draws, want at least 7 (3 taken, 1 twice, 3 kept)", n.Load())
	}
}

// tryBuy is buy with its error returned (for goroutines); it checks that
// IssueTickets gave every ticket a reference.
func (d *door) tryBuy(holds *hold.Service, eventID string, seatIDs []string) (orderID string, ticketIDs, codes []string, err error) {
	ctx := context.Background()
	p, err := holds.Plan(ctx, d.buyer, eventID, seatIDs)
	if err != nil {
		return "", nil, nil, err
	}
	h, err := holds.Place(ctx, p)
	if err != nil {
		return "", nil, nil, err
	}
	orderID = ids.New()
	err = pgx.BeginFunc(ctx, d.db, func(tx pgx.Tx) error {
		if _, err := hold.BeginCheckout(ctx, tx, d.buyer, h.ID); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `
			INSERT INTO orders (id, buyer_id, hold_id, event_id, status, total_cents, currency, charge_id, charge_deadline)
			VALUES ($1, $2, $3, $4, 'confirmed', $5, $6, $7, now())`,
			orderID, d.buyer, h.ID, eventID, h.TotalCents, h.Currency, "ch_"+orderID); err != nil {
			return err
		}
		sold, err := hold.EndCheckout(ctx, tx, h.ID, hold.Converted)
		if err != nil {
			return err
		}
		issued := make([]NewTicket, len(sold))
		for i, seat := range sold {
			issued[i] = NewTicket{ID: ids.New(), SeatID: seat, Code: "CODE" + ids.New()}
			ticketIDs, codes = append(ticketIDs, issued[i].ID), append(codes, issued[i].Code)
		}
		if err := IssueTickets(ctx, tx, orderID, d.buyer, eventID, issued); err != nil {
			return err
		}
		for _, tk := range issued {
			if len(tk.Reference) != ReferenceLength {
				return fmt.Errorf("IssueTickets set reference %q", tk.Reference)
			}
		}
		return nil
	})
	return orderID, ticketIDs, codes, err
}

// TestAReferenceAdmitsOnceUnderARace: many devices type one ticket's reference
// at the same moment, in different spellings, through keys bound and unbound:
// exactly one admits it (the admission names the reference), every other
// hears already_scanned, and its code then is already scanned too. The audit
// has one admitted row, and lists each attempt with the reference and seat.
func TestAReferenceAdmitsOnceUnderARace(t *testing.T) {
	t.Parallel()
	d := newDoor(t)
	ctx := context.Background()
	ref := d.referenceOf(t, d.tickets[0][1])
	spellings := []string{ref, strings.ToLower(ShowReference(ref)), " " + ref[:5] + " " + ref[5:] + " "}
	scanners := []Scanner{d.scanner(t, d.events[0]), d.scanner(t, "")}
	const devices = 24
	admitted, rejected := d.scanAtOnce(t, scanners, devices, func(i int) string { return spellings[i%3] })
	if len(admitted) != 1 || len(rejected) != devices-1 {
		t.Fatalf("%d admitted, %d refused; want 1 and %d", len(admitted), len(rejected), devices-1)
	}
	if a := admitted[0]; a.TicketID != d.tickets[0][1] || a.Reference != ref || a.Seat.Row != "A" || a.Seat.Number != 2 {
		t.Errorf("admission %+v, want ticket %s (%s) at A2", a, d.tickets[0][1], ref)
	}
	for _, r := range rejected {
		if r.Result != AlreadyScanned || r.TicketID != d.tickets[0][1] {
			t.Errorf("rejection %+v, want already_scanned of ticket %s", r, d.tickets[0][1])
		}
	}
	if _, err := d.scans.Scan(ctx, scanners[0], d.codes[0][1]); !errors.Is(err, ErrAlreadyScanned) {
		t.Errorf("its code after its reference: %v, want already scanned", err)
	}
	if n := d.admittedRows(t, d.tickets[0][1]); n != 1 {
		t.Errorf("%d admitted rows, want 1", n)
	}
	page, err := d.scans.Attempts(ctx, d.organizer, d.events[0], MaxPageSize, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Attempts) != devices+1 {
		t.Fatalf("the audit lists %d attempts, want %d", len(page.Attempts), devices+1)
	}
	for _, a := range page.Attempts {
		if a.Reference != ref || a.Seat != (Seat{Section: "Floor", Row: "A", Number: 2}) {
			t.Errorf("audit row %+v, want reference %s and seat Floor A2", a, ref)
		}
	}
}

// TestAReferenceIsFoundAtItsOwnEventOnly: a key bound to one event finds no
// reference of the organizer's other event (invalid, naming no ticket, and
// admitting nothing), nor does another organizer's key; an unbound key of the
// organizer admits it. A revoked ticket's reference is revoked; a transferred
// ticket's successor has a new reference, and the old one admits no one.
// Offline, the list a key syncs holds the references of its event's tickets
// that admit, and an uploaded typed reference admits as online.
func TestAReferenceIsFoundAtItsOwnEventOnly(t *testing.T) {
	t.Parallel()
	d := newDoor(t)
	ctx := context.Background()
	bound := d.scanner(t, d.events[0])
	other := d.referenceOf(t, d.tickets[1][0])
	_, err := d.scans.Scan(ctx, bound, other)
	var r *Rejection
	if !errors.As(err, &r) || r.Result != Invalid || r.TicketID != "" || r.EventID != "" {
		t.Errorf("another event's reference at a bound key: %v (%+v), want invalid naming nothing", err, r)
	}
	stranger := newDoor(t)
	if _, err := stranger.scans.Scan(ctx, stranger.scanner(t, ""), other); !errors.Is(err, ErrInvalid) {
		t.Errorf("another organizer's key: %v, want invalid", err)
	}
	if a, err := d.scans.Scan(ctx, d.scanner(t, ""), strings.ToLower(other)); err != nil || a.TicketID != d.tickets[1][0] {
		t.Errorf("an unbound key: %+v, %v; want ticket %s admitted", a, err, d.tickets[1][0])
	}

	if err := d.scans.Revoke(ctx, d.organizer, d.tickets[0][2]); err != nil {
		t.Fatal(err)
	}
	if _, err := d.scans.Scan(ctx, bound, d.referenceOf(t, d.tickets[0][2])); !errors.Is(err, ErrRevoked) {
		t.Errorf("a revoked ticket's reference: %v, want revoked", err)
	}
	friend := d.newBuyer(t)
	oldRef := d.referenceOf(t, d.tickets[0][3])
	moved, err := d.scans.Transfer(ctx, Transfer{HolderID: d.buyer, TicketID: d.tickets[0][3], Email: friend.Email})
	if err != nil {
		t.Fatal(err)
	}
	if moved.Old.Reference != oldRef || moved.New.Reference == "" || moved.New.Reference == oldRef || d.referenceOf(t, moved.New.ID) != moved.New.Reference {
		t.Errorf("the transferred ticket's reference %q (was %q, answered %q), want a new one, stored", moved.New.Reference, oldRef, moved.Old.Reference)
	}
	if _, err := d.scans.Scan(ctx, bound, oldRef); !errors.Is(err, ErrRevoked) {
		t.Errorf("the given ticket's old reference: %v, want revoked", err)
	}

	list, err := d.scans.Listed(ctx, bound, "", 2)
	if err != nil {
		t.Fatal(err)
	}
	more, err := d.scans.Listed(ctx, bound, list[len(list)-1].TicketID, 1000)
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]Listed{}
	for _, l := range append(list, more...) {
		listed[l.Reference] = l
	}
	want := []string{d.referenceOf(t, d.tickets[0][0]), d.referenceOf(t, d.tickets[0][1]), moved.New.Reference}
	if len(listed) != len(want) {
		t.Errorf("the bound key's list has %d tickets, want %d (not the revoked, given or other event's): %v", len(listed), len(want), listed)
	}
	for i, ref := range want {
		if l, ok := listed[ref]; !ok || l.EventID != d.events[0] || l.Seat.Section != "Floor" {
			t.Errorf("listed[%d] %s: %+v, %v", i, ref, l, ok)
		}
	}
	if _, err := d.scans.Listed(ctx, bound, "not-an-id", 10); err == nil {
		t.Error("Listed after junk: no error")
	}

	settled, err := d.scans.Upload(ctx, bound, []DeviceScan{
		{DeviceScanID: "a", Code: ShowReference(want[0]), ScannedAt: time.Now().Add(-time.Second), Offline: true},
		{DeviceScanID: "b", Code: other, ScannedAt: time.Now().Add(-time.Second), Offline: true},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if settled[0].Result != Admitted || settled[0].TicketID != d.tickets[0][0] {
		t.Errorf("an uploaded reference: %+v, want admitted", settled[0])
	}
	if settled[1].Result != Invalid || settled[1].TicketID != "" {
		t.Errorf("an uploaded reference of another event: %+v, want invalid naming nothing", settled[1])
	}
}
